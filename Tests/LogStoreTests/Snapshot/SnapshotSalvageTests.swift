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
            let lostKeys = try #require(Self.keys(ofBlock: 0, in: index)["Counter"])
            let block = index.blocks[0]
            try StoreFileSurgery(path: path).flipBit(at: Int(block.offset) + 40 + Int(block.storedSize) / 2, bit: 3)

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
            let lostKeys = try #require(Self.keys(ofBlock: 3, in: index)["Counter"])
            let block = index.blocks[3]
            let surgery = StoreFileSurgery(path: path)
            try surgery.flipBit(at: Int(block.offset) + 40 + Int(block.storedSize) / 2, bit: 3)
            let damaged = try surgery.bytes

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
                #expect(try JournalFixtures.read(aside) == damaged, "the damaged file is kept whole")
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

@Suite("Recovered stores never give out a key twice")
struct RecoveredKeysTests {
    /// A store without a snapshot whose second save's frames come after a
    /// damaged frame of the first: returns the largest key the second save
    /// gave out, which the recovered store loses.
    static func storeWithKeysAfterDamage(at path: String, model: Model) throws -> UInt64 {
        let store = try Store(path: path, model: model, options: CounterModel.manual)
        defer { store.close() }
        let context = store.newContext()
        try CounterModel.insertCounters(60, into: context)
        // More than the first reservation holds: the second save reserves again.
        let later = try CounterModel.insertCounters(60, into: context)
        return later.map(\.objectID.key).max() ?? 0
    }

    @Test("recover of a damaged journal reserves the keys that the readable frames after the damage gave out")
    func recoverKeepsKeysOfLostFrames() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/keys.logstore"
            let model = try CounterModel.make()
            let lastLostKey = try Self.storeWithKeysAfterDamage(at: path, model: model)
            // Frames: the model, a reservation, the first save, a reservation, the second save.
            let frames = JournalFixtures.frames(in: try JournalFixtures.read(path))
            try #require(frames.count == 5)
            try StoreFileSurgery(path: path).flipBit(at: frames[2].offset + FrameLayout.headerSize + 3)

            let output = directory + "/recovered.logstore"
            let recovery = try StoreInspector.recover(path: path, to: output)
            #expect(recovery.lostTransactions == 2)
            let store = try Store(path: output, model: model, options: CounterModel.manual)
            defer { store.close() }
            let context = store.newContext()
            let counter = try context.insert("Counter")
            try context.save()
            #expect(counter.objectID.key > lastLostKey, "key \(counter.objectID.key) was given out by a frame the recovery could not keep")
        }
    }

    @Test("Opening a damaged journal with .salvage reserves the keys that the frames cut off gave out")
    func salvageKeepsKeysOfLostFrames() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/keys.logstore"
            let model = try CounterModel.make()
            let lastLostKey = try Self.storeWithKeysAfterDamage(at: path, model: model)
            let frames = JournalFixtures.frames(in: try JournalFixtures.read(path))
            try StoreFileSurgery(path: path).flipBit(at: frames[2].offset + FrameLayout.headerSize + 3)

            let options = JournalOptions(durability: .deferredToOS, recoveryMode: .salvage, compaction: .manual)
            do {
                let store = try Store(path: path, model: model, options: options)
                defer { store.close() }
                #expect(store.recovery.outcome == .salvaged)
                let context = store.newContext()
                let counter = try context.insert("Counter")
                try context.save()
                #expect(counter.objectID.key > lastLostKey, "key \(counter.objectID.key) was given out by a frame salvage cut off")
            }
            // And the reservation is in the file: a plain open later knows it too.
            let store = try Store(path: path, model: model, options: CounterModel.manual)
            defer { store.close() }
            let counter = try store.newContext().insert("Counter")
            #expect(counter.objectID.key > lastLostKey + 1)
        }
    }
}
