// A context's memory follows what the app holds, and merging another
// context's save touches only what that save changed.

import Foundation
import Testing
@testable import LogStore

@Suite("Context memory")
struct ContextMemoryTests {
    @Test("Paging through records in batches and dropping them leaves the context holding nothing; objects with unsaved changes stay")
    func pagingReturnsToStart() throws {
        try Library.withStore { store in
            do {
                let writer = store.newContext()
                for number in 0..<5_000 { try writer.insert("Book")["pages"] = Int32(number) }
                try writer.save()
                #expect(writer.registeredObjects.isEmpty, "saved objects the app let go of are not kept")
            }
            let context = store.newContext()
            var request = FetchRequest(entityName: "Book")
            request.sortDescriptors = [SortKey("pages")]
            request.fetchLimit = 500
            var kept: ManagedObject?
            var seen = 0
            for page in 0..<10 {
                request.fetchOffset = page * 500
                let batch = try context.fetch(request)
                seen += batch.count { $0["pages"] as? Int32 == Int32(page * 500) + Int32(batch.firstIndex(of: $0)!) }
                if page == 3 { kept = batch[7]; kept?["title"] = "Changed" }
                #expect(context.registeredObjects.count <= 501)
            }
            #expect(seen == 5_000)
            // Only the changed object remains, held by the context's changes.
            kept = nil
            #expect(context.registeredObjects.count == 1)
            #expect(context.hasChanges)
            try context.save()
            #expect(context.registeredObjects.isEmpty)
            // The same ID gives an object again, with the saved value.
            let again = try context.fetch(FetchRequest(entityName: "Book", predicate: try ObjectPredicate("title == 'Changed'")))
            #expect(again.count == 1)
        }
    }

    @Test("mergeChanges refreshes what the save changed, derived sides included, and leaves the rest loaded")
    func mergeTouchesOnlyChanges() throws {
        try Library.withStore { store in
            let (author, books) = try Library.seed(store, books: 3)
            let reader = store.newContext()
            let loadedAuthor = try reader.existingObject(with: author)
            #expect((loadedAuthor["books"] as? Set<ManagedObject>)?.count == 3)
            let unrelated = try reader.existingObject(with: books[2])
            _ = unrelated["title"]

            let writer = store.newContext()
            let changes = Locked<[StoreChanges]>([])
            let token = store.addObserver { saved in changes.withLock { $0.append(saved) } }
            let added = try writer.insert("Book")
            added["author"] = try writer.existingObject(with: author)
            try writer.existingObject(with: books[0])["title"] = "Renamed"
            try writer.save()
            store.removeObserver(token)

            for saved in changes.withLock({ $0 }) { reader.mergeChanges(from: saved) }
            #expect((loadedAuthor["books"] as? Set<ManagedObject>)?.count == 4, "the derived side shows the new book")
            #expect(try reader.existingObject(with: books[0])["title"] as? String == "Renamed")
            #expect(!unrelated.isFault, "an object the save did not touch stays loaded")
        }
    }
}
