// A paged snapshot's key directory read a leaf at a time (FORMAT.md §13.6):
// what open reads of it, lookups and scans through its leaves, and damage
// to a leaf open does not read, found by the first read that needs it.

import Foundation
import Testing
@_spi(Benchmarks) @_spi(Fuzzing) @testable import LogStore

@Suite("Key directory read a leaf at a time")
struct LazyKeyDirectoryTests {
    /// Paged snapshots of 1 KiB data blocks and index blocks of 256 bytes,
    /// so that a few thousand counters make a key directory of many leaves.
    static let smallIndexBlocks = {
        var options = PagedSnapshotTests.smallBlocks
        options.snapshotBlockSize = 1 << 10
        options.snapshotIndexBlockSize = 256
        return options
    }()

    static let salvaging = {
        var options = smallIndexBlocks
        options.recoveryMode = .salvage
        return options
    }()

    /// A compacted store of `counters` counters at `path`, its records by
    /// entity, and its key directory's leaves with which of them open reads.
    static func store(at path: String, counters: Int = 3_000) throws -> (model: Model, records: [String: [UInt64: [StoredValue]]]) {
        let model = try CounterModel.make()
        let records = try PagedSnapshotTests.compactedStore(at: path, model: model, counters: counters, saveAfter: false, options: smallIndexBlocks)
        return (model, records)
    }

    @Test("Open reads the key directory's branches and the leaves where an entity starts or ends; every record reads back through the leaves, each lookup reading at most one")
    func openReadsBoundaryLeavesOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/lazy.logstore"
            let (model, before) = try Self.store(at: path)
            let store = try Store(path: path, model: model, options: Self.smallIndexBlocks)
            defer { store.close() }
            let snapshot = try #require(store.journal.snapshot)
            let keys = try #require(snapshot.keyDirectory)
            // The leaves where an entity's records start or end.
            let boundaries = keys.leaves.indices.filter(keys.isReadAtOpen)
            #expect(keys.leaves.count > 8 && boundaries.count < keys.leaves.count / 2, "\(keys.leaves.count) leaves, \(boundaries.count) where an entity starts or ends")
            #expect(snapshot.keyLeavesRead == boundaries.count && snapshot.blocksDecoded == 0)
            #expect(snapshot.directory.isEmpty, "no directory of every data block")

