// The commit checks the committed state, not the context's picture of it:
// saves that race between contexts either do what they say or fail, and
// delete rules reach every referrer the store has.

import Foundation
import Synchronization
import Testing
@testable import LogStore

enum Library {
    /// Author -(books, rule)-> Book; Book.author is the stored side.
    /// Shelf <-> Book is many-to-many (Book.shelves stored, by name order).
    static func model(booksRule: DeleteRule = .nullify) throws -> Model {
        try Model(entities: [
            Entity("Author") {
                Attribute("name", .string)
                Relationship("books", to: "Book", inverse: "author", toMany: true, deleteRule: booksRule)
            },
            Entity("Book") {
                Attribute("title", .string)
                Attribute("pages", .int32, default: Int32(0))
                Relationship("author", to: "Author", inverse: "books")
                Relationship("shelves", to: "Shelf", inverse: "books", toMany: true)
            },
            Entity("Shelf") {
                Attribute("label", .string)
                Relationship("books", to: "Book", inverse: "shelves", toMany: true)
            },
        ])
    }

    /// Calls `body` with a new store of this model, closed after.
    static func withStore(booksRule: DeleteRule = .nullify, _ body: (Store) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/library.logstore", model: model(booksRule: booksRule))
            defer { store.close() }
            try body(store)
        }
    }

    /// An author with `count` books, saved; their IDs.
    static func seed(_ store: Store, books count: Int = 2) throws -> (author: ObjectID, books: [ObjectID]) {
        let context = store.newContext()
        let author = try context.insert("Author")
        author["name"] = "Le Guin"
        var books: [ManagedObject] = []
        for number in 0..<count {
            let book = try context.insert("Book")
            book["title"] = "Book \(number)"
            book["author"] = author
            books.append(book)
        }
        try context.save()
        return (author.objectID, books.map(\.objectID))
    }
}

extension Store {
    /// Deletes the record `id` in a context of its own, and saves: another
    /// context's save, as far as the caller's contexts know.
    func deleteInAnotherContext(_ id: ObjectID) throws {
        let other = newContext()
        try other.delete(try other.existingObject(with: id))
        try other.save()
    }
}

@Suite("Commit integrity")
struct CommitIntegrityTests {
    @Test("An update to a record another context deleted is a conflict that names it; observers hear of no update")
    func updateOfDeletedRecord() throws {
        try Library.withStore { store in
            let (_, books) = try Library.seed(store)
            let editor = store.newContext()
            let book = try editor.existingObject(with: books[0])
            #expect(book["title"] as? String == "Book 0")
            try store.deleteInAnotherContext(books[0])

            let heard = Mutex<[StoreChanges]>([])
            store.addObserver { changes in heard.withLock { $0.append(changes) } }
            book["title"] = "Renamed"
            let error = #expect(throws: LogStoreError.self) { try editor.save() }
            #expect(error?.kind == .mergeConflict)
            #expect(error?.message.contains(books[0].description) == true)
            #expect(heard.withLock { $0.isEmpty })
            #expect(try store.newContext().fetchIDs("Book").contains(books[0]) == false)
            #expect(store.crossReferenceProblems.isEmpty)
        }
    }

    @Test("storeWins resolves an update of a deleted record by letting the deletion stand, and saves the rest")
    func updateOfDeletedRecordStoreWins() throws {
        try Library.withStore { store in
            let (_, books) = try Library.seed(store)
            let editor = store.newContext()
            editor.mergePolicy = .storeWins
            let doomed = try editor.existingObject(with: books[0]), kept = try editor.existingObject(with: books[1])
            try store.deleteInAnotherContext(books[0])

            doomed["title"] = "Renamed"
            kept["title"] = "Kept"
            try editor.save()
            let reader = store.newContext()
            #expect(try reader.fetchIDs("Book") == [books[1]])
            #expect(try reader.existingObject(with: books[1])["title"] as? String == "Kept")
            #expect(doomed.isDeleted)
            #expect(store.crossReferenceProblems.isEmpty)
        }
    }

    @Test("Touching a fault whose record was deleted throws .objectNotFound; it never reads as an object of nils")
    func faultOfDeletedRecord() throws {
        try Library.withStore { store in
            let (_, books) = try Library.seed(store)
            let holder = store.newContext()
            let fault = try holder.object(with: books[0])
            #expect(fault.isFault)
            try store.deleteInAnotherContext(books[0])

            let read = #expect(throws: LogStoreError.self) { try fault.value(forKey: "title") }
            #expect(read?.kind == .objectNotFound)
            let write = #expect(throws: LogStoreError.self) { try fault.setValue("X", forKey: "title") }
            #expect(write?.kind == .objectNotFound)
            // A write through the subscript (which cannot throw) fails the save.
            fault["pages"] = Int32(3)
            let save = #expect(throws: LogStoreError.self) { try holder.save() }
            #expect(save?.details.map(\.kind) == [.objectNotFound])
            // A typed read cannot throw: it gives the type's default, never a stale value.
            #expect(fault["title"] == nil)
            #expect(try store.newContext().fetchIDs("Book") == [books[1]])
        }
    }

