// Deletes of consecutive keys written as one delete run (FORMAT.md §5.1,
// format version 7): how they encode, which files hold them, what a
// crafted run does, and that deleting everything no longer grows the file.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Delete runs")
struct DeleteRunTests {
    private typealias Codec = ValueCodecTests.Codec
    private static let names = ["Item", "Tag"]
    private static let item = Symbol(rawValue: 0), tag = Symbol(rawValue: 1)

    private static func deletes(_ entity: Symbol, _ keys: some Sequence<UInt64>) -> [RecordChange] {
        keys.map { .delete(RecordID(entity: entity, key: $0)) }
    }

    // MARK: - The codec

    /// (count, first key) of runs at the edges.
    static let hostileRunShapes: [[UInt64]] = [
        [0, 5], [1, 5], [2, RecordID.keyLimit - 1], [6, RecordID.keyLimit - 5], [2, RecordID.keyLimit - 2], [5, RecordID.keyLimit - 5],
    ]

    @Test("Deletes of consecutive keys of one entity, one after another, are one run; anything else between them ends it; the changes read back as the same deletes")
    func consecutiveDeletesEncodeAsRuns() throws {
        let insert = RecordChange.insert(RecordID(entity: Self.item, key: 200), [])
        let changes = Self.deletes(Self.item, 1...1_000) + Self.deletes(Self.item, [1_002]) + Self.deletes(Self.tag, 1003...1005)
            + [insert] + Self.deletes(Self.tag, 1006...1007) + Self.deletes(Self.item, [7, 6])
        let joined = Codec.encode(changes, declaring: Self.names[...], deleteRuns: true)
        let plain = Codec.encode(changes, declaring: Self.names[...], deleteRuns: false)
        #expect(joined.count < 60, "\(joined.count) bytes")
        #expect(plain.count > 3_500)

        var symbols = SymbolTable()
        let decoded = try Codec.decode(joined, symbols: &symbols)
        #expect(decoded == [
            .deleteRun(RecordID(entity: Self.item, key: 1), count: 1_000),
            .delete(RecordID(entity: Self.item, key: 1_002)),
            .deleteRun(RecordID(entity: Self.tag, key: 1_003), count: 3),
            insert,
            .deleteRun(RecordID(entity: Self.tag, key: 1_006), count: 2),
            .delete(RecordID(entity: Self.item, key: 7)),
            .delete(RecordID(entity: Self.item, key: 6)),
        ])
        // The same keys, in the same order, as the plain encoding's.
        var plainSymbols = SymbolTable()
        let expanded = decoded.flatMap { change -> [RecordChange] in
            if case .deleteRun(let first, _) = change { return Self.deletes(first.entity, change.deletedKeys) }
            return [change]
        }
        #expect(expanded == (try Codec.decode(plain, symbols: &plainSymbols)))
    }

    @Test("A run of fewer than 2 keys, one running past the key limit, and any run in a file older than version 7 do not decode; the largest run that ends below the limit does",
          arguments: hostileRunShapes)
    func hostileRuns(shape: [UInt64]) throws {
        let (count, first) = (shape[0], shape[1])
        let payload = Codec.encode([.deleteRun(RecordID(entity: Self.item, key: first), count: count)], declaring: Self.names[...])
        let valid = count >= 2 && first + count <= RecordID.keyLimit
        #expect(Codec.verdicts(payload) == (valid, valid))
        var symbols = SymbolTable()
        #expect(throws: DecodeFailure.self) { try Codec.decode(payload, symbols: &symbols, deleteRuns: false) }
    }

    // MARK: - Files

    /// A compacted store of `items` items in 4 KiB blocks, and its options.
    private func withCompactedWarehouse(items: Int, _ body: (String, JournalOptions) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/warehouse.logstore"
            var options = JournalOptions(compaction: .manual)
            options.snapshotBlockSize = 4 << 10
            try Warehouse.seededStore(at: path, count: items, compacting: true, options: options).close()
            try body(path, options)
        }
    }

    @Test("A new store is version 7, as a compaction writes; a batch delete of every record then writes a frame of a few bytes, and reopening finds no record",
          arguments: [false, true])
    func deletingEverythingDoesNotGrowTheFile(compacting: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/warehouse.logstore"
            do {
                let store = try Warehouse.seededStore(at: path, count: 10_000, compacting: compacting, options: JournalOptions(compaction: .manual, preallocationSize: 0))
                defer { store.close() }
                #expect(try JournalFixtures.header(of: JournalFixtures.read(path), path: path).readVersion == FileLayout.deleteRunVersion)
                let before = try JournalFixtures.fileSize(path)
                let result = try store.execute(BatchDeleteRequest(entityName: "Item"))
                #expect(result.count == 10_000)
                let grown = try JournalFixtures.fileSize(path) - before
                // Plain deletes took about 4 bytes a record.
                #expect(grown < 100, "the delete of 10,000 records took \(grown) bytes")
                #expect(try Warehouse.contents(store).isEmpty)
            }
            let reopened = try Store(path: path, model: Warehouse.model(), options: JournalOptions(compaction: .manual))
            defer { reopened.close() }
            #expect(try Warehouse.contents(reopened).isEmpty)
            // Keys are never given out again.
            let context = reopened.newContext()
            let item = try context.insert("Item")
            item["name"] = "new"
            try context.save()
            #expect(item.objectID.key > 10_000)
            let journal = reopened.journal
            // The delete, one change.
            let delete = try #require(try journal.transactions().first { $0.changes.contains { if case .deleteRun = $0 { true } else { false } } })
            #expect(delete.changes == [.deleteRun(RecordID(entity: journal.symbol(for: "Item"), key: 1), count: 10_000)])
        }
    }

    /// A store of `version` at `path`, created empty as stores were before
    /// version 7 (version 4), or by the tests of version 5 and 6 files.
    static func olderStore(at path: String, version: UInt16 = FileLayout.indexFrameVersion, options: JournalOptions = JournalOptions()) throws -> Store {
        try Journal.create(path: path, permissions: 0o600, header: FileHeader(storeID: UUID(), createdAt: Date(), version: version))
        return try Store(path: path, model: Warehouse.model(), options: options)
    }

    @Test("A file of version 4, as stores were created before version 7, is never given a run: its deletes stay plain, and the raw journal refuses to append one")
    func olderFilesGetPlainDeletes() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.olderStore(at: directory + "/warehouse.logstore")
            defer { store.close() }
            _ = try Warehouse.seed(store, count: 50)
            try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("value < 40")))
            let journal = store.journal
            #expect(journal.header.readVersion == FileLayout.indexFrameVersion)
            let deletes = try #require(try journal.transactions().last).changes
            #expect(deletes.count == 40 && deletes.allSatisfy { if case .delete = $0 { true } else { false } })
            let end = journal.currentFile.end
            #expect(throws: LogStoreError.self) {
                try journal.append([.deleteRun(RecordID(entity: journal.symbol(for: "Item"), key: 41), count: 5)])
            }
            #expect(journal.currentFile.end == end, "a refused run was written")
            #expect(try Warehouse.contents(store).count == 10)
        }
    }

    @Test("A run in a file older than version 7 is damage: a strict open refuses the file, and salvage keeps what came before it, deleting nothing")
    func runInAnOlderFileIsDamage() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/warehouse.logstore"
            do {
                let store = try Self.olderStore(at: path, options: JournalOptions(durability: .deferredToOS))
                defer { store.close() }
                _ = try Warehouse.seed(store, count: 10)
                let journal = store.journal
                #expect(!journal.holdsDeleteRuns)
                // Past the public append's check, as a crafted file would be,
                // with a save after it so that it is not an unfinished tail.
                _ = try journal.append([RecordChange.deleteRun(RecordID(entity: journal.symbol(for: "Item"), key: 1), count: 10)], at: Date())
                _ = try journal.append([RecordChange.delete(RecordID(entity: journal.symbol(for: "Item"), key: 1))], at: Date())
            }
            #expect(throws: LogStoreError.self) { try Store(path: path, model: Warehouse.model(), options: JournalOptions(access: .readOnly)) }
            let salvaged = try Store(path: path, model: Warehouse.model(), options: JournalOptions(recoveryMode: .salvage))
            defer { salvaged.close() }
            #expect(try Warehouse.contents(salvaged).count == 10)
        }
    }

    @Test("A crafted run naming 2^61 keys opens at once: it deletes the live records among its keys and keeps the others")
    func craftedRunCostsTheTableNotTheRun() throws {
        try withCompactedWarehouse(items: 20) { path, _ in
            do {
                let journal = try Journal(path: path)
                defer { journal.close() }
                #expect(journal.holdsDeleteRuns)
                // Keys 5 up to 2^61 + 4: every item from key 5 on.
                try journal.append([.deleteRun(RecordID(entity: journal.symbol(for: "Item"), key: 5), count: 1 << 61)])
                // A run no longer than the table, of keys both live and not.
                try journal.append([.deleteRun(RecordID(entity: journal.symbol(for: "Item"), key: 2), count: 2)])
            }
            let store = try Store(path: path, model: Warehouse.model())
            defer { store.close() }
            let left = try Warehouse.contents(store)
            #expect(Set(left.keys) == ["item 0", "item 3"], "\(left.keys.sorted())")
        }
    }
}

