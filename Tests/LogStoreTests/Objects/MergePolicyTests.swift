// Merge policies as Core Data defines them, property by property, and
// the errors a conflict or a broken rule gives an app to act on.

import Foundation
import Testing
@testable import LogStore

/// A note whose `willSave` lets a rival save change it after it was read,
/// every time: a save that loses every race it runs.
final class RacedNote: ManagedObject {
    @Managed("text") var text: String?
    @Managed("count") var count: Int32

    /// Called by `willSave` with the saving object (set by one test only).
    nonisolated(unsafe) static var rival: ((RacedNote) -> Void)?
    /// Called by `awakeFromFetch` (set by one test only).
    nonisolated(unsafe) static var awakening: ((RacedNote) -> Void)?

    override func willSave() { Self.rival?(self) }
    override func awakeFromFetch() { Self.awakening?(self) }
}

@Suite("Merge policies")
struct MergePolicyTests {
    /// A saved book; then another context changes `theirs` and saves; then
    /// a context with `policy` changes `mine` on its copy loaded before
    /// that, and saves. Returns the saving context, its copy and the result.
    static func race(_ store: Store, _ policy: MergePolicy, theirs: [String: Any], mine: [String: Any]) throws -> (ObjectContext, ManagedObject, Result<Void, LogStoreError>) {
        let setup = store.newContext()
        let book = try setup.insert("Book")
        book["title"] = "Original"
        book["pages"] = Int32(100)
        try setup.save()
        let context = store.newContext()
        context.mergePolicy = policy
        let copy = try context.existingObject(with: book.objectID)
        let other = store.newContext()
        let theirCopy = try other.existingObject(with: book.objectID)
        for (key, value) in theirs { try theirCopy.setValue(value, forKey: key) }
        try other.save()
        for (key, value) in mine { try copy.setValue(value, forKey: key) }
        return (context, copy, Result { () throws(LogStoreError) in try context.save() })
    }

    static func saved(_ store: Store, _ id: ObjectID) throws -> (String?, Int32?) {
        let reader = store.newContext()
        let book = try reader.existingObject(with: id)
        return (book["title"] as? String, book["pages"] as? Int32)
    }

    @Test("storeWins (mergeByPropertyStoreTrump): a property changed on both sides takes the store's value; one changed only here keeps this context's")
    func storeTrump() throws {
        try Library.withStore { store in
            let (context, copy, result) = try Self.race(store, .mergeByPropertyStoreTrump, theirs: ["title": "Theirs"], mine: ["title": "Mine", "pages": Int32(5)])
            try result.get()
            #expect(try Self.saved(store, copy.objectID) == ("Theirs", 5))
            #expect(copy["title"] as? String == "Theirs" && copy["pages"] as? Int32 == 5)
            withExtendedLifetime(context) {}
        }
    }

    @Test("objectWins (mergeByPropertyObjectTrump): this context's changes are written; properties changed only elsewhere keep theirs, here too")
    func objectTrump() throws {
        try Library.withStore { store in
            let (context, copy, result) = try Self.race(store, .mergeByPropertyObjectTrump, theirs: ["title": "Theirs", "pages": Int32(7)], mine: ["title": "Mine"])
            try result.get()
            #expect(try Self.saved(store, copy.objectID) == ("Mine", 7))
            #expect(copy["pages"] as? Int32 == 7, "the object reloads what the other save changed")
            withExtendedLifetime(context) {}
        }
    }

    @Test("overwrite writes the whole object as this context holds it; rollback drops this context's changes to it")
    func overwriteAndRollback() throws {
        try Library.withStore { store in
            let (_, over, overwritten) = try Self.race(store, .overwrite, theirs: ["pages": Int32(7)], mine: ["title": "Mine"])
            try overwritten.get()
            #expect(try Self.saved(store, over.objectID) == ("Mine", 100))

            let (context, back, rolledBack) = try Self.race(store, .rollback, theirs: ["pages": Int32(7)], mine: ["title": "Mine"])
            try rolledBack.get()
            #expect(try Self.saved(store, back.objectID) == ("Original", 7))
            #expect(back["title"] as? String == "Original" && !context.hasChanges)
        }
    }

