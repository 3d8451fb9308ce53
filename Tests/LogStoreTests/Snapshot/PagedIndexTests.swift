// A secondary index read from a paged snapshot's leaves as lookups need
// them (FORMAT.md §13.6): the same answers as the records give, after
// changes and compactions, no leaf read at open, and damage to a leaf
// reported by the reads that need it.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Paged index")
struct PagedIndexTests {
    /// Readings with an indexed level (numbers, so the index is read a leaf
    /// at a time) and a label naming each.
    static func model() throws -> Model {
        try Model {
            Entity("Reading") {
                Attribute("level", .int64, indexed: true)
                Attribute("label", .string)
            }
        }
    }

    static let options = CounterModel.manual(.paged)

    /// The level of reading `number`: 20,000 readings share level 5, more
    /// than one 16 KiB leaf holds, so that a group goes on into the next
    /// leaf; the rest spread over 997 levels.
    static func level(_ number: Int) -> Int64 { number < 20_000 ? 5 : Int64(number * 7 % 997) }

    /// Inserts readings `numbers`; returns their levels by label.
    @discardableResult
    static func insert(_ numbers: Range<Int>, into store: Store) throws -> [String: Int64] {
        var levels: [String: Int64] = [:]
        for start in stride(from: numbers.lowerBound, to: numbers.upperBound, by: 10_000) {
            let context = store.newContext()
            for number in start..<min(start + 10_000, numbers.upperBound) {
                let reading = try context.insert("Reading")
                reading["level"] = level(number)
                reading["label"] = "r\(number)"
                levels["r\(number)"] = level(number)
            }
            try context.save()
        }
        return levels
    }

    /// A store of 60,000 readings at `path`, compacted into a paged
    /// snapshot; returns their levels by label.
    static func compactedStore(at path: String, options: JournalOptions = options) throws -> [String: Int64] {
        let store = try Store(path: path, model: try model(), options: options)
        defer { store.close() }
        let levels = try insert(0..<60_000, into: store)
        try store.compact()
        return levels
    }

    /// The predicates the checks ask, each with the levels it selects.
    static let predicates: [(format: String, selects: @Sendable (Int64) -> Bool)] = [
        ("level == 5", { $0 == 5 }),
        ("level == 700", { $0 == 700 }),
        ("level IN {3, 500, 996, 3}", { [3, 500, 996].contains($0) }),
        ("level BETWEEN {100, 200}", { (100...200).contains($0) }),
        ("level > 990", { $0 > 990 }),
        ("level <= 5", { $0 <= 5 }),
        ("level < 0", { $0 < 0 }),
    ]

    /// Every lookup, count and sorted read through the index agrees with `levels`.
    static func check(_ store: Store, _ levels: [String: Int64], _ when: String) throws {
        let context = store.newContext()
        for (format, selects) in predicates {
            let request = FetchRequest(entityName: "Reading", predicate: try ObjectPredicate(format))
            let found = try context.fetch(request).map { $0["label"] as? String ?? "?" }
            let expected = levels.filter { selects($0.value) }.keys
            #expect(Set(found) == Set(expected) && found.count == expected.count, "\(when): \(format)")
            #expect(try context.count(for: request) == expected.count, "\(when): count of \(format)")
        }
        let ordered = levels.values.sorted()
        for ascending in [true, false] {
            for (offset, limit) in [(0, 30), (19_990, 40), (levels.count - 25, 30)] {
                let request = FetchRequest(entityName: "Reading", sortDescriptors: [SortKey("level", ascending: ascending)], fetchLimit: limit, fetchOffset: offset)
                let found = try context.fetch(request).map { $0["level"] as? Int64 ?? -1 }
                let expected = Array((ascending ? ordered : ordered.reversed()).dropFirst(offset).prefix(limit))
                #expect(found == expected, "\(when): sorted by level, ascending \(ascending), from \(offset)")
            }
        }
    }

    @Test("Lookups, counts and sorted reads through an index read a leaf at a time match the records, before and after changes, a compaction and a reopen; open reads no leaf")
    func matchesTheRecords() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/readings.logstore"
            var levels = try Self.compactedStore(at: path)
            let store = try Store(path: path, model: try Self.model(), options: Self.options)
            defer { store.close() }
            let snapshot = try #require(store.journal.snapshot)
            #expect(snapshot.storedIndexes.map(\.attribute) == ["level"])
            #expect(snapshot.indexLeavesRead == 0)
            _ = try store.newContext().count(for: FetchRequest(entityName: "Reading", predicate: try ObjectPredicate("level == 700")))
            // One leaf holds level 700; the table has several.
            #expect(snapshot.indexLeavesRead == 1)
            try Self.check(store, levels, "after open")