extension DeleteRunTests {
    @Test("recover of a version 7 file with a damaged data block writes a version 7 store that keeps the delete runs saved after the snapshot")
    func recoverKeepsDeleteRuns() throws {
        try withCompactedWarehouse(items: 5_000) { path, options in
            do {
                let store = try Store(path: path, model: Warehouse.model(), options: options)
                defer { store.close() }
                #expect(store.journal.holdsDeleteRuns)
                // Items 4,000 to 4,999, keys 4,001 to 5,000: one run.
                try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("value >= 4000")))
                let last = try #require(try store.journal.transactions().last)
                #expect(last.changes == [.deleteRun(RecordID(entity: store.journal.symbol(for: "Item"), key: 4_001), count: 1_000)])
            }
            // A bit of the first data block's payload.
            let bytes = try JournalFixtures.read(path)
            let block = try #require(try JournalFixtures.frames(in: bytes).first { frame in
                try bytes[frame.offset..<frame.payloadOffset].withUnsafeBytes { try FrameHeader.parse($0).get() }.kind == .snapshotBlock
            })
            try StoreFileSurgery(path: path).flipBit(at: (block.payloadOffset + block.end) / 2, bit: 3)

            let output = path + ".recovered"
            let recovery = try StoreInspector.recover(path: path, to: output)
            let lost = try #require(recovery.snapshotRecordsLost)
            #expect(lost > 0 && recovery.lostTransactions == 0)
            #expect(try StoreInspector.info(path: output).readVersion == Int(FileLayout.deleteRunVersion))
            let store = try Store(path: output, model: Warehouse.model(), options: JournalOptions(compaction: .manual))
            defer { store.close() }
            let items = try Warehouse.contents(store)
            #expect(items.count == 4_000 - lost)
            #expect(items.values.allSatisfy { $0 < 4_000 }, "a delete run saved after the snapshot is kept")
        }
    }
}

