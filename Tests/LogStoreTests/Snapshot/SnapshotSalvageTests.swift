// Recovering a store whose snapshot has a damaged block: every other block,
// the journal after the snapshot, and the keys already given out are kept.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Snapshot salvage")
struct SnapshotSalvageTests {
    /// The keys of block `number` of `index`, by entity name.
    static func keys(ofBlock number: Int, in index: SnapshotIndex) -> [String: [UInt64]] {
        var cursor = BlockCursor(index.blocks)
        var keys: [String: [UInt64]] = [:]
        for entity in index.entities {
            for key in entity.keys where cursor.next().block == number { keys[entity.name, default: []].append(key) }
        }
        return keys
    }

    /// Flips a bit in the middle of block `number`'s payload; returns the
    /// keys of the counters it holds, which are lost with it.
    static func damageBlock(_ number: Int, of path: String, in index: SnapshotIndex) throws -> [UInt64] {
        let block = index.blocks[number]
        try StoreFileSurgery(path: path).flipBit(at: Int(block.offset) + 40 + Int(block.storedSize) / 2, bit: 3)
        return try #require(keys(ofBlock: number, in: index)["Counter"])
    }

    /// After the compaction of ``SnapshotDamageTests/withCompactedStore(_:)``,
    /// saves three transactions: one changing a counter of block 1 and one
    /// of block 10, one inserting a counter that points at a new group, and
    /// one deleting a counter of block 10. Returns the keys it touched.
    static func saveAfterSnapshot(path: String, model: Model, index: SnapshotIndex) throws -> (lost: UInt64, changed: UInt64, deleted: UInt64, inserted: UInt64) {
        let store = try Store(path: path, model: model, options: CounterModel.manual)
        defer { store.close() }
        let context = store.newContext()
        let lost = try #require(keys(ofBlock: 0, in: index)["Counter"]?.first)
        let kept = try #require(keys(ofBlock: 10, in: index)["Counter"])
        let (changed, deleted) = (kept[0], kept[1])
        try context.existingObject(with: store.id("Counter", lost))["value"] = Int64(-1)
        try context.existingObject(with: store.id("Counter", changed))["value"] = Int64(-2)
        try context.save()
        let group = try context.insert("Group")
        group["title"] = "added after the snapshot"
        let counter = try context.insert("Counter")
        counter["name"] = "added"
        counter["group"] = group
        try context.save()
        try context.delete(try context.existingObject(with: store.id("Counter", deleted)))
        try context.save()
        return (lost, changed, deleted, counter.objectID.key)
    }

    @Test("recover with one damaged snapshot block keeps every other block and the journal after it, and lists the lost keys")
    func recoverKeepsOtherBlocks() throws {
        try SnapshotDamageTests.withCompactedStore { path, model, index in
            let saved = try Self.saveAfterSnapshot(path: path, model: model, index: index)
            let lostKeys = try Self.damageBlock(0, of: path, in: index)

            let output = path + ".recovered"
            let recovery = try StoreInspector.recover(path: path, to: output)
            #expect(recovery.lostRecords == [LostRecords(entity: "Counter", keys: [lostKeys.first!...lostKeys.last!], count: lostKeys.count)])
            #expect(recovery.snapshotRecordsLost == lostKeys.count)
            #expect(recovery.snapshotRecordsKept == 5_000 - lostKeys.count)
            #expect(recovery.droppedChanges == 1, "the change to a counter of the damaged block")
            #expect(recovery.lostTransactions == 0)
            #expect(!recovery.isComplete)

            let store = try Store(path: output, model: model, options: CounterModel.manual)
            defer { store.close() }
            let recovered = contents(of: store)
            let counters = try #require(recovered["Counter"])
            #expect(counters.count == 5_000 - lostKeys.count - 1 + 1)
            #expect(lostKeys.allSatisfy { counters[$0] == nil })
            #expect(counters[saved.changed]?[1] == .int64(-2), "a change saved after the snapshot is kept")
            #expect(counters[saved.deleted] == nil, "a delete saved after the snapshot is kept")
            #expect(counters[saved.inserted]?[0] == .string("added"))
            #expect(recovered["Group"]?.count == 1)

            // A key given out before the damage is never given out again.
            let context = store.newContext()
            let next = try context.insert("Counter")
            next["name"] = "after recovery"
            try context.save()
            #expect(next.objectID.key > saved.inserted)
            #expect(next.objectID.key >= index.entities[0].nextKey)
        }
    }
}