    @Test("A save whose policy gives up every change it had writes nothing: no empty transaction, no observer called, and the context has no changes left")
    func givingUpEveryChangeWritesNothing() throws {
        try Library.withStore { store in
            let heard = Protected<[UInt64]>([])
            _ = store.addObserver { changes in heard.withLock { $0.append(changes.sequence) } }
            let (context, copy, result) = try Self.race(store, .rollback, theirs: ["pages": Int32(7)], mine: ["title": "Mine"])
            try result.get()
            // The book's insert and the rival's update, nothing more.
            #expect(heard.withLock { $0 }.count == 2)
            let transactions = try store.journal.transactions()
            #expect(transactions.allSatisfy { !$0.changes.isEmpty }, "\(transactions.map { ($0.sequence, $0.changes.count) })")
            #expect(!context.hasChanges)
            #expect(try Self.saved(store, copy.objectID) == ("Original", 7))
        }
    }

    @Test("refresh(mergeChanges: true) reloads every unchanged property and keeps local changes; the save then does not conflict")
    func refreshMerging() throws {
        try Library.withStore { store in
            let (context, copy, result) = try Self.race(store, .error, theirs: ["pages": Int32(9)], mine: ["title": "Mine"])
            #expect(throws: LogStoreError.self) { try result.get() }
            context.refresh(copy, mergeChanges: true)
            #expect(copy["pages"] as? Int32 == 9 && copy["title"] as? String == "Mine" && copy.hasChanges)
            try context.save()
            #expect(try Self.saved(store, copy.objectID) == ("Mine", 9))

            // mergeChanges: false turns it back into a fault without its changes.
            copy["title"] = "Dropped"
            context.refresh(copy, mergeChanges: false)
            #expect(copy.isFault && !context.hasChanges)
            #expect(copy["title"] as? String == "Mine")
        }
    }

    @Test("A merge conflict lists each object with the version it loaded, the stored version and the keys each side changed")
    func conflictDetails() throws {
        try Library.withStore { store in
            let (_, copy, result) = try Self.race(store, .error, theirs: ["pages": Int32(9)], mine: ["title": "Mine"])
            guard case .failure(let error) = result else { Issue.record("saved over a conflict"); return }
            #expect(error.kind == .mergeConflict)
            let detail = try #require(error.details.first)
            #expect(error.details.count == 1)
            #expect(detail.objectID == copy.objectID)
            let conflict = try #require(detail.conflict)
            #expect(conflict.objectID == copy.objectID)
            #expect(conflict.loadedVersion != nil && conflict.storedVersion != nil && conflict.loadedVersion! < conflict.storedVersion!)
            #expect(conflict.changedHere == ["title"])
            #expect(conflict.changedInStore == ["pages"])
            // Each problem once in the description.
            #expect(error.description.components(separatedBy: copy.objectID.description).count - 1 == 1)
        }
    }

    @Test("A validation failure carries the object, entity, key, rule kind and value as fields; bounds print as integers; each problem prints once")
    func validationFields() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/v.logstore", model: Company.model())
            defer { store.close() }
            let context = store.newContext()
            let gauge = try context.insert("Gauge")
            gauge["reading"] = 150.0
            gauge["label"] = "ok"
            gauge["code"] = "lowercase"
            let error = #expect(throws: LogStoreError.self) { try context.save() }
            let details = error?.details ?? []
            let reading = try #require(details.first { $0.attribute == "reading" })
            #expect(reading.objectID == gauge.objectID && reading.entity == "Gauge")
            #expect(reading.violation == .tooLarge)
            #expect(reading.offendingValue as? Double == 150)
            #expect(reading.message.contains("maximum 100\""))
            let code = details.filter { $0.attribute == "code" }.compactMap(\.violation)
            #expect(code.contains(.pattern) && code.contains(.tooLong))
            #expect(!(reading.message.contains("150")), "values stay out of messages")
            let text = error?.description ?? ""
            #expect(text.components(separatedBy: "Gauge.reading").count - 1 == 1)
        }
    }

    @Test("A deny that the store refuses carries .deleteDenied, the object and its referrers")
    func denyFields() throws {
        try Library.withStore(booksRule: .deny) { store in
            let (author, books) = try Library.seed(store, books: 2)
            let context = store.newContext()
            try context.delete(try context.existingObject(with: author))
            let error = #expect(throws: LogStoreError.self) { try context.save() }
            let detail = try #require(error?.details.first)
            #expect(detail.violation == .deleteDenied && detail.objectID == author)
            #expect(detail.offendingValue as? [ObjectID] == books)
        }
    }
}

