// A compaction's paged snapshot (FORMAT.md §13, format version 7): its
// layout in the file, tables taller than one block, cut values, upgrades
// from version 4, and damage to each of its frames.

import Foundation
import Testing
@_spi(Benchmarks) @_spi(Fuzzing) @testable import LogStore

@Suite("Paged snapshot")
struct PagedSnapshotTests {
    static let paged = CounterModel.manual(.paged)

    /// The frames of `file` from `start` on, each with its offset.
    static func frames(_ file: [UInt8], from start: Int = FileLayout.pagedFramesStart) throws -> [(offset: Int, header: FrameHeader)] {
        var frames: [(offset: Int, header: FrameHeader)] = []
        var offset = start
        while offset < file.count {
            let header = try Array(file[offset..<(offset + FrameLayout.headerSize)]).withUnsafeBytes { try FrameHeader.parse($0).get() }
            frames.append((offset, header))
            offset += Int(header.frameSize)
        }
        return frames
    }

    /// ``contents(of:)`` with each reference's entity by name: a salvaged
    /// store numbers its names anew.
    static func namedContents(of store: Store) -> [String: [UInt64: [StoredValue]]] {
        func named(_ id: RecordID) -> StoredValue { .string("\(store.journal.name(of: id.entity) ?? "?")/\(id.key)") }
        return contents(of: store).mapValues { records in
            records.mapValues { values in
                values.map { value in
                    switch value {
                    case .reference(let id): named(id)
                    case .references(let ids): .string(ids.map { "\(named($0))" }.joined(separator: ","))
                    default: value
                    }
                }
            }
        }
    }

    /// ``paged`` with 4 KiB data blocks, so that a few thousand counters
    /// fill many blocks to damage.
    static let smallBlocks = {
        var options = paged
        options.snapshotBlockSize = 4 << 10
        return options
    }()

    /// ``smallBlocks``, opening with salvage.
    static let salvaging = {
        var options = smallBlocks
        options.recoveryMode = .salvage
        return options
    }()

    /// A store at `path` filled by ``CompactionTests/fill(_:counters:)`` and
    /// compacted with `options`, with one save after the snapshot when
    /// `saveAfter`; returns its records, references by entity name.
    @discardableResult
    static func compactedStore(at path: String, model: Model, counters: Int, saveAfter: Bool, options: JournalOptions = smallBlocks) throws -> [String: [UInt64: [StoredValue]]] {
        let store = try Store(path: path, model: model, options: options)
        defer { store.close() }
        try CompactionTests.fill(store, counters: counters)
        try store.compact()
        if saveAfter {
            let context = store.newContext()
            let counter = try context.insert("Counter")
            counter["name"] = "after the snapshot"
            try context.save()
        }
        return namedContents(of: store)
    }

    static func header(_ path: String) throws -> FileHeader {
        let bytes = try StoreFileSurgery(path: path).bytes
        return try JournalFixtures.header(of: bytes, path: path)
    }

    /// The root of the paged snapshot at `path`.
    static func root(_ path: String) throws -> SnapshotRoot {
        let file = try SystemFile(path: path, mode: .readOnly)
        defer { file.close() }
        let offset = try #require(try header(path).snapshotRootOffset)
        let (root, _) = try PagedSnapshotReader(file: file, rootOffset: offset, fileSize: try file.size()).readRoot()
        return root
    }

    @Test("A paged snapshot is a version 7 file: anchor pages of zeros, then one run's blocks, its catalog and the base root the header names")
    func layout() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/paged.logstore"
            let model = try CounterModel.make()
            try Self.compactedStore(at: path, model: model, counters: 3_000, saveAfter: true, options: Self.paged)
            let header = try Self.header(path)
            #expect(header.writeVersion == FileLayout.pagedWriteVersion && header.readVersion == FileLayout.pagedWriteVersion)
            #expect(header.snapshotIndexOffset == nil)
            let rootOffset = try #require(header.snapshotRootOffset)
            let bytes = try StoreFileSurgery(path: path).bytes
            #expect(bytes[FileLayout.headerSize..<FileLayout.pagedFramesStart].allSatisfy { $0 == 0 })

