// The packed table of one entity's committed records.

import Foundation
import Testing
@testable import LogStore

@Suite("Entity table")
struct EntityTableTests {
    @Test("Sets, updates and removes read back exactly, through many rewrites that compact the arena, against a dictionary model",
          arguments: [(keys: 500, longestText: 40), (keys: 2_000, longestText: 3_000)])
    func matchesADictionary(keys: Int, longestText: Int) throws {
        var table = EntityTable()
        var model: [UInt64: Record] = [:]
        var random = JournalFixtures.SeededGenerator(seed: 0x7AB1E)
        for step in 0..<20_000 {
            let key = UInt64(random.next() % UInt64(keys)) + 1
            switch random.next() % 4 {
            case 0:
                table.remove(key)
                model[key] = nil
            default:
                let record = Record(values: [.string(String(repeating: "x", count: Int(random.next() % UInt64(longestText)))), .int64(Int64(step)), .null, .reference(RecordID(entity: Symbol(rawValue: 0), key: key))], version: UInt64(step))
                table.set(key, record)
                model[key] = record
            }
        }
        #expect(table.count == model.count)
        #expect(try table.keys() == model.keys.sorted())
        // The live bytes count the records' values only.
        let valueBytes = model.values.reduce(0) { total, record in
            var writer = ByteWriter()
            for value in record.values { writer.append(value) }
            return total + writer.count
        }
        #expect(table.arenaLiveBytes == valueBytes)
        for key in 0...UInt64(keys + 20) {
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
            #expect(table.snapshot?.dataBlockCount ?? 0 > 10, "the records span many blocks")
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
            let keys = try table.keys(), walkedSet = Set(walked)
            #expect(walked == walked.sorted() && walkedSet.count == walked.count, "a walk is in key order, each key once")
            let missing = keys.filter { !walkedSet.contains($0) }
            #expect(missing.isEmpty && walked.count == keys.count && keys.count == table.count, "keys the walk left out: \(missing.prefix(10))")
        }
    }
}

extension EntityTableTests {
    /// Calls `body` with a store of `counters` counters (CompactionTests.fill)
    /// compacted into a paged snapshot of small blocks, opened again.
    static func withCompactedStore(counters: Int, _ body: (Store, Model) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/compacted.logstore"
            let model = try CounterModel.make()
            try PagedSnapshotTests.compactedStore(at: path, model: model, counters: counters, saveAfter: false)
            let store = try Store(path: path, model: model, options: PagedSnapshotTests.smallBlocks)
            defer { store.close() }
            try body(store, model)
        }
    }

    @Test("A table opened from a snapshot keeps bytes per block, not per key; changes cost entries until a compaction moves them into the snapshot")
    func bookkeepingFollowsChanges() throws {
        try Self.withCompactedStore(counters: 20_000) { store, model in
            let entity = try #require(model.entitiesByName["Counter"])
            let opened = try store.snapshot().state.table(entity)
            // The filled store deleted every eleventh counter before the
            // snapshot: its keys skip, and runs are ten keys long.
            let live = (0..<20_000).filter { $0 % 11 != 0 }.count
            #expect(try opened.keys().count == live && opened.count == live && opened.changedCount == 0)
            // 24 bytes a key before.
            #expect(opened.bookkeepingBytes < 5 * live, "\(opened.bookkeepingBytes) bytes to find \(live) records")

            let context = store.newContext()
            let counters = try context.fetchAll("Counter")
            for counter in counters.prefix(300) { counter["note"] = "changed" }
            for counter in counters.suffix(200) { try context.delete(counter) }
            for number in 0..<100 { try context.insert("Counter")["name"] = "new \(number)" }
            try context.save()
            let changed = try store.snapshot().state.table(entity)
            #expect(changed.count == live - 100 && changed.changedCount == 600)

            try store.compact()
            let compacted = try store.snapshot().state.table(entity)
            #expect(compacted.count == live - 100 && compacted.changedCount == 0)
            #expect(compacted.bookkeepingBytes < 5 * live, "\(compacted.bookkeepingBytes) bytes after the compaction")
            #expect(try compacted.keys() == changed.keys())
            for key in try changed.keys().prefix(400) { #expect(compacted.record(key)?.values == changed.record(key)?.values) }
        }
    }

    @Test("A record's version read from its block does not change when a compaction moves it: a context's later save does not conflict, and another save in between still does")
    func versionsSurviveCompaction() throws {
        try Self.withCompactedStore(counters: 2_000) { store, _ in
            let first = store.newContext(), second = store.newContext()
            // Each context loads the values, and with them the versions it will save against.
            let firstCounters = try first.fetchAll("Counter")
            let secondCounters = try second.fetchAll("Counter")
            for counter in firstCounters + secondCounters { _ = counter["name"] }
            // Changed in the arena since the snapshot, then both moved by a compaction.
            let other = store.newContext()
            let othersCounters = try other.fetchAll("Counter")
            othersCounters[1]["note"] = "other"
            try other.save()
            let reloaded = store.newContext()
            let fresh = try reloaded.fetchAll("Counter")
            for counter in fresh { _ = counter["name"] }
            try store.compact()
            firstCounters[0]["note"] = "first"
            try first.save()
            fresh[1]["note"] = "after the compaction"
            try reloaded.save()
            secondCounters[1]["note"] = "second"
            let error = #expect(throws: LogStoreError.self) { try second.save() }
            #expect(error?.kind == .mergeConflict)
        }
    }
}