extension SnapshotSalvageTests {
    @Test("Opening with .salvage rewrites a store with a damaged snapshot block: the other blocks and the journal are kept, the damaged file is kept aside")
    func salvageOpensSnapshotDamage() throws {
        try SnapshotDamageTests.withCompactedStore { path, model, index in
            let saved = try Self.saveAfterSnapshot(path: path, model: model, index: index)
            let block = index.blocks[3]
            let lostKeys = try Self.damageBlock(3, of: path, in: index)
            let damaged = try StoreFileSurgery(path: path).bytes
            // Another name of the store file, made before the salvage.
            let alias = path + ".alias"
            try FileManager.default.linkItem(atPath: path, toPath: alias)
            // A store shared with a group stays so once salvaged.
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)

            let options = JournalOptions(durability: .deferredToOS, recoveryMode: .salvage, compaction: .manual)
            do {
                let store = try Store(path: path, model: model, options: options)
                defer { store.close() }
                let report = store.recovery
                #expect(report.outcome == .salvaged)
                #expect(report.lostRecords == [LostRecords(entity: "Counter", keys: [lostKeys.first!...lostKeys.last!], count: lostKeys.count)])
                #expect(report.droppedOffset == block.offset)
                #expect(report.reason?.contains("snapshot block 4") == true, "\(report)")
                let aside = try #require(report.preservedDamagePath)
                #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o640)
                let kept = try JournalFixtures.read(aside)
                #expect(kept[FileLayout.headerSize...] == damaged[FileLayout.headerSize...], "the damaged file is kept whole")
                // Its header says the store went on in another file: a writer
                // reaching it through another name is refused, a reader reads it.
                #expect(try StoreInspector.info(path: aside).isReplaced && !StoreInspector.info(path: path).isReplaced)
                let error = #expect(throws: LogStoreError.self) { let other = try Journal(path: alias); other.close() }
                #expect(error?.kind == .storeReplaced, "\(String(describing: error))")
                let reader = try Store(path: alias, model: model, options: JournalOptions(access: .readOnly, recoveryMode: .salvage))
                #expect(reader.recovery.outcome == .salvaged)
                reader.close()
                let counters = try #require(contents(of: store)["Counter"])
                #expect(counters.count == 5_000 - lostKeys.count)
                #expect(counters[saved.changed]?[1] == .int64(-2))
                #expect(counters[saved.inserted] != nil)
            }
            // The store is whole now: a strict open reads it.
            let store = try Store(path: path, model: model, options: CounterModel.manual)
            defer { store.close() }
            #expect(store.recovery.outcome == .clean)
            #expect(contents(of: store)["Counter"]?.count == 5_000 - lostKeys.count)
        }
    }
}

extension SnapshotSalvageTests {
    /// The system's file system, except that one kind of call fails with EIO.
    struct FailingCall: FileSystem {
        let system = SystemFileSystem()
        let failing: String
        func fail(_ call: String, _ path: String) throws(LogStoreError) {
            if call == failing { throw SystemFile.error(EIO, call, path: path) }
        }
        func open(_ path: String, _ mode: FileOpenMode, reportingAs name: String?) throws(LogStoreError) -> any FileIO { try system.open(path, mode, reportingAs: name) }
        func exists(_ path: String) -> Bool { system.exists(path) }
        func identity(ofPath path: String) -> FileIdentity? { system.identity(ofPath: path) }
        func rename(_ source: String, to destination: String) throws(LogStoreError) {
            try fail("rename", source)
            try system.rename(source, to: destination)
        }
        func link(_ source: String, to destination: String) throws(LogStoreError) -> Bool {
            try fail("link", destination)
            return try system.link(source, to: destination)
        }
        func remove(_ path: String) { system.remove(path) }
        func synchronizeDirectory(of path: String) throws(LogStoreError) {
            try fail("synchronizeDirectory", path)
            try system.synchronizeDirectory(of: path)
        }
        func copyOwnership(from original: any FileIO, to file: any FileIO) throws(LogStoreError) { try system.copyOwnership(from: original, to: file) }
        func names(inDirectory directory: String) -> [String] { system.names(inDirectory: directory) }
        func resolvingSymbolicLink(_ path: String) -> String { system.resolvingSymbolicLink(path) }
        func freeSpace(at path: String) -> UInt64? { system.freeSpace(at: path) }
    }

