// Compaction and opening from a snapshot: same contents, less file, no
// history read, one block decoded per record touched.

import Foundation
import Synchronization
import Testing
@_spi(Benchmarks) @testable import LogStore

/// A small model with every kind of thing a snapshot carries: an indexed
/// attribute, a to-one relationship (stored) and its to-many inverse
/// (read through the pointers), an optional string.
enum CounterModel {
    /// The model; with `added`, Counter has one more (string) attribute, a
    /// lightweight migration of the stores written with the plain one.
    static func make(adding added: String? = nil) throws -> Model {
        try Model {
            Entity("Counter") {
                Attribute("name", .string, indexed: true)
                Attribute("value", .int64, default: Int64(0))
                Attribute("note", .string)
                for name in [added].compactMap({ $0 }) { Attribute(name, .string) }
                Relationship("group", to: "Group", inverse: "counters")
            }
            Entity("Group") {
                Attribute("title", .string)
                Relationship("counters", to: "Counter", inverse: "group", toMany: true)
            }
        }
    }

    static let manual = JournalOptions(durability: .deferredToOS, compaction: .manual)

    /// ``manual``, compacting into `format`.
    static func manual(_ format: SnapshotFormat) -> JournalOptions {
        var options = manual
        options.snapshotFormat = format
        return options
    }

    /// Inserts `count` counters named "counter 0", "counter 1", … with
    /// those numbers as values, and saves them.
    @discardableResult
    static func insertCounters(_ count: Int, into context: ObjectContext) throws -> [ManagedObject] {
        var counters: [ManagedObject] = []
        counters.reserveCapacity(count)
        for number in 0..<count {
            let counter = try context.insert("Counter")
            counter["name"] = "counter \(number)"
            counter["value"] = Int64(number)
            counters.append(counter)
        }
        try context.save()
        return counters
    }
}

/// Every live record of `store`, by entity and key, decoded: what must be
/// the same before and after a compaction, and after reopening.
func contents(of store: Store) -> [String: [UInt64: [StoredValue]]] {
    let state = store.state.withLock { $0 }
    var all: [String: [UInt64: [StoredValue]]] = [:]
    for entity in store.model.entities {
        let keys: [UInt64]
        do {
            keys = try state.keys(of: entity.name)
        } catch {
            Issue.record(error, "the keys of \(entity.name) could not be listed")
            keys = []
        }
        for key in keys {
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

    @Test("Compacting keeps every record, index and relationship, in the same process and after reopening", arguments: [SnapshotFormat.indexFrame, .paged])
    func compactThenReopen(format: SnapshotFormat) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/counters.logstore"
            let model = try CounterModel.make()
            let before: [String: [UInt64: [StoredValue]]]
            do {
                let store = try Store(path: path, model: model, options: CounterModel.manual(format))
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
            let store = try Store(path: path, model: model, options: CounterModel.manual(format))
            defer { store.close() }
            #expect(store.journal.snapshot?.isPaged == (format == .paged))
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

    @Test("After a compaction, errors name the store's path, not the temporary name its new file was written under")
    func messagesNameTheStoreAfterCompaction() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/counters.logstore"
            let store = try Store(path: path, model: try CounterModel.make(), options: CounterModel.manual)
            try Self.fill(store, counters: 50)
            try store.compact()
            #expect(store.journal.currentFile.file.path == path)
            #expect(store.journal.snapshot?.path == path)
            store.close()
            // The first thing an app sees of it: a save after close.
            let context = store.newContext()
            _ = try context.insert("Counter")
            let error = #expect(throws: LogStoreError.self) { try context.save() }
            #expect(error?.message.contains(".compacting-") == false, "\(String(describing: error?.message))")
            #expect(error?.path == path)
        }
    }

    @Test("A compacted store opens with the snapshot's records faulted in one block at a time; counting or listing them decodes none", arguments: [SnapshotFormat.indexFrame, .paged])
    func readingOneRecordDecodesOneBlock(format: SnapshotFormat) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/many.logstore"
            let model = try CounterModel.make()
            let count = 100_000
            do {
                let store = try Store(path: path, model: model, options: CounterModel.manual(format))
                defer { store.close() }
                try CounterModel.insertCounters(count, into: store.newContext())
                try store.compact()
            }
            let store = try Store(path: path, model: model, options: CounterModel.manual(format))
            defer { store.close() }
            let snapshot = try #require(store.journal.snapshot)
            #expect(snapshot.dataBlockCount > 10)
            #expect(snapshot.blocksDecoded == 0, "open decodes no block")
            let context = store.newContext()
            let id = store.id("Counter", 4242)
            let counter = try context.existingObject(with: id)
            #expect(counter["name"] as? String == "counter 4241")
            #expect(snapshot.blocksDecoded == 1)

            // Counting and listing every record needs keys, not values.
            let fresh = store.newContext()
            #expect(try fresh.count(for: FetchRequest(entityName: "Counter")) == count)
            #expect(try fresh.count(for: FetchRequest(entityName: "Counter", fetchLimit: 5, fetchOffset: 10)) == 5)
            #expect(try fresh.fetchIDs(FetchRequest(entityName: "Counter")).count == count)
            #expect(snapshot.blocksDecoded == 1, "no block decoded to count or list IDs")
            // A predicate reads values: every block.
            #expect(try fresh.count(for: FetchRequest(entityName: "Counter", predicate: ObjectPredicate("name ENDSWITH '7'"))) == count / 10)
            #expect(snapshot.blocksDecoded == snapshot.dataBlockCount)
        }
    }
}