            let frames = try Self.frames(bytes)
            let kinds = frames.map(\.header.kind)
            let rootPosition = try #require(frames.firstIndex { $0.offset == Int(rootOffset) })
            #expect(kinds[rootPosition] == .root)
            #expect(kinds[rootPosition - 1] == .catalog)
            #expect(kinds[..<(rootPosition - 1)].allSatisfy { $0 == .snapshotBlock || $0 == .indexBlock })
            #expect(kinds[(rootPosition + 1)...] == [.transaction])
            #expect(frames[..<rootPosition].allSatisfy { $0.header.kind == .catalog || $0.header.sequence == SnapshotWriter.baseRun })

            let root = try Self.root(path)
            #expect(root.generation == 1 && root.previousRoot == 0 && root.journalOffset == rootOffset)
            #expect(root.runs.count == 1)
            // The key directory, the index of Counter.name, and Counter.group's pointers.
            #expect(root.runs[0].tables.map(\.type) == [0, 2, 1])
            #expect(root.runs[0].tables.map(\.name) == ["", "group", "name"].sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })

            let info = try StoreInspector.info(path: path)
            #expect(info.snapshot?.records["Counter"] == 3_000 - (3_000 + 10) / 11)
            #expect(info.frameCount == 1)
            #expect((info.snapshot?.indexStoredBytes ?? 0) > 0)
            let report = try StoreInspector.verify(path: path)
            #expect(report.isValid, "\(report.problems)")
            #expect(report.validFrames == frames.count)
        }
    }

    @Test("Tables taller than one block: every record, index group and pointer is read back through branches")
    func tallTables() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/tall.logstore"
            let model = try CounterModel.make()
            let before = try Self.compactedStore(at: path, model: model, counters: 60_000, saveAfter: false, options: Self.paged)
            let root = try Self.root(path)
            #expect(root.runs[0].tables.allSatisfy { $0.height >= 1 }, "\(root.runs[0].tables.map(\.height))")
            let store = try Store(path: path, model: model, options: Self.paged)
            defer { store.close() }
            #expect(Self.namedContents(of: store) == before)
            let context = store.newContext()
            let named = try context.fetch(FetchRequest(entityName: "Counter", predicate: ObjectPredicate("name == %@", "counter 17")))
            #expect(named.count == before["Counter"]?.values.filter { $0.first == .string("counter 17") }.count)
            let groups = try context.fetchAll("Group")
            let linked = groups.reduce(0) { $0 + ((($1["counters"] as? Set<ManagedObject>)?.count) ?? 0) }
            #expect(linked == before["Counter"]?.count)
        }
    }

    @Test("Indexed strings longer than an index entry holds are cut in the table and found whole after reopening")
    func longIndexedValues() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/long.logstore"
            let model = try CounterModel.make()
            let prefix = String(repeating: "é", count: 600)  // 1,200 bytes of UTF-8
            let names = (0..<40).map { prefix + "\($0 % 7)" } + (0..<40).map { "short \($0 % 5)" } + [prefix, String(prefix.dropLast())]
            do {
                let store = try Store(path: path, model: model, options: Self.paged)
                defer { store.close() }
                let context = store.newContext()
                for name in names {
                    let counter = try context.insert("Counter")
                    counter["name"] = name
                }
                try context.save()
                try store.compact()
            }
            let store = try Store(path: path, model: model, options: Self.paged)
            defer { store.close() }
            let context = store.newContext()
            for probe in Set(names) {
                let found = try context.fetch(FetchRequest(entityName: "Counter", predicate: ObjectPredicate("name == %@", probe)))
                #expect(found.count == names.filter { $0 == probe }.count, "\(probe.suffix(3))")
            }
            let sorted = try context.fetch(FetchRequest(entityName: "Counter", sortDescriptors: [SortKey("name")])).compactMap { $0["name"] as? String }
            #expect(sorted.count == names.count)
            #expect(zip(sorted, sorted.dropFirst()).allSatisfy { StoredValue.compare($0, $1) != .orderedDescending })
        }
    }

    @Test("A version 5 file, whose leaves hold every entry by itself, opens and reads as it is; its next compaction writes version 7, the same records and indexes in run words, in fewer index bytes")
    func readsVersion5() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/version5.logstore"
            let model = try CounterModel.make()
            var before: [String: [UInt64: [StoredValue]]]
            var indexBytes: [UInt64] = []
            for (round, format) in [SnapshotFormat.pagedVersion5, .paged].enumerated() {
                do {
                    let store = try Store(path: path, model: model, options: CounterModel.manual(format))
                    defer { store.close() }
                    if round == 0 { try CompactionTests.fill(store, counters: 5_000) }
                    before = contents(of: store)
                    try store.compact()
                    #expect(contents(of: store) == before)
                }
                let header = try Self.header(path)
                #expect(header.writeVersion == format.fileVersion && header.readVersion == format.fileVersion)
                indexBytes.append(try StoreInspector.info(path: path).snapshot?.indexRawBytes ?? 0)
                // Reopened, the file reads back through its own leaves:
                // every record, and the index lookups and counts.
                let reopened = try Store(path: path, model: model, options: CounterModel.manual(format))
                defer { reopened.close() }
                #expect(contents(of: reopened) == before)
                let context = reopened.newContext()
                #expect(try context.count(for: FetchRequest(entityName: "Counter")) == before["Counter"]?.count)
                let named = try context.fetch(FetchRequest(entityName: "Counter", predicate: ObjectPredicate("name == %@", "counter 21")))
                let expected = before["Counter"]?.values.filter { $0.first == .string("counter 21") }.count ?? 0
                #expect(named.count == expected && expected > 50)
                #expect(try StoreInspector.verify(path: path).isValid)
            }
            #expect(try Self.header(path).readVersion == FileLayout.pagedWriteVersion)
            // One word per run of keys rather than a byte per key.
            #expect(indexBytes.count == 2 && indexBytes[1] < indexBytes[0])
        }
    }

    @Test("A version 4 store compacts into version 7, a version 7 store into version 7 again, and an entity's new attribute migrates its records")
    func upgradesAndMigrates() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/upgrade.logstore"
            let model = try CounterModel.make()
            var before: [String: [UInt64: [StoredValue]]]
            do {
                let store = try Store(path: path, model: model, options: CounterModel.manual(.indexFrame))
                defer { store.close() }
                try CompactionTests.fill(store, counters: 2_000)
                try store.compact()
                before = contents(of: store)
            }
            #expect(try Self.header(path).readVersion == 4)
            for round in 0..<2 {
                let store = try Store(path: path, model: model, options: Self.paged)
                defer { store.close() }
                #expect(contents(of: store) == before)
                let context = store.newContext()
                let counter = try context.insert("Counter")
                counter["name"] = "round \(round)"
                try context.save()
                try store.compact()
                before = contents(of: store)
                #expect(try Self.header(path).snapshotRootOffset != nil)
            }
            // A new attribute: the paged blocks' records are read and brought to the new slots.
            let migrated = try CounterModel.make(adding: "extra")
            let store = try Store(path: path, model: migrated, options: Self.paged)
            defer { store.close() }
            let after = contents(of: store)
            #expect(after["Counter"]?.count == before["Counter"]?.count)
            for (key, values) in before["Counter"] ?? [:] {
                #expect(after["Counter"]?[key].map { Array($0.prefix(3)) } == Array(values.prefix(3)))
            }
        }
    }

    @Test("Damage to any frame of a paged snapshot is .corruptSnapshot, at open for the frames open reads and at the first read for a data block, and a problem for verify; salvage loses only a damaged data block's records")
    func damageToEachFrame() throws {
        try withTemporaryDirectory { directory in
            let pristine = directory + "/pristine.logstore"
            let model = try CounterModel.make()
            let before = try Self.compactedStore(at: pristine, model: model, counters: 4_000, saveAfter: true)
            let bytes = try StoreFileSurgery(path: pristine).bytes
            let rootOffset = try #require(try Self.header(pristine).snapshotRootOffset)
            let frames = try Self.frames(bytes).filter { $0.offset <= Int(rootOffset) }
            // Every kind, and several blocks of each.
            var chosen: [(offset: Int, header: FrameHeader)] = []
            for kind in [FrameKind.snapshotBlock, .indexBlock, .catalog, .root] {
                let ofKind = frames.filter { $0.header.kind == kind }
                chosen += Set([0, ofKind.count / 2, ofKind.count - 1]).sorted().map { ofKind[$0] }
            }
            #expect(chosen.count >= 8)
            // A fetch of every counter through the index on name (explain
            // runs the fetch, so it asks the undamaged store).
            let request = FetchRequest(entityName: "Counter", predicate: try ObjectPredicate("name >= ''"), sortDescriptors: [SortKey("name")])
            do {
                let store = try Store(path: pristine, model: model, options: Self.smallBlocks)
                defer { store.close() }
                #expect(try store.newContext().explain(request).strategy == .indexLookup(attribute: "name"))
                #expect(try store.newContext().fetch(request).count == before["Counter"]?.count)
            }
            for (number, frame) in chosen.enumerated() {
                let path = directory + "/damaged-\(number).logstore"
                var damaged = bytes
                damaged[frame.offset + FrameLayout.headerSize + Int(frame.header.storedSize) / 2] ^= 0x10
                try JournalFixtures.write(damaged, to: path)
                let what = "\(frame.header.kind) at \(frame.offset)"

                if frame.header.kind == .snapshotBlock {
                    // Open reads no data block; the first read of its records
                    // checks it, and the whole of a scan throws.
                    do {
                        let store = try Store(path: path, model: model, options: Self.smallBlocks)
                        defer { store.close() }
                        let error = #expect(throws: LogStoreError.self, "\(what)") {
                            for entity in ["Counter", "Group"] {
                                _ = try store.newContext().fetch(FetchRequest(entityName: entity, predicate: try ObjectPredicate("SELF != nil")))
                            }
                        }
                        #expect(error?.kind == .corruptSnapshot && error?.message.contains("recoveryMode .salvage") == true, "\(what): \(String(describing: error))")
                    }
                    // Through the index, reading the records a run of keys at
                    // a time: every counter, or the block's failure.
                    let indexed = try Store(path: path, model: model, options: Self.smallBlocks)
                    defer { indexed.close() }
                    do {
                        let counters = try indexed.newContext().fetch(request)
                        #expect(counters.count == before["Counter"]?.count, "\(what): the index lookup answered without some counters")
                    } catch let failure as LogStoreError {
                        #expect(failure.kind == .corruptSnapshot, "\(what): \(failure)")
                    }
                } else {
                    let error = #expect(throws: LogStoreError.self, "\(what)") { try Store(path: path, model: model, options: Self.smallBlocks) }
                    #expect(error?.kind == .corruptSnapshot, "\(what): \(String(describing: error))")
                }
                #expect(try StoreInspector.verify(path: path).isValid == false, "\(what)")

                let store = try Store(path: path, model: model, options: Self.salvaging)
                defer { store.close() }
                let after = Self.namedContents(of: store)
                let lost = store.recovery.lostRecords
                func isLost(_ entity: String, _ key: UInt64) -> Bool { lost.contains { $0.entity == entity && $0.contains(key) } }
                for (entity, records) in before {
                    for (key, values) in records where after[entity]?[key] != values {
                        // A reference to a lost record reads as null, as if it had been deleted.
                        let nullified = values.map { value -> StoredValue in
                            if case .string(let target) = value, target.hasPrefix("Group/"), let key = UInt64(target.dropFirst(6)), isLost("Group", key) { return .null }
                            return value
                        }
                        #expect(frame.header.kind == .snapshotBlock, "\(what): \(entity)/\(key) changed though no data block was damaged: \(values) -> \(String(describing: after[entity]?[key]))")
                        #expect(isLost(entity, key) || after[entity]?[key] == nullified, "\(what): \(entity)/\(key) lost or changed without a report")
                    }
                }
                if frame.header.kind == .snapshotBlock {
                    #expect(lost.reduce(0) { $0 + $1.count } > 0, "\(what)")
                }
            }
        }
    }

    @Test("A file cut short inside its snapshot, or with an index block missing (zeros where it was), is .corruptSnapshot; salvage keeps every record a whole data block holds")
    func tornOrMissing() throws {
        try withTemporaryDirectory { directory in
            let pristine = directory + "/pristine.logstore"
            let model = try CounterModel.make()
            let before = try Self.compactedStore(at: pristine, model: model, counters: 3_000, saveAfter: false)
            let bytes = try StoreFileSurgery(path: pristine).bytes
            let rootOffset = Int(try #require(try Self.header(pristine).snapshotRootOffset))
            let frames = try Self.frames(bytes)
            let indexBlocks = frames.filter { $0.header.kind == .indexBlock }
            var damaged: [(String, [UInt8])] = []
            for cut in [FileLayout.pagedFramesStart, FileLayout.pagedFramesStart + 100, rootOffset / 2, rootOffset, rootOffset + 30] {
                damaged.append(("cut at \(cut)", Array(bytes[..<cut])))
            }
            for block in [indexBlocks.first!, indexBlocks.last!] {
                var missing = bytes
                missing.replaceSubrange(block.offset..<(block.offset + Int(block.header.frameSize)), with: repeatElement(0, count: Int(block.header.frameSize)))
                damaged.append(("index block at \(block.offset) zeroed", missing))
            }
            for (number, (what, file)) in damaged.enumerated() {
                let path = directory + "/damaged-\(number).logstore"
                try JournalFixtures.write(file, to: path)
                let error = #expect(throws: LogStoreError.self, "\(what)") { try Store(path: path, model: model, options: Self.smallBlocks) }
                #expect(error?.kind == .corruptSnapshot, "\(what): \(String(describing: error))")
                #expect(error?.message.contains(path) == true, "\(what)")
                guard what.hasSuffix("zeroed") else { continue }
                // Every data block is whole: salvage keeps every record.
                let store = try Store(path: path, model: model, options: Self.salvaging)
                defer { store.close() }
                #expect(Self.namedContents(of: store) == before, "\(what)")
            }
        }
    }

    @Test("A root this version cannot read whole (more runs, or not a base root) is refused, never read in part")
    func rootsThisVersionDoesNotRead() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/crafted.logstore"
            let model = try CounterModel.make()
            try Self.compactedStore(at: path, model: model, counters: 500, saveAfter: false, options: Self.paged)
            let original = try StoreFileSurgery(path: path).bytes
            let rootOffset = Int(try #require(try Self.header(path).snapshotRootOffset))
            let root = try Self.root(path)

            func rewrite(_ crafted: SnapshotRoot) throws -> LogStoreError? {
                var frame = ByteWriter()
                _ = crafted.encoded().bytes.withUnsafeBytes {
                    FrameHeader.encodeFrame(kind: .root, sequence: crafted.sequence, timestampMicroseconds: 0, payload: $0, compressor: nil, into: &frame)
                }
                try JournalFixtures.write(Array(original[..<rootOffset]) + frame.bytes, to: path)
                return JournalFixtures.openError(path, Self.paged)
            }
            var twoRuns = root
            var older = root.runs[0]
            older.number = 7
            twoRuns.runs.append(older)
            twoRuns.runs[0].firstSequence = twoRuns.runs[0].lastSequence
            older.lastSequence = 0
            twoRuns.runs[1] = older
            twoRuns.nextRun = 8
            let error = try rewrite(twoRuns)
            #expect(error?.kind == .unsupportedFormatVersion || error?.kind == .corruptSnapshot, "\(String(describing: error))")

            var notBase = root
            notBase.generation = 2
            notBase.previousRoot = UInt64(FileLayout.pagedFramesStart)
            #expect(try rewrite(notBase)?.kind == .corruptSnapshot)

            var farCatalog = root
            farCatalog.catalog.offset = UInt64(rootOffset) + 100
            farCatalog.runs[0].catalog = farCatalog.catalog
            #expect(try rewrite(farCatalog)?.kind == .corruptSnapshot)

            #expect(try rewrite(root) == nil, "the same root, written again, opens")
        }
    }

    // MARK: - Crafted files (checksums valid)

    /// A compacted paged store of a few counters, taken apart: its content,
    /// the root frame's position, the root, and the key directory's top leaf.
    static func takeApart(_ path: String) throws -> (content: ContentMutation.Content, rootFrame: Int, root: SnapshotRoot, leafFrame: Int, leaf: PagedBlock) {
        let model = try CounterModel.make()
        do {
            let store = try Store(path: path, model: model, options: paged)
            defer { store.close() }
            try CounterModel.insertCounters(20, into: store.newContext())
            try store.compact()
        }
        let content = try #require(ContentMutation.Content(try StoreFileSurgery(path: path).bytes))
        let rootFrame = try #require(content.frames.firstIndex { $0.kind == .root })
        let root = try content.frames[rootFrame].payload.withUnsafeBytes { try SnapshotRoot(decoding: $0) }
        let top = root.runs[0].tables[0]
        try #require(top.height == 0, "20 counters fit one leaf")
        let leafFrame = try #require(content.frames.firstIndex { $0.offset == top.top.offset })
        let leaf = try content.frames[leafFrame].payload.withUnsafeBytes { try PagedBlock(decoding: $0, as: .keys) }
        return (content, rootFrame, root, leafFrame, leaf)
    }

    static func indexFrame(_ block: PagedBlock, as type: PagedTableType, offset: UInt64) -> ContentMutation.Content.Frame {
        ContentMutation.Content.Frame(kind: .indexBlock, sequence: block.run, timestamp: 0, carriesDictionary: false, payload: block.encoded(as: type), storedCodec: .raw, rawSize: 0, offset: offset)
    }

    @Test("A key directory whose branches lead to one leaf again and again is damage at the second visit, not a walk as long as the counts it claims")
    func sharedLeafLoop() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/loop.logstore"
            var (content, rootFrame, root, _, leaf) = try Self.takeApart(path)
            // A leaf of one entry, an older version of key 1, and two levels of 50 branches to it.
            var single = PagedBlock(run: leaf.run, table: 0, level: 0)
            single.dataBlocks = [PagedBlock.DataBlock(handle: leaf.dataBlocks[0].handle, recordCount: 1)]
            single.groups = [.entity(0)]
            single.groupEnds = [1]
            single.entries = [PagedEntry(key: 1, state: .olderVersion)]
            let fake: UInt64 = 1 << 60
            let lower = PagedBlock(run: leaf.run, table: 0, level: 1, children: Array(repeating: PagedBlock.Child(group: .entity(0), key: 1, entryCount: 1, handle: FrameHandle(offset: fake, storedSize: 0, rawSize: 0, checksum: 0)), count: 50))
            let upper = PagedBlock(run: leaf.run, table: 0, level: 2, children: Array(repeating: PagedBlock.Child(group: .entity(0), key: 1, entryCount: 50, handle: FrameHandle(offset: fake + 1, storedSize: 0, rawSize: 0, checksum: 0)), count: 50))
            content.frames.insert(contentsOf: [Self.indexFrame(single, as: .keys, offset: fake), Self.indexFrame(lower, as: .keys, offset: fake + 1), Self.indexFrame(upper, as: .keys, offset: fake + 2)], at: rootFrame)
            root.runs[0].tables[0].height = 2
            root.runs[0].tables[0].entryCount = 2_500
            root.runs[0].tables[0].top.offset = fake + 2
            content.frames[rootFrame + 3].payload = root.encoded().bytes
            try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)

            let info = try StoreInspector.info(path: path)
            #expect(info.damage != nil, "read as \(info.snapshot?.blocks ?? 0) blocks")
            #expect(try StoreInspector.verify(path: path).isValid == false)
            #expect(JournalFixtures.openError(path, Self.paged)?.kind == .corruptSnapshot)
        }
    }

    @Test("A data block handle at the end of the offsets is damage for open, verify, salvage and recover, never a trap")
    func dataHandlePastTheLargestOffset() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/far.logstore"
            var (content, _, _, leafFrame, leaf) = try Self.takeApart(path)
            leaf.dataBlocks[0].handle.offset = .max - 16
            content.frames[leafFrame].payload = leaf.encoded(as: .keys)
            try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)
            #expect(JournalFixtures.openError(path, Self.paged)?.kind == .corruptSnapshot)
            #expect(try StoreInspector.verify(path: path).isValid == false)
            _ = try? StoreInspector.recover(path: path, to: directory + "/recovered.logstore")
            _ = try? Store(path: path, model: try CounterModel.make(), options: Self.salvaging)
        }
    }

    @Test("A table that claims more entries than its run's bytes could hold raw is refused at open, before any leaf is read")
    func tableClaimingTooManyEntries() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/claims.logstore"
            var (content, rootFrame, root, _, _) = try Self.takeApart(path)
            root.runs[0].tables[0].entryCount = 1 << 50
            content.frames[rootFrame].payload = root.encoded().bytes
            try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)
            let error = JournalFixtures.openError(path, Self.paged)
            #expect(error?.kind == .corruptSnapshot)
            #expect(error?.message.contains("claims \(1 << 50) entries, more than the run's") == true, "\(String(describing: error))")
        }
    }

    @Test("A key directory that lists one data block twice, its records split between the two, is refused at open")
    func dataBlockListedTwice() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/twice.logstore"
            var (content, _, _, leafFrame, leaf) = try Self.takeApart(path)
            // The 20 entries still add up, 10 and 10: only the place is wrong.
            let handle = leaf.dataBlocks[0].handle
            leaf.dataBlocks = [PagedBlock.DataBlock(handle: handle, recordCount: 10), PagedBlock.DataBlock(handle: handle, recordCount: 10)]
            content.frames[leafFrame].payload = leaf.encoded(as: .keys)
            try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)
            let error = JournalFixtures.openError(path, Self.paged)
            #expect(error?.kind == .corruptSnapshot, "\(String(describing: error))")
            #expect(try StoreInspector.verify(path: path).isValid == false)
        }
    }

    @Test("A key directory that lists more records in a data block than its bytes could hold, at four bytes a record, is refused at open")
    func moreRecordsThanABlockHolds() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/many.logstore"
            var (content, rootFrame, root, leafFrame, leaf) = try Self.takeApart(path)
            // A run word lets a few bytes claim 100,000 keys of one block;
            // the entity's next key and the table's count agree with them.
            let claimed = 100_000
            try #require(claimed > Int(leaf.dataBlocks[0].handle.rawSize) / 4)
            leaf.entries = (1...claimed).map { PagedEntry(key: UInt64($0), state: .present) }
            leaf.groupEnds = [claimed]
            leaf.dataBlocks = [PagedBlock.DataBlock(handle: leaf.dataBlocks[0].handle, recordCount: claimed)]
            content.frames[leafFrame].payload = leaf.encoded(as: .keys)
            root.runs[0].tables[0].entryCount = UInt64(claimed)
            root.nextKeys = root.nextKeys.map { max($0, UInt64(claimed) + 1) }
            content.frames[rootFrame].payload = root.encoded().bytes
            try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)
            let error = JournalFixtures.openError(path, Self.paged)
            #expect(error?.kind == .corruptSnapshot, "\(String(describing: error))")
        }
    }

    @Test("A live record the key directory lists as a tombstone is a problem verify finds")
    func recordListedAsTombstone() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/tombstone.logstore"
            var (content, _, _, leafFrame, leaf) = try Self.takeApart(path)
            leaf.entries[3].state = .tombstone
            content.frames[leafFrame].payload = leaf.encoded(as: .keys)
            try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)
            let report = try StoreInspector.verify(path: path)
            #expect(report.problems.contains { $0.message.contains("tombstone") }, "\(report.problems)")
        }
    }

    @Test("A version 5 header with no snapshot, in a file that ends before the anchor pages do, is .corruptHeader everywhere, never a trap")
    func versionFiveFileCutShort() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/short.logstore"
            let header = FileHeader(storeID: UUID(), createdAt: Date(), version: FileLayout.pagedSnapshotVersion)
            try JournalFixtures.write(header.encoded(), to: path)
            #expect(JournalFixtures.openError(path, Self.paged)?.kind == .corruptHeader)
            #expect(JournalFixtures.openError(path, JournalOptions(access: .readOnly))?.kind == .corruptHeader)
            #expect(throws: LogStoreError.self) { try StoreInspector.info(path: path) }
            #expect(throws: LogStoreError.self) { try StoreInspector.verify(path: path) }
            #expect(throws: LogStoreError.self) { try StoreInspector.recover(path: path, to: directory + "/recovered.logstore") }
        }
    }

    @Test("Indexed attributes whose names order differently as bytes and as text, and a model without entities, compact and reopen")
    func namesAndEmptyModels() throws {
        try withTemporaryDirectory { directory in
            let named = try Model {
                Entity("Thing") {
                    Attribute("f", .string, indexed: true)
                    Attribute("e\u{301}x", .string, indexed: true)
                }
            }
            let path = directory + "/names.logstore"
            do {
                let store = try Store(path: path, model: named, options: Self.paged)
                defer { store.close() }
                let context = store.newContext()
                let thing = try context.insert("Thing")
                thing["f"] = "one"
                thing["e\u{301}x"] = "two"
                try context.save()
                try store.compact()
            }
            let store = try Store(path: path, model: named, options: Self.paged)
            #expect(try store.newContext().fetch(FetchRequest(entityName: "Thing", predicate: ObjectPredicate("f == 'one'"))).count == 1)
            store.close()

            let emptyPath = directory + "/empty.logstore"
            let empty = try Model(entities: [])
            do {
                let store = try Store(path: emptyPath, model: empty, options: Self.paged)
                defer { store.close() }
                try store.compact()
            }
            try Store(path: emptyPath, model: empty, options: Self.paged).close()
            #expect(try Self.header(emptyPath).snapshotRootOffset != nil)
        }
    }

    @Test("Each record keeps the transaction that last changed it across compactions, not the snapshot's")
    func versionsSurviveCompactions() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/versions.logstore"
            let model = try CounterModel.make()
            do {
                let store = try Store(path: path, model: model, options: Self.paged)
                defer { store.close() }
                let context = store.newContext()
                for round in 0..<4 {
                    let counter = try context.insert("Counter")
                    counter["name"] = "round \(round)"
                    try context.save()
                }
                try store.compact()
            }
            func versions() throws -> [UInt64] {
                let file = try SystemFile(path: path, mode: .readOnly)
                defer { file.close() }
                let extent = try #require(try SnapshotFile.read(in: file, header: try Self.header(path), fileSize: try file.size()))
                let slotCounts = extent.index.entities.map(\.slots.count)
                return try extent.index.blocks.indices.flatMap { number in
                    let block = try SnapshotFile.readBlock(number, of: extent.index.blocks, slotCounts: slotCounts, context: extent.index.blockContext.map(BlockContextCheck.init), paged: true, in: file)
                    return (0..<block.count).map(block.version(at:))
                }
            }
            let first = try versions()
            #expect(Set(first).count == 4, "\(first)")
            // Reopened, compacted again with nothing changed: the same versions.
            let store = try Store(path: path, model: model, options: Self.paged)
            try store.compact()
            store.close()
            #expect(try versions() == first)
        }
    }
}
