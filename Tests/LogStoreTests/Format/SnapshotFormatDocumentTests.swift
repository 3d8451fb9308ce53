// FORMAT.md's worked example of a file with a snapshot (§11.6) is a real
// file: these tests build it with the snapshot writer and the journal, and
// check the document's hex dumps and annotated bytes against it, byte for byte.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("FORMAT.md snapshot example")
struct SnapshotFormatDocumentTests {
    private typealias Document = FormatDocumentTests.Document

    @Test("FORMAT.md's hex dumps of the snapshot example file and of its decompressed index payload are the bytes LogStore writes, and every byte their walkthroughs quote is the byte at its offset, covering every byte in order",
          arguments: ["snapshot-file", "snapshot-index"])
    func exampleMatches(block: String) throws {
        let example = try Example.make()
        try Document.expectExample(block, is: block == "snapshot-file" ? example.file : example.index)
    }

    @Test("The example reads back: version 4, two blocks that start with their context, the index and the transaction after it as written")
    func exampleReadsBack() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/example.logstore"
            let bytes = try Example.build(at: path)
            let header = try JournalFixtures.header(of: bytes, path: path)
            #expect(header.writeVersion == FileLayout.indexFrameVersion && header.readVersion == FileLayout.indexFrameVersion)
            #expect(header.snapshotIndexOffset == Example.indexOffset)

            let frames = try Example.frames(bytes)
            #expect(frames.map(\.header.kind) == [.snapshotBlock, .snapshotBlock, .snapshotIndex, .transaction])
            #expect(frames.map(\.header.sequence) == [1, 2, Example.sequence, Example.sequence + 1])
            // The transaction is under 32 bytes, so raw; the blocks and the
            // index repeat names, so LZ4 makes them smaller.
            #expect(frames.map(\.header.codec) == [.lz4Block, .lz4Block, .lz4Block, .raw])
            #expect(Set(frames.prefix(3).map(\.header.timestampMicroseconds)) == [Microseconds(Example.compactedAt)])
            #expect(frames[2].offset == Example.indexOffset)

            let journal = try Journal(path: path, options: JournalOptions(access: .readOnly))
            defer { journal.close() }
            #expect(journal.recovery.outcome == .clean)
            let snapshot = try #require(journal.snapshot)
            #expect(snapshot.sequence == Example.sequence)
            var index = try #require(journal.takeSnapshotIndex())
            #expect(index.blocks == [
                SnapshotIndex.Block(offset: 64, storedSize: 59, rawSize: 65, checksum: frames[0].header.checksum, recordCount: 2, firstEntity: 0, firstKey: 1, lastEntity: 0, lastKey: 2),
                SnapshotIndex.Block(offset: 163, storedSize: 47, rawSize: 54, checksum: frames[1].header.checksum, recordCount: 1, firstEntity: 0, firstKey: 4, lastEntity: 0, lastKey: 4),
            ])
            index.blocks = []
            #expect(index == Example.expectedIndex)

            var read: [(key: UInt64, version: UInt64, values: [StoredValue])] = []
            for number in snapshot.directory.indices {
                let block = try snapshot.readBlock(number)
                for slot in 0..<block.count {
                    let values = block.withValues(at: slot) { bytes in
                        var reader = ByteReader(bytes)
                        var values: [StoredValue] = []
                        while !reader.isAtEnd, let value = try? reader.readValue() { values.append(value) }
                        return values
                    }
                    read.append((block.key(at: slot), block.version(at: slot), values))
                }
            }
            #expect(read.map(\.key) == Example.records.map(\.key))
            #expect(read.map(\.version) == Example.records.map(\.version))
            #expect(read.map(\.values) == Example.records.map(\.values))
            let transactions = try journal.transactions()
            #expect(transactions.map(\.sequence) == [Example.sequence + 1])
            #expect(transactions.map(\.changes) == [Example.transaction(journal.symbol(for:))])
        }
    }

}

extension SnapshotFormatDocumentTests {
    /// The example of FORMAT.md §11.6: the store of §10's UUID and creation
    /// time, compacted at sequence 7 into a snapshot of three `Item`
    /// records in two blocks, then one save after it.
    enum Example {
        static let storeID = FormatDocumentTests.Example.storeID
        static let createdAt = FormatDocumentTests.Example.createdAt
        /// 2025-01-02T00:00:00Z: when the compaction wrote the snapshot.
        static let compactedAt = Date(timeIntervalSince1970: 1_735_776_000)
        /// 2025-01-02T00:00:05Z: the first save after it.
        static let savedAt = Date(timeIntervalSince1970: 1_735_776_005)
        /// The last transaction the snapshot includes.
        static let sequence: UInt64 = 7
        /// Small enough that the three records fill two blocks (blockSize
        /// counts record bytes, not the context every block starts with).
        static let blockSize = 16
        static let names = ["Item", "name", "parent"]
        /// Where the index frame lands: header, block 1 (40 + 59), block 2 (40 + 47).
        static let indexOffset: UInt64 = 64 + 99 + 87

