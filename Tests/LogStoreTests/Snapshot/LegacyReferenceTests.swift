// Snapshots that object-layer compactions before format version 4 wrote
// could name the source entity in a reference (FORMAT.md §12.2).

import Foundation
import Testing
@testable import LogStore

@Suite("References in snapshots from before format version 4")
struct LegacyReferenceTests {
    /// The problems and notes `verify` reports for the store at `path`.
    private func verify(_ path: String) throws -> (problems: [String], notes: [String]) {
        let report = try StoreInspector.verify(path: path)
        return (report.problems.map(\.message), report.notes)
    }

    @Test("verify notes such references instead of calling them damage, and the next compaction writes the destination entity")
    func nextCompactionNamesTheDestination() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/demo.logstore"
            let demo = try Executables.run("logstore-tool", ["demo", path, "--items", "400"])
            try #require(demo.status == 0, "\(demo.errorOutput)")
            let (itemKey, typeKey) = try {
                let store = try Store(recordedModelAt: path, options: JournalOptions(access: .readOnly, createIfMissing: false))
                defer { store.close() }
                let context = store.newContext()
                let item = try #require(try context.fetch(FetchRequest(entityName: "Item")).first { $0["assetType"] != nil })
                return (item.objectID.key, try #require(item["assetType"] as? ManagedObject).objectID.key)
            }()
            // What the old compaction wrote: a reference whose entity field
            // names the source, Item, copied into the snapshot as it is.
            let journal = try Journal(path: path)
            let item = journal.symbol(for: "Item"), assetType = journal.symbol(for: "assetType")
            try journal.append([.update(RecordID(entity: item, key: itemKey), [Field(assetType, .reference(RecordID(entity: item, key: typeKey)))])])
            journal.close()
            var options = JournalOptions(access: .readWrite, createIfMissing: false, compaction: .manual)
            // The compaction's index frame is read below.
            options.snapshotFormat = .indexFrame
            do {
                let store = try Store(recordedModelAt: path, options: options)
                defer { store.close() }
                try store.compact()
            }
            #expect(try verify(path).problems.contains { $0.contains("reference(s) of Item.assetType name the entity Item") })

            let file = try SystemFile(path: path, mode: .readOnly)
            let header = try JournalFixtures.header(of: file)
            let index = try SnapshotFile.readIndex(in: file, at: try #require(header.snapshotIndexOffset), fileSize: try file.size()).0
            file.close()
            _ = try SnapshotSalvageTests.downgradeToVersion3(path, index)
            let legacy = try verify(path)
            #expect(legacy.problems.isEmpty, "\(legacy.problems)")
            #expect(legacy.notes.contains { $0.contains("before format version 4") })

            do {
                let store = try Store(recordedModelAt: path, options: options)
                defer { store.close() }
                try store.compact()
                let context = store.newContext()
                let first = try #require(try context.fetch(FetchRequest(entityName: "Item")).first { $0.objectID.key == itemKey })
                #expect((first["assetType"] as? ManagedObject)?.objectID.key == typeKey)
            }
            let compacted = try verify(path)
            #expect(compacted.problems.isEmpty, "\(compacted.problems)")
            #expect(!compacted.notes.contains { $0.contains("before format version 4") })
        }
    }
}