extension DeleteRunTests {
    @Test("Runs that visit more keys in all than the store ever held records, each a few bytes over keys deleted before, make the open fail with .corruptFrame rather than cost the table each time")
    func runsVisitingMoreThanTheRecordsAreDamage() throws {
        try withCompactedWarehouse(items: 2_000) { path, _ in
            do {
                let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
                defer { journal.close() }
                let run = RecordChange.deleteRun(RecordID(entity: journal.symbol(for: "Item"), key: 1), count: 1_000)
                // Keys 1 to 1,000, then the same keys again and again: as
                // many keys as live records each time, none of them live.
                for _ in 0..<11 { try journal.append(Array(repeating: run, count: 100)) }
            }
            let error = #expect(throws: LogStoreError.self) { try Store(path: path, model: Warehouse.model(), options: JournalOptions(access: .readOnly)) }
            #expect(error?.kind == .corruptFrame && error?.message.contains("more keys than the store ever held") == true, "\(String(describing: error))")
        }
    }

    @Test("The raw journal refuses a delete run of fewer than 2 keys or past the key limit, writing nothing",
          arguments: [[1, 5], [0, 5], [3, RecordID.keyLimit - 2], [2, RecordID.keyLimit]] as [[UInt64]])
    func appendRefusesRunsNoReaderAccepts(shape: [UInt64]) throws {
        try withCompactedWarehouse(items: 10) { path, _ in
            let journal = try Journal(path: path)
            defer { journal.close() }
            let end = journal.currentFile.end
            let error = #expect(throws: LogStoreError.self) {
                try journal.append([.deleteRun(RecordID(entity: journal.symbol(for: "Item"), key: shape[1]), count: shape[0])])
            }
            #expect(error?.kind == .invalidArgument)
            #expect(journal.currentFile.end == end)
        }
    }
}

extension DeleteRunTests {
    @Test("A batch delete of every record of a compacted store reads none of their blocks: a record is read only for a version to check or values the delete needs")
    func batchDeleteReadsNoBlock() throws {
        try withCompactedWarehouse(items: 3_000) { path, options in
            let store = try Store(path: path, model: Warehouse.model(), options: options)
            defer { store.close() }
            let snapshot = try #require(store.journal.snapshot)
            #expect(snapshot.dataBlockCount > 10 && snapshot.blocksDecoded == 0)
            let result = try store.execute(BatchDeleteRequest(entityName: "Item"))
            #expect(result.count == 3_000)
            #expect(snapshot.blocksDecoded == 0, "\(snapshot.blocksDecoded) blocks read to delete records by key")
            #expect(try Warehouse.contents(store).isEmpty)
        }
    }
}

extension DeleteRunTests {
    @Test("FORMAT.md §5.1's example: keys 1 to 1,000 of entity 0 deleted are the change 04 00 01 e8 07")
    func formatExampleBytes() throws {
        let payload = Codec.encode(Self.deletes(Self.item, 1...1_000), declaring: [], deleteRuns: true)
        // No declarations, one change.
        #expect(payload == [0x00, 0x01, 0x04, 0x00, 0x01, 0xe8, 0x07])
        #expect(try FormatDocumentTests.Document.text().contains("`04 00 01 e8 07`"))
    }
}