            // Counts come from the leaves' entry counts.
            let context = store.newContext()
            for (entity, records) in before { #expect(try context.count(for: FetchRequest(entityName: entity)) == records.count) }
            #expect(snapshot.keyLeavesRead == boundaries.count)

            // Each record by key, in a new context each time: one leaf read
            // at most per lookup, and every leaf once over all of them.
            for (entity, records) in before {
                for (key, values) in records.sorted(by: { $0.key < $1.key }) {
                    let leavesBefore = snapshot.keyLeavesRead
                    let object = try store.newContext().existingObject(with: store.id(entity, key))
                    #expect(snapshot.keyLeavesRead - leavesBefore <= 1)
                    #expect(object.objectID.key == key && values.count > 0)
                }
            }
            #expect(snapshot.keyLeavesRead == keys.leaves.count)
            // Keys outside an entity's, and deleted ones inside it, are absent.
            let counters = try #require(before["Counter"])
            let largest = try #require(counters.keys.max())
            for key in [0, largest + 1, largest + 1_000] + (1..<largest).filter({ counters[$0] == nil }).prefix(5) {
                #expect(throws: LogStoreError.self, "Counter/\(key)") { try store.newContext().existingObject(with: store.id("Counter", key)) }
            }
            #expect(PagedSnapshotTests.namedContents(of: store) == before)
            #expect(snapshot.failedReadCount == 0)
        }
    }

    @Test("Saves, deletes, a compaction and a reopen over a key directory read a leaf at a time keep every record")
    func changesCompactionAndReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/lazy.logstore"
            let (model, _) = try Self.store(at: path)
            var expected: [String: [UInt64: [StoredValue]]] = [:]
            do {
                let store = try Store(path: path, model: model, options: Self.smallIndexBlocks)
                defer { store.close() }
                #expect(store.journal.snapshot?.keyDirectory != nil)
                let context = store.newContext()
                // Change and delete records spread over the leaves, by key.
                for key in stride(from: UInt64(2), to: 3_000, by: 97) {
                    guard let counter = try? context.existingObject(with: store.id("Counter", key)) else { continue }
                    if key % 2 == 0 { counter["value"] = Int64(-1) } else { try context.delete(counter) }
                }
                let added = try context.insert("Counter")
                added["name"] = "added"
                try context.save()
                expected = PagedSnapshotTests.namedContents(of: store)
                try store.compact()
                #expect(PagedSnapshotTests.namedContents(of: store) == expected)
            }
            let store = try Store(path: path, model: model, options: Self.smallIndexBlocks)
            defer { store.close() }
            #expect(store.journal.snapshot?.keyDirectory != nil)
            #expect(PagedSnapshotTests.namedContents(of: store) == expected)
        }
    }

    @Test("A damaged, zeroed or misplaced leaf that open does not read is .corruptSnapshot at the first read that needs it, never an absent record; a save after it is refused; verify finds it; salvage keeps every record", arguments: ["flipped", "zeroed", "moved"])
    func damagedLeafFoundLazily(damage: String) throws {
        try withTemporaryDirectory { directory in
            let pristine = directory + "/pristine.logstore"
            let (model, before) = try Self.store(at: pristine)
            let bytes = try StoreFileSurgery(path: pristine).bytes
            // A leaf open does not read, holding counters only, and its first key.
            let (leaf, firstKey, counterEntity): (PagedBlock.Child, UInt64, Int) = try {
                let store = try Store(path: pristine, model: model, options: Self.smallIndexBlocks)
                defer { store.close() }
                let keys = try #require(store.journal.snapshot?.keyDirectory)
                let counter = try #require(store.journal.snapshot?.entityNames.firstIndex(of: "Counter"))
                let inner = try #require(keys.leaves.indices.first { !keys.isBoundary($0) && keys.firstEntity(ofLeaf: $0) == counter && $0 > 2 })
                return (keys.leaves[inner], keys.leaves[inner].key, counter)
            }()
            _ = counterEntity
            let offset = Int(leaf.handle.offset), size = Int(leaf.handle.frameSize)
            var damaged = bytes
            switch damage {
            case "flipped": damaged[offset + FrameLayout.headerSize + Int(leaf.handle.storedSize) / 2] ^= 0x10
            case "zeroed": damaged.replaceSubrange(offset..<(offset + size), with: repeatElement(0, count: size))
            default:
                // The leaf before it written over it: a valid frame, the wrong leaf.
                let frames = try PagedSnapshotTests.frames(bytes)
                let previous = try #require(frames.last { $0.header.kind == .indexBlock && $0.offset < offset && Int($0.header.frameSize) <= size })
                damaged.replaceSubrange(offset..<(offset + Int(previous.header.frameSize)), with: bytes[previous.offset..<(previous.offset + Int(previous.header.frameSize))])
            }
            let path = directory + "/damaged.logstore"
            try JournalFixtures.write(damaged, to: path)

            let store = try Store(path: path, model: model, options: Self.smallIndexBlocks)
            defer { store.close() }
            // The leaf's first record: an error, never "no such record".
            let error = #expect(throws: LogStoreError.self) { try store.newContext().existingObject(with: store.id("Counter", firstKey)) }
            #expect(error?.kind == .corruptSnapshot && error?.offset == leaf.handle.offset, "\(String(describing: error))")
            // A record of another leaf still reads.
            let other = try #require(before["Counter"]?.keys.min())
            #expect(try store.newContext().existingObject(with: store.id("Counter", other)).objectID.key == other)
            // A scan needs every leaf.
            let scan = #expect(throws: LogStoreError.self) { _ = try store.newContext().fetchAll("Counter") }
            #expect(scan?.kind == .corruptSnapshot)
            // A save after a failed read is refused: its checks may have missed a record.
            let context = store.newContext()
            let added = try context.insert("Counter")
            added["name"] = "after the damage"
            #expect(throws: LogStoreError.self) { try context.save() }
            store.close()

            #expect(try StoreInspector.verify(path: path).isValid == false)
            let salvaged = try Store(path: path, model: model, options: Self.salvaging)
            defer { salvaged.close() }
            #expect(PagedSnapshotTests.namedContents(of: salvaged) == before, "every data block is whole")
        }
    }

    /// `path`'s snapshot read again through a key directory whose parent
    /// entries are `leaves` instead of the file's: what a crafted branch
    /// says, with valid checksums.
    static func snapshot(of journal: Journal, index: SnapshotIndex, path: String, leaves: (inout [PagedBlock.Child]) -> Void) throws -> SnapshotFile {
        let honest = try #require(journal.snapshot?.keyDirectory)
        var crafted = honest.leaves
        leaves(&crafted)
        let placement = honest.placement
        let directory = try PagedKeyDirectory(leaves: crafted, tree: placement.tree, run: placement.run, entityNames: placement.entityNames, nextKeys: placement.nextKeys, path: path)
        return SnapshotFile(index: index, tailStart: try #require(journal.snapshot).tailStart, file: try journal.currentFile.file.reopenForReading(), cacheCapacity: 1 << 20,
                            rootOffset: try #require(journal.header.snapshotRootOffset), keyDirectory: directory)
    }

    @Test("A parent entry that puts a leaf's first key later than the leaf's, or an entity's first key later than it is, never makes a record read as absent: the leaf is read and refused")
    func lyingParentEntries() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/lazy.logstore"
            _ = try Self.store(at: path)
            let journal = try Journal(path: path, options: JournalOptions(access: .readOnly))
            defer { journal.close() }
            let honest = try #require(journal.snapshot?.keyDirectory)
            let index = try #require(journal.takeSnapshotIndex())
            let counter = try #require(journal.snapshot?.entityNames.firstIndex(of: "Counter"))
            let inner = try #require(honest.leaves.indices.first { $0 > 0 && !honest.isReadAtOpen($0) && honest.firstEntity(ofLeaf: $0) == counter })
            let realFirst = honest.leaves[inner].key

            // The parent says the inner leaf starts two keys later: its real
            // first key falls between the leaf before and that entry.
            let later = try Self.snapshot(of: journal, index: index, path: path) { $0[inner].key += 2 }
            let keys = try later.pagedEntityKeys()[counter]
            #expect(SnapshotKeys.paged(keys).locate(realFirst, in: later) == .unreadable)
            #expect(later.failedReadCount > 0)
            let truthful = try Self.snapshot(of: journal, index: index, path: path) { _ in }
            #expect(SnapshotKeys.paged(try truthful.pagedEntityKeys()[counter]).locate(realFirst, in: truthful) != .absent)

            // The parent says the counters' first leaf starts one key later:
            // open reads that leaf, and refuses it.
            let first = try #require(honest.leaves.indices.first { honest.firstEntity(ofLeaf: $0) == counter })
            let startLater = try Self.snapshot(of: journal, index: index, path: path) { $0[first].key += 1 }
            #expect(throws: LogStoreError.self) { try startLater.pagedEntityKeys() }
        }
    }
}