    @Test("A salvage that fails part way throws, lets go of every file it opened, and leaves the old file unmarked", arguments: ["link", "rename", "synchronizeDirectory"])
    func salvageFailing(call: String) throws {
        try SnapshotDamageTests.withCompactedStore { path, model, index in
            let lostKeys = try Self.damageBlock(2, of: path, in: index)
            let options = JournalOptions(durability: .deferredToOS, recoveryMode: .salvage, compaction: .manual)
            let error = #expect(throws: LogStoreError.self) { let journal = try Journal(path: path, options: options, fileSystem: FailingCall(failing: call)); journal.close() }
            #expect(error?.kind == .io && error?.errno == EIO, "\(String(describing: error))")
            // Only a failed directory fsync comes after the rename. The old
            // file is not marked then: a power cut may undo the rename and
            // make it the store again.
            let old = call == "synchronizeDirectory" ? path + ".damaged-0" : path
            // Before the rename the store is as it was, with no second name.
            #expect(FileManager.default.fileExists(atPath: path + ".damaged-0") == (call == "synchronizeDirectory"))
            #expect(try !StoreInspector.info(path: old).isReplaced)
            let file = try SystemFile(path: old, mode: .readOnly)
            defer { file.close() }
            #expect(try !file.isLockedByWriter(), "the failed open still holds the lock of \(old)")
            // The store opens at once, salvaged if the failure came first.
            let store = try Store(path: path, model: model, options: options)
            defer { store.close() }
            #expect(contents(of: store)["Counter"]?.count == 5_000 - lostKeys.count)
        }
    }
}

extension SnapshotSalvageTests {
    /// Flips a bit in the payload of the snapshot index frame.
    static func damageIndex(of path: String, _ index: SnapshotIndex) throws {
        let indexOffset = Int(index.blocks.last!.offset + index.blocks.last!.frameSize)
        try StoreFileSurgery(path: path).flipBit(at: indexOffset + 60)
    }

    @Test("recover with a damaged index rebuilds it from the blocks: every record and the journal after the snapshot are kept")
    func recoverRebuildsDamagedIndex() throws {
        try SnapshotDamageTests.withCompactedStore { path, model, index in
            let saved = try Self.saveAfterSnapshot(path: path, model: model, index: index)
            try Self.damageIndex(of: path, index)

            let output = path + ".recovered"
            let recovery = try StoreInspector.recover(path: path, to: output)
            #expect(recovery.lostRecords.isEmpty)
            #expect(recovery.snapshotRecordsKept == 5_000)
            #expect(recovery.damagedBlocks.first?.message.contains("rebuilt from the blocks") == true)
            #expect(recovery.keptTransactions >= 3 && recovery.lostTransactions == 0)

            let store = try Store(path: output, model: model, options: CounterModel.manual)
            defer { store.close() }
            let counters = try #require(contents(of: store)["Counter"])
            #expect(counters.count == 5_000, "all but the deleted one, and the inserted one")
            #expect(counters[saved.changed]?[1] == .int64(-2))
            #expect(counters[saved.lost]?[1] == .int64(-1))
            #expect(counters[saved.inserted] != nil && counters[saved.deleted] == nil)
            let next = try store.newContext().insert("Counter")
            #expect(next.objectID.key > saved.inserted && next.objectID.key >= index.entities[0].nextKey)
        }
    }

    @Test("With the index and a block damaged, recover reports the keys between the whole blocks around it as lost, and salvage opens the store")
    func rebuildsAroundDamagedBlock() throws {
        try SnapshotDamageTests.withCompactedStore { path, model, index in
            let lostKeys = try Self.damageBlock(5, of: path, in: index)
            try Self.damageIndex(of: path, index)

            let recovery = try StoreInspector.recover(path: path, to: path + ".recovered")
            // Keys are dense here, so the range between the neighbours is exactly the block's.
            #expect(recovery.lostRecords == [LostRecords(entity: "Counter", keys: [lostKeys.first!...lostKeys.last!], count: lostKeys.count, isExact: false)])
            #expect(recovery.snapshotRecordsKept == 5_000 - lostKeys.count)

            let store = try Store(path: path, model: model, options: JournalOptions(durability: .deferredToOS, recoveryMode: .salvage, compaction: .manual))
            defer { store.close() }
            #expect(store.recovery.outcome == .salvaged)
            #expect(store.recovery.lostRecords == recovery.lostRecords)
            #expect(contents(of: store)["Counter"]?.count == 5_000 - lostKeys.count)
        }
    }
}