    @Test("Deleting an author reaches books whose author link this context never loaded (nullify, one context)")
    func nullifyReachesUnloadedReferrers() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/s.logstore"
            let model = try Library.model()
            let (author, books): (ObjectID, [ObjectID])
            do {
                let store = try Store(path: path, model: model)
                (author, books) = try Library.seed(store, books: 3)
                let context = store.newContext()
                // Load one book's link first, so the context's picture is partial.
                _ = try context.existingObject(with: books[0])["author"]
                try context.delete(try context.existingObject(with: author))
                try context.save()
                #expect(store.crossReferenceProblems.isEmpty)
                store.close()
            }
            let store = try Store(path: path, model: model)
            defer { store.close() }
            #expect(store.crossReferenceProblems.isEmpty)
            let context = store.newContext()
            for book in books { #expect(try context.existingObject(with: book)["author"] == nil) }
            #expect(throws: LogStoreError.self) { try context.existingObject(with: author) }
        }
    }

    @Test("A save that links to a record deleted in the committed state fails as a conflict")
    func linkToDeletedRecord() throws {
        try Library.withStore { store in
            let (author, _) = try Library.seed(store, books: 0)
            let writer = store.newContext()
            let loaded = try writer.existingObject(with: author)
            try store.deleteInAnotherContext(author)

            let book = try writer.insert("Book")
            book["author"] = loaded
            let error = #expect(throws: LogStoreError.self) { try writer.save() }
            #expect(error?.kind == .mergeConflict)
            #expect(error?.message.contains(author.description) == true)
            #expect(try store.newContext().fetchIDs("Book").isEmpty)
            #expect(store.crossReferenceProblems.isEmpty)
        }
    }

    @Test("storeWins on a link to a deleted record: the deletion wins, the link is nullified, the rest is saved")
    func linkToDeletedRecordStoreWins() throws {
        try Library.withStore { store in
            let (author, _) = try Library.seed(store, books: 0)
            let writer = store.newContext()
            writer.mergePolicy = .storeWins
            let loaded = try writer.existingObject(with: author)
            try store.deleteInAnotherContext(author)

            let book = try writer.insert("Book")
            book["title"] = "Orphan"
            book["author"] = loaded
            try writer.save()
            #expect(book["author"] == nil)
            let reader = store.newContext()
            let saved = try reader.existingObject(with: book.objectID)
            #expect(saved["title"] as? String == "Orphan" && saved["author"] == nil)
            #expect(store.crossReferenceProblems.isEmpty)
        }
    }

    @Test("deny checks the committed referrers: a book another context added since blocks the author's deletion")
    func denyAgainstCommittedReferrers() throws {
        try Library.withStore(booksRule: .deny) { store in
            let (author, _) = try Library.seed(store, books: 0)
            let deleter = store.newContext()
            let loaded = try deleter.existingObject(with: author)
            _ = loaded["books"]   // the context sees no books
            let other = store.newContext()
            let book = try other.insert("Book")
            book["author"] = try other.existingObject(with: author)
            try other.save()

            try deleter.delete(loaded)
            let error = #expect(throws: LogStoreError.self) { try deleter.save() }
            #expect(error?.kind == .validationFailed || error?.kind == .mergeConflict)
            #expect(try store.newContext().fetchIDs("Author") == [author])
            #expect(store.crossReferenceProblems.isEmpty)
        }
    }

    @Test("cascade and nullify reach referrers other contexts added since this context looked")
    func rulesReachReferrersAddedElsewhere() throws {
        for rule in [DeleteRule.cascade, .nullify] {
            try Library.withStore(booksRule: rule) { store in
                let (author, books) = try Library.seed(store, books: 1)
                let deleter = store.newContext()
                let loaded = try deleter.existingObject(with: author)
                _ = loaded["books"]
                let other = store.newContext()
                let added = try other.insert("Book")
                added["author"] = try other.existingObject(with: author)
                try other.save()

                try deleter.delete(loaded)
                try deleter.save()
                let reader = store.newContext()
                if rule == .cascade {
                    #expect(try reader.fetchIDs("Book").isEmpty, "cascade")
                } else {
                    #expect(try reader.fetchIDs("Book") == [books[0], added.objectID])
                    #expect(try reader.existingObject(with: added.objectID)["author"] == nil)
                }
                #expect(store.crossReferenceProblems.isEmpty, "\(rule)")
            }
        }
    }

    @Test("The context learns what the commit's delete rules did: cascaded objects it holds are deleted, nullified ones refreshed")
    func contextSeesCommitExpansion() throws {
        try Library.withStore(booksRule: .cascade) { store in
            let (author, _) = try Library.seed(store, books: 1)
            let deleter = store.newContext()
            let loaded = try deleter.existingObject(with: author)
            _ = loaded["books"]
            let other = store.newContext()
            let added = try other.insert("Book")
            added["author"] = try other.existingObject(with: author)
            try other.save()
            let addedHere = try deleter.object(with: added.objectID)

            try deleter.delete(loaded)
            try deleter.save()
            #expect(throws: LogStoreError.self) { try deleter.existingObject(with: added.objectID) }
            #expect(throws: LogStoreError.self) { try addedHere.value(forKey: "title") }
        }
    }
}