/// Saves that resolve conflicts while other saves run between their steps;
/// serialized, since their notes share the hooks' static closures.
@Suite("Merge policies against rival saves", .serialized)
struct MergeRaceTests {
    /// A store with one saved note, and a `.storeWins` context that loaded
    /// it and changed its text, not yet saved.
    static func withRacedNote(_ body: (Store, ObjectID, ObjectContext) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let model = try Model(entities: [Entity("Note", RacedNote.self) {
                Attribute("text", .string)
                Attribute("count", .int32, default: Int32(0))
            }])
            let store = try Store(path: directory + "/raced.logstore", model: model)
            defer { store.close() }
            let setup = store.newContext()
            let note = try setup.insert("Note")
            note["text"] = "original"
            try setup.save()

            let context = store.newContext()
            context.mergePolicy = .mergeByPropertyStoreTrump
            let copy = try context.existingObject(with: note.objectID)
            #expect(copy["count"] as? Int32 == 0)
            copy["text"] = "mine"
            try body(store, note.objectID, context)
        }
    }

    @Test("A save whose merge policy resolves conflicts succeeds even when another save changes its object before every attempt")
    func resolvingSaveIsNotStarved() throws {
        try Self.withRacedNote { store, noteID, context in
            var rivalSaves: Int32 = 0
            let rival = store.newContext()
            RacedNote.rival = { object in
                guard object.managedObjectContext === context else { return }
                // The hook reads the object, as hooks do, before the rival saves.
                _ = object.count
                do {
                    let theirs = try rival.existingObject(with: noteID)
                    rival.refresh(theirs, mergeChanges: false)
                    theirs["count"] = (theirs["count"] as? Int32 ?? 0) + 1
                    try rival.save()
                    rivalSaves += 1
                } catch {
                    Issue.record("the rival's save failed: \(error)")
                }
            }
            defer { RacedNote.rival = nil }
            try context.save()

            let reader = store.newContext()
            let saved = try reader.existingObject(with: noteID)
            #expect(saved["text"] as? String == "mine")
            #expect(saved["count"] as? Int32 == rivalSaves, "every rival save is kept")
            #expect(rivalSaves >= 2, "the first attempt lost its race")
        }
    }

    @Test("awakeFromFetch may save another context while a save resolves a conflict: it is not called under the store's write lock")
    func awakeningDuringResolutionMaySave() throws {
        try Self.withRacedNote { store, noteID, context in
            let other = store.newContext()
            let theirs = try other.existingObject(with: noteID)
            theirs["count"] = Int32(1)
            try other.save()

            // The save meets the conflict, resolves it by refaulting the
            // note, and fulfills it again: an app's awakeFromFetch that
            // records something in a context of its own.
            var audits = 0
            let auditor = store.newContext()
            RacedNote.awakening = { object in
                guard object.managedObjectContext === context else { return }
                do {
                    let audit = try auditor.insert("Note")
                    audit["text"] = "audit"
                    try auditor.save()
                    audits += 1
                } catch {
                    Issue.record("the audit's save failed: \(error)")
                }
            }
            defer { RacedNote.awakening = nil }
            try context.save()

            let reader = store.newContext()
            let saved = try reader.existingObject(with: noteID)
            #expect(saved["text"] as? String == "mine" && saved["count"] as? Int32 == 1)
            #expect(audits >= 1, "the resolution fulfilled the note again")
            #expect(try reader.count(for: FetchRequest(entityName: "Note", predicate: try ObjectPredicate("text == 'audit'"))) == audits)
        }
    }
}
