// The packed table of one entity's committed records.

import Foundation
import Testing
@testable import LogStore

@Suite("Entity table")
struct EntityTableTests {
    @Test("Sets, updates and removes read back exactly, through many rewrites that compact the arena, against a dictionary model")
    func matchesADictionary() {
        var table = EntityTable()
        var model: [UInt64: Record] = [:]
        var random = JournalFixtures.SeededGenerator(seed: 0x7AB1E)
        for step in 0..<20_000 {
            let key = UInt64(random.next() % 500) + 1
            switch random.next() % 4 {
            case 0:
                table.remove(key)
                model[key] = nil
            default:
                let record = Record(values: [.string(String(repeating: "x", count: Int(random.next() % 40))), .int64(Int64(step)), .null, .reference(RecordID(entity: Symbol(rawValue: 0), key: key))], version: UInt64(step))
                table.set(key, record)
                model[key] = record
            }
        }
        #expect(table.count == model.count)
        #expect(table.keys == model.keys.sorted())
        // The live bytes count the records' values only.
        let valueBytes = model.values.reduce(0) { total, record in
            var writer = ByteWriter()
            for value in record.values { writer.append(value) }
            return total + writer.count
        }
        #expect(table.arenaLiveBytes == valueBytes)
        for key in 0...520 as ClosedRange<UInt64> {
            #expect(table.record(key)?.values == model[key]?.values, "key \(key)")
            #expect(table.version(key) == model[key]?.version, "key \(key)")
        }
    }

    @Test("A walk of every record gives what lookups by key give, with changed records between a snapshot block's, deleted ones and new keys after them", arguments: [false, true])
    func walkMatchesLookups(reopened: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/walk.logstore"
            let model = try CounterModel.make()
            try PagedSnapshotTests.compactedStore(at: path, model: model, counters: 2_000, saveAfter: false)
            var store = try Store(path: path, model: model, options: PagedSnapshotTests.smallBlocks)
            defer { store.close() }
            // Changes spread over the snapshot's blocks: every ninth counter
            // updated (into the arena), every thirteenth deleted, new ones appended.
            let context = store.newContext()
            var changedObjects: [ManagedObject] = []
            for (position, counter) in try context.fetchAll("Counter").enumerated() {
                if position % 13 == 0 {
                    try context.delete(counter)
                } else if position % 9 == 0 {
                    counter["note"] = "changed \(position)"
                    changedObjects.append(counter)
                }
            }
            for number in 0..<40 {
                let counter = try context.insert("Counter")
                counter["name"] = "new \(number)"
                changedObjects.append(counter)
            }
            try context.save()
            let changed = Set(changedObjects.map(\.objectID.key))
            if reopened {
                store.close()
                store = try Store(path: path, model: model, options: PagedSnapshotTests.smallBlocks)
            }
            let entity = try #require(model.entitiesByName["Counter"])
            let state = try store.snapshot().state
            let table = state.table(entity)
            #expect(table.snapshot?.directory.count ?? 0 > 10, "the records span many blocks")
            // The save after the snapshot: every record it changed has its version.
            let saved = try #require(changed.first.flatMap { table.version($0) })
            var walked: [UInt64] = []
            table.forEachRecord { key, version, bytes in
                walked.append(key)
                let record = table.record(key)
                var reader = ByteReader(bytes)
                var values: [StoredValue] = []
                while !reader.isAtEnd, let value = try? reader.readValue(trusted: true) { values.append(value) }
                #expect(values == record?.values, "key \(key)")
                // A record changed since the snapshot has that save's version;
                // one read from a block, the version the block gives it, older.
                if changed.contains(key) {
                    #expect(version == saved && record?.version == saved, "key \(key)")
                } else {
                    #expect(version > 0 && version < saved && version <= record?.version ?? 0, "key \(key)")
                }
            }
            let keys = table.keys, walkedSet = Set(walked)
            #expect(walked == walked.sorted() && walkedSet.count == walked.count, "a walk is in key order, each key once")
            let missing = keys.filter { !walkedSet.contains($0) }
            #expect(missing.isEmpty && walked.count == keys.count && keys.count == table.count, "keys the walk left out: \(missing.prefix(10))")
        }
    }
}
