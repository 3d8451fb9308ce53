// A relationship loaded while its object's snapshot block fails to read
// must not come back empty: the app would see the object unlinked, which
// it is not (the class of ApplyReadFailureTests: a read failure never
// becomes a different record).

import Foundation
import Testing
@testable import LogStore

@Suite("A link read while its block fails")
struct LinkReadFailureTests {
    static let model = try! Model {
        Entity("Shelf") {
            Attribute("name", .string)
            Relationship("books", to: "Book", inverse: "shelf", toMany: true, deleteRule: .nullify)
        }
        Entity("Book") {
            Attribute("title", .string)
            Relationship("shelf", to: "Shelf", inverse: "books", deleteRule: .nullify)
        }
    }

    static let path = "/store.logstore"
    /// Small blocks and a cache of one block, so that reading one record
    /// evicts the block of another.
    static let options = JournalOptions(compaction: .manual, snapshotBlockSize: 128, blockCacheCapacity: 1)

    static func open(_ disk: SimulatedDisk) throws -> Store {
        try Store(journal: Journal(path: path, options: options, fileSystem: disk), model: model)
    }

    @Test("A book loaded before its block is found damaged keeps its shelf: reading the link gives it, not no shelf, and a save of the book reports the damage")
    func linkSurvivesAFailedRead() throws {
        let disk = SimulatedDisk()
        do {
            let store = try Self.open(disk)
            let context = store.newContext()
            let shelf = try context.insert("Shelf")
            shelf["name"] = "fiction"
            for number in 1...40 {
                let book = try context.insert("Book")
                book["title"] = "book \(number)"
                book["shelf"] = shelf
            }
            try context.save()
            _ = try store.compact()
            store.close()
        }
        let store = try Self.open(disk)
        defer { store.close() }
        let context = store.newContext()
        let book = try context.existingObject(with: store.id("Book", 1))
        // Book 40's block evicts book 1's from the cache of one block; then
        // the first data block, which holds book 1, is damaged.
        _ = try store.newContext().existingObject(with: store.id("Book", 40)).value(forKey: "title")
        var bytes = try #require(disk.contents(of: Self.path))
        bytes[FileLayout.pagedFramesStart + FrameLayout.headerSize + 2] ^= 0xFF
        disk.setContents(of: Self.path, to: bytes)
        guard case .unreadable(let failure) = store.lookup(store.id("Book", 1)), failure.kind == .corruptSnapshot else {
            Issue.record("book 1's block still reads")
            return
        }
        let shelf = try book.value(forKey: "shelf") as? ManagedObject
        #expect(shelf?.objectID == store.id("Shelf", 1), "the book's shelf read as \(String(describing: shelf))")

        // A save of the book needs its record as stored, and says so.
        book["title"] = "book 1, second edition"
        do {
            try context.save()
            Issue.record("the book was saved over a record its store cannot read")
        } catch {
            #expect(error.kind == .corruptSnapshot, "\(error.message)")
        }
    }
}