extension EntityTableTests {
    @Test("Records saved after the snapshot and deleted or changed while a compaction writes the next one stay deleted or changed once it is in use, and after a reopen")
    func changesDuringACompactionStay() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/during.logstore"
            let model = try CounterModel.make()
            try PagedSnapshotTests.compactedStore(at: path, model: model, counters: 600, saveAfter: false)
            var expected: [String: [UInt64: [StoredValue]]] = [:]
            do {
                let store = try Store(path: path, model: model, options: PagedSnapshotTests.smallBlocks)
                defer { store.close() }
                // In the arena when the compaction takes the state: new
                // counters, and changed ones of the snapshot.
                let context = store.newContext()
                let added = try (0..<6).map { number in
                    let counter = try context.insert("Counter")
                    counter["name"] = "added \(number)"
                    return counter
                }
                let old = try context.fetchAll("Counter").prefix(6)
                for counter in old { counter["note"] = "changed before" }
                try context.save()
                var changedDuring = false
                try store.compact { stage, _ in
                    guard stage == .writingSnapshot, !changedDuring else { return }
                    changedDuring = true
                    do {
                        // Deleted: two added, two changed before, one untouched;
                        // changed again: one added, one changed before.
                        for counter in [added[0], added[1], old[old.startIndex], old[old.startIndex + 1]] { try context.delete(counter) }
                        try context.delete(try context.fetchAll("Counter")[100])
                        added[2]["note"] = "changed during"
                        old[old.startIndex + 2]["note"] = "changed during"
                        try context.save()
                    } catch {
                        Issue.record("the save during the compaction failed: \(error)")
                    }
                }
                #expect(changedDuring)
                expected = PagedSnapshotTests.namedContents(of: store)
                let entity = try #require(model.entitiesByName["Counter"])
                let table = try store.snapshot().state.table(entity)
                #expect(try table.keys().count == table.count && table.count == expected["Counter"]?.count)
                #expect(expected["Counter"]?.values.contains { $0.first == .string("added 0") } == false)
                #expect(expected["Counter"]?.values.filter { $0.contains(.string("changed during")) }.count == 2)
                // The index on name, rebuilt from the new snapshot and the
                // changes since, answers as the records do.
                let reader = store.newContext()
                for number in 0..<6 {
                    let found = try reader.fetch(FetchRequest(entityName: "Counter", predicate: try ObjectPredicate("name == %@", "added \(number)")))
                    #expect(found.count == (number < 2 ? 0 : 1), "added \(number)")
                }
                let named = try reader.count(for: FetchRequest(entityName: "Counter", predicate: try ObjectPredicate("name BEGINSWITH 'counter'")))
                #expect(named == (expected["Counter"]?.count ?? 0) - 4)
            }
            let store = try Store(path: path, model: model, options: PagedSnapshotTests.smallBlocks)
            defer { store.close() }
            #expect(PagedSnapshotTests.namedContents(of: store) == expected)
        }
    }
}