        /// Item/1 "Lamp" (no parent), Item/2 "Desk" and Item/4 "Sofa", both
        /// with parent Item/1; Item/3 was deleted before the snapshot. Key,
        /// version (the transaction that last changed it), values.
        static let records: [(key: UInt64, version: UInt64, values: [StoredValue])] = [
            (1, 3, [.string("Lamp"), .null]),
            (2, 5, [.string("Desk"), .reference(RecordID(entity: Symbol(rawValue: 0), key: 1))]),
            (4, 7, [.string("Sofa"), .reference(RecordID(entity: Symbol(rawValue: 0), key: 1))]),
        ]

        static var indexes: [SnapshotIndex.Index] {
            [SnapshotIndex.Index(entity: 0, attribute: "name", values: [.string("Desk"), .string("Lamp"), .string("Sofa")], counts: [1, 1, 1], keys: [2, 1, 4])]
        }

        static var pointers: [SnapshotIndex.Pointers] {
            [SnapshotIndex.Pointers(entity: 0, relationship: "parent", targets: [1], counts: [2], sources: [2, 4])]
        }

        /// The index the reader must decode from the file.
        static var expectedIndex: SnapshotIndex {
            var index = SnapshotIndex(sequence: sequence, blockSize: blockSize)
            index.symbols = names
            index.entities = [SnapshotIndex.Entity(name: "Item", slots: ["name", "parent"], nextKey: 5, keys: [1, 2, 4])]
            index.indexes = indexes
            index.pointers = pointers
            index.blocksHaveContext = true
            return index
        }

        /// The save after the snapshot: inserts Item/5 "Rug" with parent
        /// Item/4, using the names of the snapshot's name table.
        static func transaction(_ symbol: (String) -> Symbol) -> [RecordChange] {
            [.insert(RecordID(entity: symbol("Item"), key: 5), [
                Field(symbol("name"), .string("Rug")), Field(symbol("parent"), .reference(RecordID(entity: symbol("Item"), key: 4))),
            ])]
        }

        /// Writes the example file at `path` and returns its bytes.
        static func build(at path: String) throws -> [UInt8] {
            // The snapshot, as a compaction writes it into its new file.
            try {
                let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
                defer { file.close() }
                let context = BlockContext(sequence: sequence, symbols: names, entities: [
                    BlockContext.Entity(name: "Item", slots: ["name", "parent"], destinations: [nil, 0], nextKey: 5),
                ])
                var writer = SnapshotWriter(file: file, context: context, blockSize: blockSize, time: compactedAt, totalRecords: records.count)
                _ = writer.addEntity(name: "Item", slots: ["name", "parent"], nextKey: 5)
                for record in records {
                    var values = ByteWriter(capacity: 32)
                    for value in record.values { values.append(value) }
                    try values.bytes.withUnsafeBytes { try writer.append(key: record.key, version: record.version, values: $0) }
                }
                _ = try writer.finish(
                    header: FileHeader(storeID: storeID, createdAt: createdAt, version: FileLayout.indexFrameVersion), schema: [], dictionary: nil,
                    symbols: names, indexes: indexes, pointers: pointers)
            }()
            // Then a save, through the journal opened on that file.
            let journal = try Journal(path: path)
            try journal.append(transaction(journal.symbol(for:)), at: savedAt)
            journal.close()
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        }

        /// The example file, and the decompressed payload of its index frame.
        static func make() throws -> (file: [UInt8], index: [UInt8]) {
            try withTemporaryDirectory { directory in
                let file = try build(at: directory + "/example.logstore")
                let (offset, header) = try #require(frames(file).first { $0.header.kind == .snapshotIndex })
                let start = Int(offset) + FrameLayout.headerSize
                let stored = Array(file[start..<(start + Int(header.storedSize))])
                guard header.codec == .lz4Block else { return (file, stored) }
                var index = [UInt8](repeating: 0, count: Int(header.rawSize))
                try stored.withUnsafeBytes { source in
                    try index.withUnsafeMutableBytes { try LZ4.decompress(source, into: $0) }
                }
                return (file, index)
            }
        }

        /// The frames of `file` after its header, in order, with their offsets.
        static func frames(_ file: [UInt8]) throws -> [(offset: UInt64, header: FrameHeader)] {
            var frames: [(offset: UInt64, header: FrameHeader)] = []
            var offset = FileLayout.headerSize
            while offset < file.count {
                let head = Array(file[offset..<(offset + FrameLayout.headerSize)])
                let header = try head.withUnsafeBytes { try FrameHeader.parse($0).get() }
                frames.append((UInt64(offset), header))
                offset += Int(header.frameSize)
            }
            return frames
        }
    }
}