            // Changes after the snapshot: new levels, deletions, insertions.
            let context = store.newContext()
            let changed = try context.fetch(FetchRequest(entityName: "Reading", predicate: try ObjectPredicate("level IN {5, 700, 996}"), fetchLimit: 900))
            for (position, reading) in changed.enumerated() {
                let label = reading["label"] as? String ?? "?"
                if position % 3 == 0 {
                    try context.delete(reading)
                    levels[label] = nil
                } else {
                    let level = Int64(position % 1_200) - 100
                    reading["level"] = level
                    levels[label] = level
                }
            }
            try context.save()
            levels.merge(try Self.insert(60_000..<60_500, into: store)) { $1 }
            try Self.check(store, levels, "after changes")

            // A compaction while the store is open: the index moves to the
            // new snapshot's table, read a leaf at a time from there.
            try store.compact()
            let compacted = try #require(store.journal.snapshot)
            #expect(compacted !== snapshot && compacted.indexLeavesRead == 0)
            try Self.check(store, levels, "after a compaction")
            #expect(compacted.indexLeavesRead > 0)
            let more = store.newContext()
            let reading = try more.insert("Reading")
            reading["level"] = Int64(5)
            reading["label"] = "after"
            levels["after"] = 5
            try more.save()
            try Self.check(store, levels, "after a save after the compaction")
            store.close()

