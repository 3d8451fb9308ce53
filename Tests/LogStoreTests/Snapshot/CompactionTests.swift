// Compaction and opening from a snapshot: same contents, less file, no
// history read, one block decoded per record touched.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

/// A small model with every kind of thing a snapshot carries: an indexed
/// attribute, a to-one relationship (stored) and its to-many inverse
/// (read through the pointers), an optional string.
enum CounterModel {
    static func make() throws -> Model {
        try Model {
            Entity("Counter") {
                Attribute("name", .string, indexed: true)
                Attribute("value", .int64, default: Int64(0))
                Attribute("note", .string)
                Relationship("group", to: "Group", inverse: "counters")
            }
            Entity("Group") {
                Attribute("title", .string)
                Relationship("counters", to: "Counter", inverse: "group", toMany: true)
            }
        }
    }

    static let manual = JournalOptions(durability: .deferredToOS, compaction: .manual)
}

/// Every live record of `store`, by entity and key, decoded: what must be
/// the same before and after a compaction, and after reopening.
func contents(of store: Store) -> [String: [UInt64: [StoredValue]]] {
    let state = store.state.withLock { $0 }
    var all: [String: [UInt64: [StoredValue]]] = [:]
    for entity in store.model.entities {
        for key in state.keys(of: entity.name) {
            all[entity.name, default: [:]][key] = state.record(entity, key)?.values
        }
    }
    return all
}

@Suite("Compaction")
struct CompactionTests {
    /// Fills a store with groups and counters, then changes and deletes some.
    static func fill(_ store: Store, counters: Int = 500) throws {
        let context = store.newContext()
        var groups: [ManagedObject] = []
        for number in 0..<5 {
            let group = try context.insert("Group")
            group["title"] = "group \(number)"
            groups.append(group)
        }
        for number in 0..<counters {
            let counter = try context.insert("Counter")
            counter["name"] = "counter \(number % 50)"
            counter["value"] = Int64(number)
            counter["note"] = number % 3 == 0 ? nil : String(repeating: "n", count: number % 40)
            counter["group"] = groups[number % groups.count]
        }
        try context.save()
        let all = try context.fetchAll("Counter")
        for (position, counter) in all.enumerated() where position % 7 == 0 { counter["value"] = Int64(-position) }
        try context.save()
        for (position, counter) in all.enumerated() where position % 11 == 0 { try context.delete(counter) }
        try context.save()
    }

    @Test("Compacting keeps every record, index and relationship, in the same process and after reopening")
    func compactThenReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/counters.logstore"
            let model = try CounterModel.make()
            let before: [String: [UInt64: [StoredValue]]]
            do {
                let store = try Store(path: path, model: model, options: CounterModel.manual)
                defer { store.close() }
                try Self.fill(store)
                before = contents(of: store)
                let report = try store.compact()
                #expect(report.records == before.values.reduce(0) { $0 + $1.count })
                #expect(contents(of: store) == before)
                // Saves after the compaction go to the new file.
                let context = store.newContext()
                let counter = try context.insert("Counter")
                counter["name"] = "after"
                try context.save()
            }
            let store = try Store(path: path, model: model, options: CounterModel.manual)
            defer { store.close() }
            #expect(store.journal.snapshot != nil)
            #expect(store.transactionsReplayed == 1, "only the save after the snapshot is replayed")
            var after = contents(of: store)
            let added = after["Counter"]?.first { $0.value.first == .string("after") }?.key
            #expect(added != nil)
            if let added { after["Counter"]?[added] = nil }
            #expect(after == before)

            // The indexed attribute and the inverse work from the loaded index and pointers.
            let context = store.newContext()
            let named = try context.fetch(FetchRequest(entityName: "Counter", predicate: ObjectPredicate("name == %@", "counter 7")))
            let expected = before["Counter"]?.values.filter { $0.first == .string("counter 7") }.count
            #expect(named.count == expected)
            for group in try context.fetchAll("Group") {
                let counters = try #require(group["counters"] as? Set<ManagedObject>)
                #expect(counters.allSatisfy { ($0["group"] as? ManagedObject) === group })
                #expect(!counters.isEmpty)
            }
        }
    }

    @Test("A compacted store opens with the snapshot's records faulted in one block at a time")
    func readingOneRecordDecodesOneBlock() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/many.logstore"
            let model = try CounterModel.make()
            let count = 100_000
            do {
                let store = try Store(path: path, model: model, options: CounterModel.manual)
                defer { store.close() }
                let context = store.newContext()
                for number in 0..<count {
                    let counter = try context.insert("Counter")
                    counter["name"] = "counter \(number)"
                    counter["value"] = Int64(number)
                }
                try context.save()
                try store.compact()
            }
            let store = try Store(path: path, model: model, options: CounterModel.manual)
            defer { store.close() }
            let snapshot = try #require(store.journal.snapshot)
            #expect(snapshot.directory.count > 10)
            #expect(snapshot.blocksDecoded == 0, "open decodes no block")
            let context = store.newContext()
            let id = store.id("Counter", 4242)
            let counter = try context.existingObject(with: id)
            #expect(counter["name"] as? String == "counter 4241")
            #expect(snapshot.blocksDecoded == 1)
        }
    }
}
