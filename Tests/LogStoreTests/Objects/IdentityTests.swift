// What IDs promise: an ID handed out is never another object's, even when
// the process dies between insert and save; other contexts never see an
// unsaved insert's ID.

import Foundation
import Testing
@testable import LogStore

@Suite("Identity")
struct IdentityTests {
    static func eventModel() throws -> Model { try Model { Entity("Event") { Attribute("number", .int64) } } }

    @Test("A process killed between insert and save: the IDs it handed out are never given to other objects")
    func crashBetweenInsertAndSave() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/ids.logstore"
            // One saved object first, so the store exists with a key in use.
            do {
                let store = try Store(path: path, model: Self.eventModel())
                let context = store.newContext()
                try context.insert("Event")["number"] = Int64(-1)
                try context.save()
                store.close()
            }
            let child = try CrashChild(arguments: ["insert", path, "100"])
            _ = child.waitForAcknowledgements(100)
            child.kill()
            let handedOut = Set(child.acknowledged)
            #expect(handedOut.count == 100, "the child printed \(handedOut.count) keys")

            let store = try Store(path: path, model: Self.eventModel())
            defer { store.close() }
            let context = store.newContext()
            var fresh: [ManagedObject] = []
            for number in 0..<200 {
                let event = try context.insert("Event")
                event["number"] = Int64(number)
                fresh.append(event)
            }
            try context.save()
            #expect(handedOut.isDisjoint(with: fresh.map(\.objectID.key)), "a key of an unsaved object was handed out again")
            // The unsaved objects' IDs name nothing.
            for key in handedOut.prefix(5) {
                let id = ObjectID(storeID: store.storeID, entity: try store.model.entity(named: "Event"), key: key)
                #expect(throws: LogStoreError.self) { try context.existingObject(with: id) }
            }
        }
    }

    @Test("Closing without saving, then reopening, never reuses an unsaved insert's key; a URI taken before cannot name another object")
    func reopenWithoutSave() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/reopen.logstore"
            let uri: URL
            do {
                let store = try Store(path: path, model: Self.eventModel())
                let context = store.newContext()
                uri = try context.insert("Event").objectID.uriRepresentation
                store.close()
            }
            let store = try Store(path: path, model: Self.eventModel())
            defer { store.close() }
            let context = store.newContext()
            let event = try context.insert("Event")
            try context.save()
            let old = try #require(ObjectID(uriRepresentation: uri))
            #expect(old != event.objectID)
            #expect(throws: LogStoreError.self) { try context.existingObject(with: old) }
        }
    }

    @Test("Keys reserved but not handed out survive compaction: a crash after it still never reuses one")
    func reservationsSurviveCompaction() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/compact.logstore"
            let handedOut: UInt64
            do {
                let store = try Store(path: path, model: Self.eventModel(), options: JournalOptions(compaction: .manual))
                let context = store.newContext()
                try context.insert("Event")
                try context.save()
                handedOut = try context.insert("Event").objectID.key   // never saved
                _ = try store.compact()
                store.close()
            }
            let store = try Store(path: path, model: Self.eventModel())
            defer { store.close() }
            let context = store.newContext()
            #expect(try context.insert("Event").objectID.key > handedOut)
        }
    }

    @Test("Other contexts never receive the ID of another context's unsaved insert")
    func unsavedIDsStayHome() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/home.logstore", model: Self.eventModel())
            defer { store.close() }
            let mine = store.newContext(), theirs = store.newContext()
            let event = try mine.insert("Event")
            #expect(try theirs.fetchIDs("Event").isEmpty)
            #expect(try theirs.count(for: FetchRequest(entityName: "Event")) == 0)
            #expect(throws: LogStoreError.self) { try theirs.existingObject(with: event.objectID) }
        }
    }
}
