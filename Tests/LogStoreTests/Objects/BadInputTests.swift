// Bad input is recoverable: a rejected write does not block later saves,
// and typed properties that could read nothing are refused with the model.

import Foundation
import Testing
@testable import LogStore

final class Birth: ManagedObject {
    @Managed("born") var born: Date
}

final class TypoBirth: ManagedObject {
    @Managed("bron") var born: Date?
}

/// Inherits its superclass's misspelt property and adds a correct one.
class DatedRecord: ManagedObject {
    @Managed("stampp") var stamp: Date?
}

final class DatedNote: DatedRecord {
    @Managed("text") var text: String?
}

/// A class whose initializer, once armed, waits at a gate after its
/// properties are made: a model check of it is held mid-collection.
final class GatedNote: ManagedObject {
    @Managed("text") var text: String?

    static let arrived = DispatchSemaphore(value: 0)
    static let release = DispatchSemaphore(value: 0)
    nonisolated(unsafe) static var armed = false

    required init(_ creation: Creation) {
        super.init(creation)
        if Self.armed {
            Self.armed = false
            Self.arrived.signal()
            Self.release.wait()
        }
    }
}

final class Owned: ManagedObject {
    @Managed("owner") var owner: Owner
}

final class Owner: ManagedObject {
    @Managed("items") var items: Set<Owned>
}

@Suite("Bad input")
struct BadInputTests {
    @Test("A rejected write of a wrong type stops blocking saves once the key holds a valid value again")
    func wrongTypeIsRecoverable() throws {
        try Library.withStore { store in
            let context = store.newContext()
            let book = try context.insert("Book")
            book["pages"] = "many"          // wrong type: the subscript cannot throw
            let refused = #expect(throws: LogStoreError.self) { try context.save() }
            #expect(refused?.details.first?.kind == .wrongType)
            #expect(refused?.details.first?.attribute == "pages")
            book["pages"] = Int32(12)        // the key holds a valid value again
            try context.save()
            let reader = store.newContext()
            #expect(try reader.existingObject(with: book.objectID)["pages"] as? Int32 == 12)
        }
    }

