// Batch requests change records without objects: what they choose, what
// they write, the rules they keep, and what contexts learn of them.

import Foundation
import Synchronization
import Testing
@testable import LogStore

enum Warehouse {
    /// Items with a required name, a rule on their value and an index.
    static func model() throws -> Model {
        try Model(entities: [
            Entity("Item") {
                Attribute("name", .string, optional: false)
                Attribute("value", .int32, default: Int32(1), indexed: true, rules: [.minimum(0)])
                Attribute("note", .string)
                Attribute("scratch", .string, transient: true)
            },
        ])
    }

    static func withStore(_ body: (String, Store) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/warehouse.logstore"
            let store = try Store(path: path, model: model())
            defer { store.close() }
            try body(path, store)
        }
    }

    /// `count` items named "item N" with value N, saved by a context.
    /// A new store at `path`, seeded with `count` items and compacted
    /// when `compacting`, left open for the caller to close.
    static func seededStore(at path: String, count: Int, compacting: Bool, options: JournalOptions = JournalOptions(compaction: .manual)) throws -> Store {
        let store = try Store(path: path, model: model(), options: options)
        do {
            _ = try seed(store, count: count)
            if compacting { _ = try store.compact() }
        } catch {
            store.close()
            throw error
        }
        return store
    }

    static func seed(_ store: Store, count: Int) throws -> [ObjectID] {
        let context = store.newContext()
        var items: [ManagedObject] = []
        for number in 0..<count {
            let item = try context.insert("Item")
            item["name"] = "item \(number)"
            item["value"] = Int32(number)
            items.append(item)
        }
        try context.save()
        return items.map(\.objectID)
    }

    /// The (name, value) of every item, by name.
    static func contents(_ store: Store) throws -> [String: Int32] {
        let context = store.newContext()
        var contents: [String: Int32] = [:]
        for item in try context.fetch(FetchRequest(entityName: "Item")) {
            contents[item["name"] as! String] = item["value"] as? Int32
        }
        return contents
    }
}

@Suite("Batch requests")
struct BatchRequestTests {
    // MARK: - Delete

