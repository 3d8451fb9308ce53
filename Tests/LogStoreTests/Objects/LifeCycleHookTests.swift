// Core Data's life-cycle hooks: what they change is saved in the same
// transaction, hooks that never settle are stopped, and each is called when
// Core Data calls it.

import Foundation
import Synchronization
import Testing
@testable import LogStore

/// A note whose hooks do what apps do in them.
final class HookedNote: ManagedObject {
    @Managed("text") var text: String?
    @Managed("summary") var summary: String?
    @Managed("revision") var revision: Int32

    nonisolated(unsafe) static var calls: [String] = []
    /// When set, every `willSave` bumps the revision: a hook that never settles.
    nonisolated(unsafe) static var restless = false

    override func willSave() {
        Self.calls.append("willSave \(text ?? "")")
        if Self.restless { revision += 1 }
    }

    override func validateForInsert() throws(LogStoreError) {
        // Filling in a derived value in validation: it must be saved.
        if summary == nil { summary = String((text ?? "").prefix(3)) }
    }

    override func validateForUpdate() throws(LogStoreError) {
        // An audit record inserted by a hook is saved with the change.
        guard let context = managedObjectContext, !isDeleted else { return }
        let audit = try context.insert("Audit")
        audit["message"] = "updated \(text ?? "")"
    }

    override func validateForDelete() throws(LogStoreError) {
        let audit = try managedObjectContext!.insert("Audit")
        audit["message"] = "deleted"
    }

    override func prepareForDeletion() { Self.calls.append("prepareForDeletion \(text ?? "")") }
    override func didSave() { Self.calls.append("didSave \(text ?? "")") }
    override func awakeFromFetch() { Self.calls.append("awakeFromFetch") }
}

@Suite("Life-cycle hooks", .serialized)
struct LifeCycleHookTests {
    static func model() throws -> Model {
        try Model(entities: [
            Entity("Note", HookedNote.self) {
                Attribute("text", .string)
                Attribute("summary", .string)
                Attribute("revision", .int32, default: Int32(0))
            },
            Entity("Audit") { Attribute("message", .string) },
        ])
    }

    @Test("Values set and objects inserted in validateFor… hooks are written in the same transaction")
    func hookChangesAreSaved() throws {
        HookedNote.restless = false
        try withTemporaryDirectory { directory in
            let path = directory + "/hooks.logstore"
            let model = try Self.model()
            let noteID: ObjectID
            do {
                let store = try Store(path: path, model: model)
                let context = store.newContext()
                let note = try context.insert(HookedNote.self)
                note.text = "Groceries"
                try context.save()
                #expect(!context.hasChanges, "a hook's changes are not left unsaved")
                note.text = "Groceries, milk"
                try context.save()
                #expect(!context.hasChanges)
                noteID = note.objectID
                store.close()
            }
            let store = try Store(path: path, model: model)
            defer { store.close() }
            let context = store.newContext()
            let note = try #require(try context.existingObject(with: noteID) as? HookedNote)
            #expect(note.summary == "Gro")
            let audits = try context.fetchAll("Audit").compactMap { $0["message"] as? String }
            #expect(audits == ["updated Groceries, milk"])
            // One transaction per save: the hook's insert did not need a second save.
            let saves = try store.journal.transactions().filter { !$0.onlyReservesKeys(in: store.journal) }
            #expect(saves.count == 3)  // the model, and two saves
        }
    }

    @Test("A hook that keeps dirtying objects is stopped after a bounded number of passes, and nothing is written")
    func restlessHookIsStopped() throws {
        HookedNote.restless = true
        defer { HookedNote.restless = false }
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/restless.logstore", model: Self.model())
            defer { store.close() }
            let context = store.newContext()
            let note = try context.insert(HookedNote.self)
            note.text = "Loop"
            let error = #expect(throws: LogStoreError.self) { try context.save() }
            #expect(error?.kind == .validationFailed)
            #expect(error?.message.contains("passes") == true)
            #expect(try store.newContext().count("Note") == 0)
        }
    }

    @Test("willSave, didSave, prepareForDeletion and awakeFromFetch are called when Core Data calls them")
    func hookOrder() throws {
        HookedNote.restless = false
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/order.logstore", model: Self.model())
            defer { store.close() }
            let context = store.newContext()
            let note = try context.insert(HookedNote.self)
            note.text = "A"
            HookedNote.calls = []
            try context.save()
            // validateForInsert set the summary, so willSave runs again on
            // the changed object, as Core Data calls it again.
            #expect(HookedNote.calls == ["willSave A", "willSave A", "didSave A"])

            let other = store.newContext()
            HookedNote.calls = []
            let fetched = try #require(try other.existingObject(with: note.objectID) as? HookedNote)
            #expect(HookedNote.calls == ["awakeFromFetch"])
            HookedNote.calls = []
            try other.delete(fetched)
            #expect(HookedNote.calls == ["prepareForDeletion A"])
            try other.save()
            #expect(HookedNote.calls == ["prepareForDeletion A", "willSave A", "didSave A"])
            let reader = store.newContext()
            let audits = try reader.fetchAll("Audit").map { $0["message"] as? String }
            #expect(audits == ["deleted"])
        }
    }
}