    @Test("A non-optional typed property over an attribute that can have no value is a model error, not a crash on first read")
    func nonOptionalPropertyNeedsADefault() throws {
        let error = #expect(throws: LogStoreError.self) {
            try Model { Entity("Birth", Birth.self) { Attribute("born", .date) } }
        }
        #expect(error?.kind == .invalidModel)
        #expect(error?.details.first?.attribute == "born")
        #expect(error?.message.contains("Date?") == true)
        // Required without a default: a new object has no value either.
        #expect(throws: LogStoreError.self) {
            try Model { Entity("Birth", Birth.self) { Attribute("born", .date, optional: false) } }
        }
        // With a default there is always a value: accepted, and read.
        let model = try Model { Entity("Birth", Birth.self) { Attribute("born", .date, default: Date(timeIntervalSince1970: 0)) } }
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/b.logstore", model: model)
            defer { store.close() }
            let context = store.newContext()
            let birth = try context.insert(Birth.self)
            #expect(birth.born == Date(timeIntervalSince1970: 0))
            birth["born"] = nil
            #expect(birth.born == Date(timeIntervalSince1970: 0))
        }
    }

    @Test("A typed property whose key the entity lacks, or a non-optional to-one, is a model error")
    func typedPropertyMistakes() throws {
        let typo = #expect(throws: LogStoreError.self) {
            try Model { Entity("Birth", TypoBirth.self) { Attribute("born", .date) } }
        }
        #expect(typo?.details.first?.message.contains("bron") == true)
        let toOne = #expect(throws: LogStoreError.self) {
            try Model {
                Entity("Owned", Owned.self) { Relationship("owner", to: "Owner", inverse: "items") }
                Entity("Owner", Owner.self) { Relationship("items", to: "Owned", inverse: "owner", toMany: true) }
            }
        }
        #expect(toOne?.details.map(\.attribute) == ["owner"])
        // A property a superclass declares is checked too.
        let inherited = #expect(throws: LogStoreError.self) {
            try Model { Entity("DatedNote", DatedNote.self) { Attribute("stamp", .date); Attribute("text", .string) } }
        }
        #expect(inherited?.details.map(\.attribute) == ["stampp"])
    }

    @Test("A check held mid-collection sees none of the properties another thread makes meanwhile")
    func typedPropertyCheckIgnoresOtherThreads() throws {
        let model = try Model { Entity("Birth", Birth.self) { Attribute("born", .date, default: Date(timeIntervalSince1970: 0)) } }
        let entity = try model.entity(named: "Birth")
        GatedNote.armed = true
        let outcome = Protected<Result<Model, any Error>?>(nil)
        let checking = Thread {
            outcome.withLock { $0 = Result { try Model { Entity("GatedNote", GatedNote.self) { Attribute("text", .string) } } } }
        }
        checking.start()
        GatedNote.arrived.wait()
        // The check is collecting; another thread makes objects whose
        // properties name keys GatedNote lacks.
        for key in 0..<10 {
            _ = TypoBirth(ManagedObject.Creation(entity: entity, key: UInt64(key), context: ContextReference(storeID: UUID())))
        }
        GatedNote.release.signal()
        while outcome.withLock({ $0 }) == nil { Thread.sleep(forTimeInterval: 0.001) }
        switch outcome.withLock({ $0 }) {
        case .success?: break
        case .failure(let error)?: Issue.record("the check took another thread's properties: \(error)")
        case nil: Issue.record("no outcome")
        }
    }

    @Test("Models checked on many threads at once each see their own class's properties")
    func typedPropertyChecksAtOnce() throws {
        // Half build a model whose class misspells a key, half one whose
        // class is right, while others make objects of both classes: a
        // check that took another thread's properties would refuse a right
        // model, or name another key.
        let outcomes = Protected<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 64) { iteration in
            let outcome: String
            do {
                switch iteration % 4 {
                case 0:
                    _ = try Model { Entity("Birth", TypoBirth.self) { Attribute("born", .date) } }
                    outcome = "typo accepted"
                case 1:
                    _ = try Model { Entity("DatedNote", DatedNote.self) { Attribute("stampp", .date); Attribute("text", .string) } }
                    outcome = "ok"
                default:
                    let model = try Model { Entity("DatedNote", DatedNote.self) { Attribute("stampp", .date); Attribute("text", .string) } }
                    let entity = try model.entity(named: "DatedNote")
                    for key in 0..<200 {
                        _ = DatedNote(ManagedObject.Creation(entity: entity, key: UInt64(key), context: ContextReference(storeID: UUID())))
                        _ = TypoBirth(ManagedObject.Creation(entity: entity, key: UInt64(key), context: ContextReference(storeID: UUID())))
                    }
                    outcome = "ok"
                }
            } catch let error as LogStoreError {
                // Only the misspelt class's model is refused, and only for its own key.
                outcome = iteration % 4 == 0 && error.details.map { $0.attribute ?? "" } == ["bron"] ? "ok" : "refused: \(error)"
            } catch {
                outcome = "\(error)"
            }
            outcomes.withLock { $0.append(outcome) }
        }
        #expect(outcomes.withLock { $0 }.filter { $0 != "ok" } == [])
    }
    @Test("A save over the frame limit is refused with nothing written, names the batch API, and the context keeps its changes")
    func saveOverTheFrameLimit() throws {
        let model = try Model { Entity("Blob") { Attribute("bytes", .data) } }
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let store = try Store(path: path, model: model, options: JournalOptions(durability: .deferredToOS, compaction: .manual))
            defer { store.close() }
            let context = store.newContext()
            // Five values of 60 MiB: each fits a frame, together they do not.
            let blobs = try (0..<5).map { index in
                let blob = try context.insert("Blob")
                blob["bytes"] = Data(repeating: UInt8(index), count: 60 << 20)
                return blob
            }
            let sizeBefore = try JournalFixtures.fileSize(path)
            let refused = #expect(throws: LogStoreError.self) { try context.save() }
            #expect(refused?.kind == .transactionTooLarge)
            #expect(refused?.message.contains("nothing was written") == true)
            #expect(refused?.message.contains("BatchInsertRequest") == true)
            #expect(try JournalFixtures.fileSize(path) == sizeBefore)
            #expect(context.hasChanges)
            #expect(try store.newContext().count(for: FetchRequest(entityName: "Blob")) == 0)

            // The context saves once its changes fit.
            for blob in blobs.dropFirst() { try context.delete(blob) }
            blobs[0]["bytes"] = Data([1, 2, 3])
            try context.save()
            #expect(try store.newContext().existingObject(with: blobs[0].objectID)["bytes"] as? Data == Data([1, 2, 3]))
        }
    }
}