    @Test("A batch delete removes exactly the records its predicate selects, in one transaction that survives reopening")
    func deleteByPredicate() throws {
        try Warehouse.withStore { path, store in
            let ids = try Warehouse.seed(store, count: 100)
            let heard = Mutex<[StoreChanges]>([])
            store.addObserver { changes in heard.withLock { $0.append(changes) } }
            let result = try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("value >= 90 OR name ENDSWITH '7'")))
            let expected = Set((0..<100).filter { $0 >= 90 || $0 % 10 == 7 }.map { ids[$0] })
            #expect(result.count == expected.count)
            #expect(Set(result.deletedIDs) == expected)
            #expect(result.insertedIDs.isEmpty && result.updatedIDs.isEmpty)
            #expect(result.sequences.count == 1)
            #expect(heard.withLock { $0.map { Set($0.deleted) } } == [expected])
            let remaining = try Warehouse.contents(store)
            #expect(remaining.count == 100 - expected.count)
            #expect(remaining["item 7"] == nil && remaining["item 95"] == nil && remaining["item 8"] == 8)
            // The index on value forgets them too.
            let context = store.newContext()
            #expect(try context.count(for: FetchRequest(entityName: "Item", predicate: ObjectPredicate("value >= 85"))) == 4)
            store.close()
            let reopened = try Store(path: path, model: Warehouse.model())
            defer { reopened.close() }
            #expect(try Warehouse.contents(reopened) == remaining)
        }
    }

    @Test("A batch delete that selects nothing writes nothing")
    func deleteOfNothing() throws {
        try Warehouse.withStore { _, store in
            _ = try Warehouse.seed(store, count: 3)
            let size = try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int
            let result = try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("value > 100")))
            #expect(result.count == 0 && result.sequences.isEmpty && result.deletedIDs.isEmpty)
            #expect(try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int == size)
        }
    }

    @Test("A batch delete applies the delete rules: cascade deletes, nullify unlinks, deny refuses with nothing written", arguments: [DeleteRule.cascade, .nullify, .deny])
    func deleteRules(rule: DeleteRule) throws {
        try Library.withStore(booksRule: rule) { store in
            let (author, books) = try Library.seed(store, books: 3)
            let reader = store.newContext()
            let book = try reader.existingObject(with: books[0])
            #expect((book["author"] as? ManagedObject)?.objectID == author)
            let request = BatchDeleteRequest(entityName: "Author", predicate: try ObjectPredicate("name == 'Le Guin'"))
            switch rule {
            case .deny:
                #expect { try store.execute(request) } throws: { error in
                    (error as? LogStoreError)?.kind == .validationFailed && (error as? LogStoreError)?.details.first?.violation == .deleteDenied
                }
                #expect(try store.newContext().count(for: FetchRequest(entityName: "Author")) == 1)
            case .cascade:
                let result = try store.execute(request)
                #expect(result.count == 1)
                #expect(Set(result.deletedIDs) == Set(books + [author]))
                reader.mergeChanges(from: result)
                #expect(book.isDeleted || book.isFault)
                #expect(try store.newContext().count(for: FetchRequest(entityName: "Book")) == 0)
            default:
                let result = try store.execute(request)
                #expect(result.deletedIDs == [author])
                #expect(Set(result.updatedIDs) == Set(books))
                reader.mergeChanges(from: result)
                #expect(book["author"] == nil)
                let fresh = store.newContext()
                #expect(try fresh.count(for: FetchRequest(entityName: "Book", predicate: ObjectPredicate("author == nil"))) == 3)
            }
        }
    }

    @Test("A context merging a batch delete drops the deleted objects")
    func contextMergesDelete() throws {
        try Warehouse.withStore { _, store in
            let ids = try Warehouse.seed(store, count: 10)
            let context = store.newContext()
            let kept = try context.existingObject(with: ids[1])
            let gone = try context.existingObject(with: ids[2])
            let result = try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("value == 2")))
            context.mergeChanges(from: result)
            #expect(gone.isDeleted)
            #expect(throws: LogStoreError.self) { try context.existingObject(with: ids[2]) }
            #expect(kept["value"] as? Int32 == 1)
        }
    }

    // MARK: - Update

    @Test("A batch update sets the named attributes of the selected records; the index follows and contexts refresh")
    func updateByPredicate() throws {
        try Warehouse.withStore { path, store in
            let ids = try Warehouse.seed(store, count: 50)
            let context = store.newContext()
            let watched = try context.existingObject(with: ids[45])
            let editing = try context.existingObject(with: ids[46])
            editing["note"] = "unsaved"
            let result = try store.execute(BatchUpdateRequest(entityName: "Item", predicate: ObjectPredicate("value >= 40"), propertiesToUpdate: ["value": 1000, "note": "sold"]))
            #expect(result.count == 10)
            #expect(Set(result.updatedIDs) == Set(ids[40...]))
            context.mergeChanges(from: result)
            #expect(watched["value"] as? Int32 == 1000 && watched["note"] as? String == "sold")
            #expect(editing["note"] as? String == "unsaved")
            let fresh = store.newContext()
            #expect(try fresh.count(for: FetchRequest(entityName: "Item", predicate: ObjectPredicate("value == 1000"))) == 10)
            #expect(try fresh.count(for: FetchRequest(entityName: "Item", predicate: ObjectPredicate("value >= 40 AND value < 1000"))) == 0)
            // Setting nil clears.
            try store.execute(BatchUpdateRequest(entityName: "Item", predicate: ObjectPredicate("value == 1000"), propertiesToUpdate: ["note": nil]))
            store.close()
            let reopened = try Store(path: path, model: Warehouse.model())
            defer { reopened.close() }
            let again = reopened.newContext()
            #expect(try again.count(for: FetchRequest(entityName: "Item", predicate: ObjectPredicate("value == 1000 AND note == nil"))) == 10)
            #expect(try Warehouse.contents(reopened)["item 3"] == 3)
        }
    }

    @Test("A batch update with a value that does not fit the model is refused with a typed error, and nothing is written",
          arguments: [
              (["value": "many"], LogStoreError.Kind.wrongType),
              (["value": -5], .validationFailed),
              (["name": nil], .validationFailed),
              (["colour": "red"], .unknownKey),
              (["scratch": "x"], .invalidArgument),
          ] as [([String: (any Sendable)?], LogStoreError.Kind)])
    func updateRefused(properties: [String: (any Sendable)?], kind: LogStoreError.Kind) throws {
        try Warehouse.withStore { _, store in
            _ = try Warehouse.seed(store, count: 5)
            let before = try Warehouse.contents(store)
            let size = try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int
            #expect { try store.execute(BatchUpdateRequest(entityName: "Item", propertiesToUpdate: properties)) } throws: { error in
                guard let error = error as? LogStoreError else { return false }
                return error.kind == kind && error.message.contains("Item.")
            }
            #expect(try Warehouse.contents(store) == before)
            #expect(try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int == size)
        }
    }

    @Test("A batch update cannot set a relationship")
    func updateOfRelationshipRefused() throws {
        try Library.withStore { store in
            _ = try Library.seed(store)
            #expect { try store.execute(BatchUpdateRequest(entityName: "Book", propertiesToUpdate: ["author": nil])) } throws: { error in
                (error as? LogStoreError)?.kind == .invalidArgument && (error as? LogStoreError)?.message.contains("relationship") == true
            }
        }
    }

    @Test("Batch requests racing contexts' saves under group commit choose and change records the saves left, and never fail")
    func raceWithGroupCommit() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/race.logstore", model: Warehouse.model(), options: JournalOptions(durability: .groupCommit(window: .milliseconds(1))))
            defer { store.close() }
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 3) { worker in
                do {
                    if worker == 0 {
                        for round in 0..<60 {
                            try store.execute(BatchUpdateRequest(entityName: "Item", predicate: ObjectPredicate("value == 7"), propertiesToUpdate: ["value": 9]))
                            if round % 3 == 0 { try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("value == 9 AND note == 'old'"))) }
                        }
                        return
                    }
                    let context = store.newContext()
                    // A batch changes records behind the context's back, as another save does.
                    context.mergePolicy = .storeWins
                    for round in 0..<120 {
                        let item = try context.insert("Item")
                        item["name"] = "w\(worker) r\(round)"
                        item["value"] = Int32(7)
                        item["note"] = round % 2 == 0 ? "old" : "new"
                        // Every fourth round deletes what an earlier round inserted,
                        // which a batch may have changed or deleted since.
                        if round % 4 == 3, let earlier = try context.fetch(FetchRequest(entityName: "Item", predicate: ObjectPredicate("name == %@", "w\(worker) r\(round - 2)"))).first {
                            try context.delete(earlier)
                        }
                        try context.save()
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker): \(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            try store.execute(BatchUpdateRequest(entityName: "Item", predicate: ObjectPredicate("value == 7"), propertiesToUpdate: ["value": 9]))
            let context = store.newContext()
            #expect(try context.count(for: FetchRequest(entityName: "Item", predicate: ObjectPredicate("value != 9"))) == 0)
            #expect(try context.count(for: FetchRequest(entityName: "Item")) > 0)
        }
    }

    @Test("A batch update run while a matching insert waits for its group-commit flush changes that record too: it is chosen after the insert applies")
    func batchSeesTheSaveInFlight() throws {
        try withTemporaryDirectory { directory in
            // A slow fsync keeps the insert written and not yet applied.
            let (journal, _) = try makeFaultyJournal(at: directory + "/inflight.logstore", plan: .init(syncDelay: 0.3), durability: .groupCommit(window: .milliseconds(1)))
            let store = try Store(journal: journal, model: Warehouse.model())
            defer { store.close() }
            // The context lives on the saving thread; it hands out the ID and
            // the count of frames written before its save.
            let before = Mutex<(id: ObjectID, frames: Int)?>(nil)
            let saved = DispatchSemaphore(value: 0)
            let failure = Mutex<String?>(nil)
            DispatchQueue.global().async {
                do {
                    let context = store.newContext()
                    let item = try context.insert("Item")
                    item["name"] = "in flight"
                    item["value"] = Int32(7)
                    before.withLock { $0 = (item.objectID, journal.statistics.framesWritten) }
                    try context.save()
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                saved.signal()
            }
            var waiting: (id: ObjectID, frames: Int)?
            while waiting == nil || journal.statistics.framesWritten == waiting!.frames {
                usleep(500)
                waiting = before.withLock { $0 }
                if failure.withLock({ $0 }) != nil { break }
            }
            let id = try #require(waiting?.id)
            // The insert's frame is written; its flush has not returned.
            let result = try store.execute(BatchUpdateRequest(entityName: "Item", predicate: ObjectPredicate("value == 7"), propertiesToUpdate: ["value": 9]))
            saved.wait()
            #expect(failure.withLock { $0 } == nil)
            #expect(result.updatedIDs == [id])
            #expect(try store.newContext().count(for: FetchRequest(entityName: "Item", predicate: ObjectPredicate("value == 7"))) == 0)
        }
    }

    // MARK: - Insert

    @Test("A batch insert writes one transaction per chunk, applies defaults, and its records open again")
    func insertInChunks() throws {
        try Warehouse.withStore { path, store in
            let heard = Mutex(0)
            store.addObserver { _ in heard.withLock { $0 += 1 } }
            let values = (0..<1_050).lazy.map { number -> [String: Any?] in
                number % 2 == 0 ? ["name": "bulk \(number)", "value": number, "note": nil] : ["name": "bulk \(number)"]
            }
            let result = try store.execute(BatchInsertRequest(entityName: "Item", objects: values, recordsPerTransaction: 100))
            #expect(result.count == 1_050)
            #expect(result.sequences.count == 11)
            #expect(heard.withLock { $0 } == 11)
            let ids = result.insertedIDs
            #expect(ids.count == 1_050 && Set(ids).count == 1_050)
            let context = store.newContext()
            let last = try context.existingObject(with: ids[1_049])
            #expect(last["name"] as? String == "bulk 1049" && last["value"] as? Int32 == 1)
            #expect(try context.existingObject(with: ids[1_048])["value"] as? Int32 == 1_048)
            // A context's next insert gets a key never handed out.
            let item = try context.insert("Item")
            item["name"] = "after"
            try context.save()
            #expect(!ids.contains(item.objectID))
            store.close()
            let reopened = try Store(path: path, model: Warehouse.model())
            defer { reopened.close() }
            let contents = try Warehouse.contents(reopened)
            #expect(contents.count == 1_051)
            #expect(contents["bulk 500"] == 500 && contents["bulk 501"] == 1)
        }
    }

    @Test("A batch insert that meets a bad record keeps the transactions before it, says how many records they hold, and writes nothing of its own transaction")
    func insertStopsAtBadRecord() throws {
        try Warehouse.withStore { _, store in
            let values = (0..<250).lazy.map { number -> [String: Any?] in
                number == 230 ? ["value": 5] : ["name": "bulk \(number)", "value": number]
            }
            #expect { try store.execute(BatchInsertRequest(entityName: "Item", objects: values, recordsPerTransaction: 100)) } throws: { error in
                guard let error = error as? LogStoreError else { return false }
                return error.kind == .validationFailed && error.message.contains("record 230") && error.message.contains("200 records")
                    && error.details.first?.violation == .required
            }
            let contents = try Warehouse.contents(store)
            #expect(contents.count == 200)
            #expect(contents["bulk 199"] == 199 && contents["bulk 200"] == nil)
        }
    }

    @Test("A batch insert refuses values of the wrong type, unknown names and relationships, naming the record",
          arguments: [
              (["name": "a", "value": "lots"], LogStoreError.Kind.wrongType),
              (["name": "a", "colour": "red"], .unknownKey),
              (["name": "a", "scratch": "x"], .invalidArgument),
              (["name": "a", "value": -1], .validationFailed),
          ] as [([String: (any Sendable)?], LogStoreError.Kind)])
    func insertRefused(values: [String: (any Sendable)?], kind: LogStoreError.Kind) throws {
        try Warehouse.withStore { _, store in
            let objects: [[String: Any?]] = [["name": "fine"], values.mapValues { $0 as Any? }]
            #expect { try store.execute(BatchInsertRequest(entityName: "Item", objects: objects)) } throws: { error in
                guard let error = error as? LogStoreError else { return false }
                return error.kind == kind && error.message.contains("record 1") && error.message.contains("nothing was written")
            }
            let contents = try Warehouse.contents(store)
            #expect(contents.isEmpty)
        }
    }

    @Test("A batch insert cannot leave a required relationship empty")
    func insertWithRequiredRelationship() throws {
        let model = try Model(entities: [
            Entity("Owner") { Attribute("name", .string); Relationship("pets", to: "Pet", inverse: "owner", toMany: true) },
            Entity("Pet") { Attribute("name", .string); Relationship("owner", to: "Owner", inverse: "pets", optional: false) },
        ])
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/pets.logstore", model: model)
            defer { store.close() }
            #expect { try store.execute(BatchInsertRequest(entityName: "Pet", objects: [["name": "Rex"]])) } throws: { error in
                (error as? LogStoreError)?.details.first?.violation == .required
            }
        }
    }

    @Test("A batch insert stores what a context's insert stores: a transient attribute's default is not kept")
    func insertStoresWhatASaveStores() throws {
        let model = try Model(entities: [
            Entity("Note") {
                Attribute("text", .string)
                Attribute("draft", .string, default: "scratch", transient: true)
            },
        ])
        try withTemporaryDirectory { directory in
            let path = directory + "/notes.logstore"
            let store = try Store(path: path, model: model)
            let result = try store.execute(BatchInsertRequest(entityName: "Note", objects: [["text": "batch"]]))
            let context = store.newContext()
            let saved = try context.insert("Note")
            saved["text"] = "context"
            try context.save()
            func stored(_ store: Store) throws -> [String: StoredValue] {
                var values: [String: StoredValue] = [:]
                for id in try store.newContext().fetchIDs(FetchRequest(entityName: "Note")) {
                    let record = try #require(store.record(id))
                    values[record.values[0] == .string("batch") ? "batch" : "context"] = record.values[1]
                }
                return values
            }
            #expect(result.insertedIDs.count == 1)
            #expect(try stored(store) == ["batch": .null, "context": .null])
            try store.compact()
            store.close()
            let reopened = try Store(path: path, model: model)
            defer { reopened.close() }
            #expect(try stored(reopened) == ["batch": .null, "context": .null])
        }
    }

    @Test("A batch update that names nothing, or tests a derived attribute, is refused with nothing written")
    func updateOfNothingAndDerivedPredicates() throws {
        let model = try Model(entities: [
            Entity("Item") {
                Attribute("value", .int64, default: Int64(0))
                DerivedAttribute("double") { ($0["value"] as? Int64).map { $0 * 2 } }
            },
        ])
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/items.logstore", model: model)
            defer { store.close() }
            _ = try store.execute(BatchInsertRequest(entityName: "Item", objects: [["value": 1], ["value": 2]]))
            let size = try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int
            #expect { try store.execute(BatchUpdateRequest(entityName: "Item", propertiesToUpdate: [:])) } throws: { error in
                (error as? LogStoreError)?.kind == .invalidArgument
            }
            #expect { try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("double == 4"))) } throws: { error in
                (error as? LogStoreError)?.kind == .invalidPredicate && (error as? LogStoreError)?.message.contains("derived") == true
            }
            #expect(try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int == size)
            #expect(try store.newContext().count(for: FetchRequest(entityName: "Item")) == 2)
        }
    }

    @Test("A batch insert that meets a full disk part way fails with .diskFull and says how many records the transactions before it hold, which are there")
    func insertMeetsFullDisk() throws {
        let disk = SimulatedDisk()
        // Space reserved 4 KiB ahead: the batch writes into it, then past it.
        let options = JournalOptions(compaction: .manual, preallocationSize: 4 << 10)
        let store = try Store(journal: Journal(path: FaultInjectionTests.path, options: options, fileSystem: disk), model: Warehouse.model())
        defer { store.close() }
        // Room for the first transactions of 100 records, not for all 20.
        disk.limitFreeSpace(to: 12_000)
        let values = (0..<2_000).lazy.map { number -> [String: Any?] in ["name": "bulk \(number) of a long enough name", "value": number] }
        var thrown: LogStoreError?
        do {
            try store.execute(BatchInsertRequest(entityName: "Item", objects: values, recordsPerTransaction: 100))
        } catch {
            thrown = error
        }
        let error = try #require(thrown, "every transaction fitted: the test needs a smaller disk")
        disk.removeSpaceLimit()
        let count = try store.newContext().count(for: FetchRequest(entityName: "Item"))
        #expect(error.kind == .diskFull, "\(error)")
        #expect(count > 0 && count < 2_000 && count % 100 == 0, "\(count)")
        #expect(error.message.contains("stopped at record \(count)") && error.message.contains("the \(count) records before it"), "\(error.message)")
    }
}