            let reopened = try Store(path: path, model: try Self.model(), options: Self.options)
            defer { reopened.close() }
            try Self.check(reopened, levels, "after reopening")
        }
    }

    /// The leaves of the index of `level` in the paged snapshot at `path`.
    static func leaves(_ path: String) throws -> [PagedBlock.Child] {
        let root = try PagedSnapshotTests.root(path)
        let run = root.runs[0]
        let position = try #require(run.tables.firstIndex { $0.name == "level" })
        let tree = try #require(run.tables[position].tree(run: run.number, position: position))
        let file = try SystemFile(path: path, mode: .readOnly)
        defer { file.close() }
        let offset = try #require(try PagedSnapshotTests.header(path).snapshotRootOffset)
        return try PagedSnapshotReader(file: file, rootOffset: offset, fileSize: try file.size()).tableReader(tree, run: run).leaves()
    }

    @Test("A damaged leaf of an index read a leaf at a time: open goes on, every read that needs the leaf throws .corruptSnapshot, so does a compaction, verify finds it and salvage rebuilds the index from the records")
    func damagedLeaf() throws {
        try withTemporaryDirectory { directory in
            let pristine = directory + "/pristine.logstore"
            let levels = try Self.compactedStore(at: pristine)
            let leaves = try Self.leaves(pristine)
            #expect(leaves.count >= 4)
            let bytes = try StoreFileSurgery(path: pristine).bytes
            // The leaf holding level 700, which no other leaf holds.
            let target = try #require(leaves.last { StoredValue.sortOrder(Self.first($0), .int64(700)) != .orderedDescending })

            let path = directory + "/damaged.logstore"
            var damaged = bytes
            let offset = Int(target.handle.offset)
            damaged[offset + FrameLayout.headerSize + Int(target.handle.storedSize) / 2] ^= 0x10
            try JournalFixtures.write(damaged, to: path)

            let opened = try Store(path: path, model: try Self.model(), options: Self.options)
            // A compaction, the first read of the leaf, would write the index
            // without the leaf's entries.
            let compaction = #expect(throws: LogStoreError.self) { try opened.compact() }
            #expect(compaction?.kind == .corruptSnapshot && compaction?.offset == target.handle.offset, "\(String(describing: compaction))")
            let context = opened.newContext()
            for request in [
                FetchRequest(entityName: "Reading", predicate: try ObjectPredicate("level == 700")),
                FetchRequest(entityName: "Reading", predicate: try ObjectPredicate("level BETWEEN {0, 996}")),
                FetchRequest(entityName: "Reading", sortDescriptors: [SortKey("level", ascending: false)], fetchLimit: 59_000),
            ] {
                let fetch = #expect(throws: LogStoreError.self) { try context.fetch(request) }
                #expect(fetch?.kind == .corruptSnapshot && fetch?.offset == target.handle.offset, "\(String(describing: fetch))")
                // A count without a predicate needs no index.
                guard request.predicate != nil else { continue }
                let count = #expect(throws: LogStoreError.self) { try context.count(for: request) }
                #expect(count?.kind == .corruptSnapshot, "\(String(describing: count))")
            }
            opened.close()
            #expect(try StoreInspector.verify(path: path).isValid == false)

            try Self.checkSalvage(path, levels)
        }
    }

    @Test("A leaf rewritten with a valid frame checksum, one of its entries now a tombstone: the reads that reach it throw, and an open with salvage finds it at open and rebuilds the index, losing nothing")
    func resealedLeaf() throws {
        try withTemporaryDirectory { directory in
            let pristine = directory + "/pristine.logstore"
            var uncompressed = Self.options
            uncompressed.compression = .none
            let levels = try Self.compactedStore(at: pristine, options: uncompressed)
            let leaf = try Self.leaves(pristine)[1]
            var bytes = try StoreFileSurgery(path: pristine).bytes
            let start = Int(leaf.handle.offset), size = FrameLayout.headerSize + Int(leaf.handle.storedSize)
            var header = try Array(bytes[start..<(start + FrameLayout.headerSize)]).withUnsafeBytes { try FrameHeader.parse($0).get() }
            #expect(header.codec == .raw && header.kind == .indexBlock)
            // The last byte ends the last entry: its low bits are the state.
            bytes[start + size - 1] ^= 0x01
            bytes.withUnsafeMutableBytes { header.write(into: UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + size)])) }
            let path = directory + "/resealed.logstore"
            try JournalFixtures.write(bytes, to: path)

            guard case .int64(let first) = Self.first(leaf) else { Issue.record("the leaf starts with \(Self.first(leaf))"); return }
            let opened = try Store(path: path, model: try Self.model(), options: Self.options)
            let error = #expect(throws: LogStoreError.self) {
                try opened.newContext().fetch(FetchRequest(entityName: "Reading", predicate: try ObjectPredicate("level == \(first)")))
            }
            #expect(error?.kind == .corruptSnapshot && error?.offset == leaf.handle.offset, "\(String(describing: error))")
            opened.close()

            // recover rebuilds the index too.
            let output = directory + "/recovered.logstore"
            _ = try StoreInspector.recover(path: path, to: output)
            let recovered = try Store(path: output, model: try Self.model(), options: Self.options)
            try Self.check(recovered, levels, "after recover")
            recovered.close()

            try Self.checkSalvage(path, levels)
        }
    }

    /// An open with salvage of the store at `path` loses no record and
    /// answers every check.
    static func checkSalvage(_ path: String, _ levels: [String: Int64]) throws {
        var salvaging = options
        salvaging.recoveryMode = .salvage
        let salvaged = try Store(path: path, model: try model(), options: salvaging)
        defer { salvaged.close() }
        #expect(salvaged.recovery.lostRecords.isEmpty)
        try check(salvaged, levels, "after salvage")
    }

    static func first(_ leaf: PagedBlock.Child) -> StoredValue {
        guard case .value(let value, _) = leaf.group else { return .null }
        return value
    }

    @Test("A damaged branch of an index read a leaf at a time stops the open, which reads every branch")
    func damagedBranch() throws {
        try withTemporaryDirectory { directory in
            let pristine = directory + "/pristine.logstore"
            _ = try Self.compactedStore(at: pristine)
            let root = try PagedSnapshotTests.root(pristine)
            let table = try #require(root.runs[0].tables.first { $0.name == "level" })
            #expect(table.height >= 1)
            var damaged = try StoreFileSurgery(path: pristine).bytes
            damaged[Int(table.top.offset) + FrameLayout.headerSize + Int(table.top.storedSize) / 2] ^= 0x10
            let path = directory + "/damaged.logstore"
            try JournalFixtures.write(damaged, to: path)
            let error = #expect(throws: LogStoreError.self) { try Store(path: path, model: try Self.model(), options: Self.options) }
            #expect(error?.kind == .corruptSnapshot && error?.offset == table.top.offset, "\(String(describing: error))")
        }
    }
}