@Suite("Relationships at size")
struct RelationshipSizeTests {
    @Test("Linking 20,000 children to one parent from either side, then unlinking half: both sides agree, in memory and after reopening")
    func manyChildren() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/many.logstore"
            let model = try Library.model()
            let count = 20_000
            let authorID: ObjectID
            do {
                let store = try Store(path: path, model: model)
                let context = store.newContext()
                let author = try context.insert("Author"), other = try context.insert("Author")
                var books: [ManagedObject] = []
                for number in 0..<count {
                    let book = try context.insert("Book")
                    // Half from the to-many side, half from the to-one side.
                    if number.isMultiple(of: 2) { try author.add(book, to: "books") } else { book["author"] = author }
                    books.append(book)
                }
                #expect((author["books"] as? Set<ManagedObject>)?.count == count)
                // Move every fourth book to the other author, from both sides.
                for (number, book) in books.enumerated() where number.isMultiple(of: 4) {
                    if number.isMultiple(of: 8) { try other.add(book, to: "books") } else { book["author"] = other }
                }
                #expect((author["books"] as? Set<ManagedObject>)?.count == count - count / 4)
                #expect((other["books"] as? Set<ManagedObject>)?.count == count / 4)
                #expect(books.enumerated().allSatisfy { number, book in (book["author"] as? ManagedObject) === (number.isMultiple(of: 4) ? other : author) })
                try context.save()
                authorID = author.objectID
                store.close()
            }
            let store = try Store(path: path, model: model)
            defer { store.close() }
            #expect(store.crossReferenceProblems.isEmpty)
            let context = store.newContext()
            let author = try context.existingObject(with: authorID)
            #expect(try author.objectIDs(forRelationshipNamed: "books").count == count - count / 4)
        }
    }
}

extension CommittedTransaction {
    /// Whether the transaction only reserves keys (the `__Keys` record).
    func onlyReservesKeys(in journal: Journal) -> Bool {
        changes.allSatisfy { journal.name(of: $0.recordID.entity) == Store.keyReservationEntity }
    }
}

@Suite("Commit integrity: delete rules from the deleting context's links")
struct DeleteRuleLinkTests {
    @Test("A cascade on the stored side follows the links as the deleting context left them: a track removed from the playlist first survives")
    func cascadeFollowsTheContextsLinks() throws {
        let model = try Model {
            Entity("Playlist") { Relationship("tracks", to: "Track", inverse: "playlists", toMany: true, deleteRule: .cascade) }
            Entity("Track") {
                Attribute("title", .string)
                Relationship("playlists", to: "Playlist", inverse: "tracks", toMany: true)
            }
        }
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/p.logstore", model: model)
            defer { store.close() }
            let setup = store.newContext()
            let playlist = try setup.insert("Playlist")
            let kept = try setup.insert("Track"), dropped = try setup.insert("Track")
            try playlist.add(kept, to: "tracks")
            try playlist.add(dropped, to: "tracks")
            try setup.save()

            let context = store.newContext()
            let loaded = try context.existingObject(with: playlist.objectID)
            try loaded.remove(try context.existingObject(with: kept.objectID), from: "tracks")
            try context.delete(loaded)
            try context.save()
            #expect(try store.newContext().fetchIDs("Track") == [kept.objectID])
            #expect(store.crossReferenceProblems.isEmpty)
        }
    }

    @Test("deny: an unsaved author deleted while a book links to it can be saved once the book moves to another author")
    func unsavedDeniedAuthorAfterTheBookMoves() throws {
        try Library.withStore(booksRule: .deny) { store in
            let context = store.newContext()
            let other = try context.insert("Author")
            let doomed = try context.insert("Author")
            let book = try context.insert("Book")
            book["author"] = doomed
            try context.delete(doomed)
            book["author"] = other
            try context.save()
            let reader = store.newContext()
            #expect(try reader.existingObject(with: book.objectID).objectIDs(forRelationshipNamed: "author") == [other.objectID])
        }
    }
}