@Suite("Compaction under load")
struct CompactionUnderLoadTests {
    @Test("Saves during a background compaction are all kept, and a reader from before keeps its values", arguments: [SnapshotFormat.indexFrame, .paged])
    func savesDuringCompaction(format: SnapshotFormat) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/busy.logstore"
            let model = try CounterModel.make()
            let threads = 4
            var expected: [String: [UInt64: [StoredValue]]] = [:]
            do {
                let store = try Store(path: path, model: model, options: CounterModel.manual(format))
                defer { store.close() }
                try CompactionTests.fill(store, counters: 20_000)
                let reader = try store.snapshot()
                let readerContents = contents(of: store)

                let compacting = Atomic<Bool>(true)
                let saves = Atomic<Int>(0)
                let failures = Protected<[String]>([])
                var workers: [Thread] = []
                for thread in 0..<threads {
                    let worker = Thread {
                        let context = store.newContext()
                        var round = 0
                        // Keep saving until the compaction is over, and a few times after.
                        while compacting.load(ordering: .relaxed) || round < 3 {
                            do {
                                let counter = try context.insert("Counter")
                                counter["name"] = "thread \(thread) round \(round)"
                                counter["value"] = Int64(round)
                                for existing in try context.fetch(FetchRequest(entityName: "Counter", predicate: ObjectPredicate("name == %@", "counter \(thread)"))) {
                                    existing["value"] = Int64(1_000_000 * thread + round)
                                }
                                try context.save()
                                saves.add(1, ordering: .relaxed)
                            } catch {
                                failures.withLock { $0.append("\(error)") }
                                return
                            }
                            round += 1
                        }
                    }
                    workers.append(worker)
                    worker.start()
                }
                var seenSavesDuringWrite = false
                let report = try store.compact { stage, _ in
                    // Give the savers time inside the snapshot-writing stage.
                    if stage == .writingSnapshot { usleep(20_000) }
                    if stage == .copyingJournal { seenSavesDuringWrite = saves.load(ordering: .relaxed) > 0 }
                }
                compacting.store(false, ordering: .relaxed)
                while workers.contains(where: { !$0.isFinished }) { usleep(1_000) }
                #expect(failures.withLock { $0 }.isEmpty)
                #expect(seenSavesDuringWrite)
                #expect(report.transactionsCopied > 0, "saves went on while the snapshot was written")

                // The reader from before sees exactly what it saw then.
                var fromReader: [String: [UInt64: [StoredValue]]] = [:]
                for entity in model.entities {
                    for key in try reader.state.keys(of: entity.name) { fromReader[entity.name, default: [:]][key] = reader.state.record(entity, key)?.values }
                }
                #expect(fromReader == readerContents)
                expected = contents(of: store)
                #expect(expected["Counter"]?.values.contains { $0.first == .string("thread 3 round 0") } == true)
            }
            let store = try Store(path: path, model: model, options: CounterModel.manual(format))
            defer { store.close() }
            #expect(contents(of: store) == expected)
        }
    }

    @Test("The automatic policy compacts in the background and keeps the file near the live data")
    func automaticPolicy() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/auto.logstore"
            let model = try CounterModel.make()
            let options = JournalOptions(durability: .deferredToOS, compaction: .automatic(minimumJournalBytes: 64 << 10))
            var expected: [String: [UInt64: [StoredValue]]] = [:]
            do {
                let store = try Store(path: path, model: model, options: options)
                defer { store.close() }
                let context = store.newContext()
                let counters = try CounterModel.insertCounters(200, into: context)
                for round in 0..<3_000 {
                    counters[round % counters.count]["value"] = Int64(round)
                    counters[round % counters.count]["note"] = String(repeating: "x", count: round % 100)
                    try context.save()
                }
                // Let a compaction the last saves started finish.
                store.compactions.gate.withLock {}
                #expect(store.lastCompactionError == nil)
                #expect(store.journal.snapshot != nil, "the policy compacted")
                expected = contents(of: store)
            }
            let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            let store = try Store(path: path, model: model, options: options)
            defer { store.close() }
            #expect(contents(of: store) == expected)
            // 3,000 saves of ~60-byte frames would be over 180 KB uncompacted.
            #expect(size < 160_000, "the file is \(size) bytes")
        }
    }

    @Test("A compaction whose copy rounds see the journal cut back by a failed flush stops cleanly; the store keeps every acknowledged save")
    func copyRoundsAfterACutBack() throws {
        typealias Faults = FaultInjectionTests
        let options = JournalOptions(durability: .groupCommit(window: .zero), compression: .none, compaction: .manual)
        var scene = try Faults.storeWithSaves(3, options: options)
        let store = try #require(scene.store)
        defer { store.close() }
        let flushHeld = DispatchSemaphore(value: 0), releaseFlush = DispatchSemaphore(value: 0)
        let copyHeld = DispatchSemaphore(value: 0), releaseCopy = DispatchSemaphore(value: 0)
        let saver = DispatchGroup()
        let saved = Protected<Bool?>(nil)
        var started = false
        let error = #expect(throws: LogStoreError.self) {
            try store.compact { stage, _ in
                switch stage {
                case .writingSnapshot where !started:
                    // A save larger than a copy round writes its frame while
                    // the snapshot is written; its flush is held.
                    started = true
                    scene.disk.holdNextFdatasync(arrived: flushHeld, gate: releaseFlush)
                    DispatchQueue.global().async(group: saver) {
                        saved.withLock { $0 = (try? Faults.save(4, in: store, padding: 100_000)) != nil }
                    }
                    flushHeld.wait()
                case .copyingJournal:
                    // The first copy round copies that frame; before the next,
                    // its flush fails and the journal is cut back before it.
                    let end = store.journal.currentFile.end
                    scene.disk.arm(failing: 1, of: "fdatasync")
                    scene.disk.holdNextWrite(arrived: copyHeld, gate: releaseCopy)
                    DispatchQueue.global().async {
                        copyHeld.wait()
                        releaseFlush.signal()
                        let deadline = Date(timeIntervalSinceNow: 30)
                        while store.journal.currentFile.end >= end, Date() < deadline { usleep(1_000) }
                        releaseCopy.signal()
                    }
                default:
                    break
                }
            }
        }
        saver.wait()
        #expect(error?.kind == .writeFailed, "\(String(describing: error))")
        #expect(saved.withLock { $0 } == false)
        #expect(scene.disk.allNames == [Faults.path], "the compaction left its file")
        scene.ledger.attempted.insert(4)
        scene.disk.arm()
        var tally = Faults.Tally()
        try Faults.checkAfterPowerCuts(scene.disk, scene.ledger, Faults.Allowance(), "a cut back during compaction", &tally)
    }
}