extension SnapshotSalvageTests {
    /// Rewrites the compacted store at `path` (no journal after its
    /// snapshot) as format version 3 wrote it: blocks without the context
    /// they start with since version 4, stored raw, the directory and the
    /// header to match. Returns the new index.
    static func downgradeToVersion3(_ path: String, _ index: SnapshotIndex) throws -> SnapshotIndex {
        let original = try JournalFixtures.read(path)
        var bytes = Array(original[0..<FileLayout.headerSize])
        var downgraded = index
        downgraded.blocksHaveContext = false
        for (number, entry) in index.blocks.enumerated() {
            let start = Int(entry.offset)
            let head = Array(original[start..<(start + FrameLayout.headerSize)])
            let header = try head.withUnsafeBytes { try FrameHeader.parse($0).get() }
            let stored = original[(start + FrameLayout.headerSize)..<(start + Int(entry.frameSize))]
            var raw = try SnapshotFile.decompress(header, stored)
            try raw.withUnsafeBytes { buffer in
                var reader = ByteReader(buffer)
                _ = try BlockContext(decoding: &reader)
                raw = Array(raw[reader.position...])
            }
            var frame = ByteWriter(capacity: raw.count + 64)
            let written = raw.withUnsafeBytes { FrameHeader.encodeFrame(kind: .snapshotBlock, sequence: UInt64(number + 1), timestampMicroseconds: 0, payload: $0, compressor: nil, into: &frame) }
            downgraded.blocks[number].offset = UInt64(bytes.count)
            downgraded.blocks[number].storedSize = written.storedSize
            downgraded.blocks[number].rawSize = written.rawSize
            downgraded.blocks[number].checksum = written.checksum
            bytes += frame.bytes
        }
        let indexOffset = bytes.count
        var frame = ByteWriter(capacity: 1 << 16)
        downgraded.encoded().bytes.withUnsafeBytes { raw in
            _ = FrameHeader.encodeFrame(kind: .snapshotIndex, sequence: downgraded.sequence, timestampMicroseconds: 0, payload: raw, compressor: nil, into: &frame)
        }
        bytes += frame.bytes
        JournalFixtures.store(UInt16(3), into: &bytes, at: 8)
        JournalFixtures.store(UInt16(3), into: &bytes, at: 10)
        JournalFixtures.store(UInt64(indexOffset), into: &bytes, at: FileLayout.snapshotOffsetField)
        JournalFixtures.resignHeader(&bytes)
        try JournalFixtures.write(bytes, to: path)
        return downgraded
    }

    @Test("A version 3 file: a damaged block is salvaged from its index; a damaged index cannot be, and says why")
    func version3Files() throws {
        try SnapshotDamageTests.withCompactedStore { path, model, written in
            let index = try Self.downgradeToVersion3(path, written)
            let pristine = try JournalFixtures.read(path)
            do {
                let store = try Store(path: path, model: model, options: JournalOptions(access: .readOnly))
                defer { store.close() }
                #expect(store.journal.header.readVersion == 3)
                #expect(contents(of: store)["Counter"]?.count == 5_000, "a version 3 snapshot reads")
            }

            let lostKeys = try Self.damageBlock(2, of: path, in: index)
            let recovery = try StoreInspector.recover(path: path, to: path + ".recovered")
            #expect(recovery.lostRecords == [LostRecords(entity: "Counter", keys: [lostKeys.first!...lostKeys.last!], count: lostKeys.count)])
            do {
                let store = try Store(path: path, model: model, options: JournalOptions(durability: .deferredToOS, recoveryMode: .salvage, compaction: .manual))
                defer { store.close() }
                #expect(contents(of: store)["Counter"]?.count == 5_000 - lostKeys.count)
            }

            try JournalFixtures.write(pristine, to: path)
            try Self.damageIndex(of: path, index)
            let error = #expect(throws: LogStoreError.self) { try StoreInspector.recover(path: path, to: path + ".again") }
            #expect(error?.kind == .corruptSnapshot)
            #expect(error?.message.contains("version 3") == true, "\(String(describing: error))")
            let salvage = #expect(throws: LogStoreError.self) {
                try Store(path: path, model: model, options: JournalOptions(recoveryMode: .salvage, compaction: .manual))
            }
            #expect(salvage?.kind == .corruptSnapshot)
        }
    }
}

extension SnapshotSalvageTests {
    @Test("Opened read-only with .salvage, a store with a damaged snapshot block reads every other block and the journal, and the file is not changed")
    func readOnlySalvage() throws {
        try SnapshotDamageTests.withCompactedStore { path, model, index in
            let saved = try Self.saveAfterSnapshot(path: path, model: model, index: index)
            let lostKeys = try Self.damageBlock(1, of: path, in: index)
            let damaged = try JournalFixtures.read(path)

            let store = try Store(path: path, model: model, options: JournalOptions(access: .readOnly, recoveryMode: .salvage))
            defer { store.close() }
            #expect(store.recovery.outcome == .salvaged)
            #expect(store.recovery.preservedDamagePath == nil)
            #expect(store.recovery.lostRecords.map(\.count) == [lostKeys.count])
            #expect(store.path == path)
            let counters = try #require(contents(of: store)["Counter"])
            #expect(counters.count == 5_000 - lostKeys.count)
            #expect(counters[saved.changed]?[1] == .int64(-2))
            #expect(try JournalFixtures.read(path) == damaged, "a read-only open changes nothing")
        }
    }
}

@Suite("Recovered stores never give out a key twice")
struct RecoveredKeysTests {
    /// A store without a snapshot whose second save's frames come after a
    /// damaged frame of the first: returns the largest key the second save
    /// gave out, which the recovered store loses.
    ///
    /// Every save is fsynced, so each later frame records the damaged one
    /// durable: the damage is real, not a hole a power cut left (FORMAT.md §6).
    static func storeWithKeysAfterDamage(at path: String, model: Model) throws -> UInt64 {
        let lastKey: UInt64
        do {
            var options = JournalOptions(durability: .fsyncEveryCommit, compaction: .manual)
            options.snapshotFormat = .indexFrame
            let store = try Store(path: path, model: model, options: options)
            defer { store.close() }
            let context = store.newContext()
            try CounterModel.insertCounters(60, into: context)
            // More than the first reservation holds: the second save reserves again.
            let later = try CounterModel.insertCounters(60, into: context)
            lastKey = later.map(\.objectID.key).max() ?? 0
        }
        // Frames: the model, a reservation, the first save, a reservation, the second save.
        let frames = JournalFixtures.frames(in: try JournalFixtures.read(path))
        try #require(frames.count == 5)
        try StoreFileSurgery(path: path).flipBit(at: frames[2].offset + FrameLayout.headerSize + 3)
        return lastKey
    }

    /// The key `store` gives the next counter it saves.
    static func nextSavedKey(in store: Store) throws -> UInt64 {
        let context = store.newContext()
        let counter = try context.insert("Counter")
        try context.save()
        return counter.objectID.key
    }

    @Test("recover of a damaged journal reserves the keys that the readable frames after the damage gave out")
    func recoverKeepsKeysOfLostFrames() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/keys.logstore"
            let model = try CounterModel.make()
            let lastLostKey = try Self.storeWithKeysAfterDamage(at: path, model: model)
            let output = directory + "/recovered.logstore"
            let recovery = try StoreInspector.recover(path: path, to: output)
            #expect(recovery.lostTransactions == 2)
            let store = try Store(path: output, model: model, options: CounterModel.manual)
            defer { store.close() }
            let key = try Self.nextSavedKey(in: store)
            #expect(key > lastLostKey, "key \(key) was given out by a frame the recovery could not keep")
        }
    }

    @Test("Opening a damaged journal with .salvage reserves the keys that the frames cut off gave out")
    func salvageKeepsKeysOfLostFrames() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/keys.logstore"
            let model = try CounterModel.make()
            let lastLostKey = try Self.storeWithKeysAfterDamage(at: path, model: model)

            let options = JournalOptions(durability: .deferredToOS, recoveryMode: .salvage, compaction: .manual)
            do {
                let store = try Store(path: path, model: model, options: options)
                defer { store.close() }
                #expect(store.recovery.outcome == .salvaged)
                let key = try Self.nextSavedKey(in: store)
                #expect(key > lastLostKey, "key \(key) was given out by a frame salvage cut off")
            }
            // And the reservation is in the file: a plain open later knows it too.
            let store = try Store(path: path, model: model, options: CounterModel.manual)
            defer { store.close() }
            let counter = try store.newContext().insert("Counter")
            #expect(counter.objectID.key > lastLostKey + 1)
        }
    }
}
