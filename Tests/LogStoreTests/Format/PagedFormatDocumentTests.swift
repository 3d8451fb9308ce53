// FORMAT.md's worked example of a version 7 file (§13.13) is a real file:
// these tests build it with the snapshot writer, as a compaction does, and
// the journal, and check the document's hex dumps and annotated bytes
// against it, byte for byte.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("FORMAT.md paged snapshot example")
struct PagedFormatDocumentTests {
    private typealias Document = FormatDocumentTests.Document
    private typealias Example = SnapshotFormatDocumentTests.Example

    @Test("FORMAT.md's hex dumps of the version 7 example, its header and its frames from 0x3000, are the bytes LogStore writes, and every byte their walkthroughs quote is the byte at its offset, covering every byte in order",
          arguments: ["paged-header", "paged-frames"])
    func exampleMatches(block: String) throws {
        let file = try Self.make()
        if block == "paged-header" {
            try Document.expectExample(block, is: Array(file[..<FileLayout.headerSize]))
        } else {
            try Document.expectExample(block, is: Array(file[FileLayout.pagedFramesStart...]), base: FileLayout.pagedFramesStart)
        }
    }

    @Test("The example reads back: version 7, zeros up to 0x3000, one run of two data blocks and three tables, its catalog and base root, then the save after it")
    func exampleReadsBack() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/example.logstore"
            let bytes = try Self.build(at: path)
            let header = try JournalFixtures.header(of: bytes, path: path)
            #expect(header.writeVersion == 7 && header.readVersion == 7)
            #expect(bytes[FileLayout.headerSize..<FileLayout.pagedFramesStart].allSatisfy { $0 == 0 })
            let frames = JournalFixtures.frames(in: bytes)
            let kinds = try frames.map { frame in
                try Array(bytes[frame.offset..<(frame.offset + FrameLayout.headerSize)]).withUnsafeBytes { try FrameHeader.parse($0).get() }
            }
            #expect(kinds.map(\.kind) == [.snapshotBlock, .snapshotBlock, .indexBlock, .indexBlock, .indexBlock, .catalog, .root, .transaction])
            #expect(kinds.map(\.codec).allSatisfy { $0 == .raw }, "written with compression .none, so every byte is annotated")
            #expect(header.snapshotRootOffset == UInt64(frames[6].offset))

            let journal = try Journal(path: path, options: JournalOptions(access: .readOnly))
            defer { journal.close() }
            #expect(journal.recovery.outcome == .clean)
            let snapshot = try #require(journal.snapshot)
            #expect(snapshot.sequence == Example.sequence && snapshot.isPaged)
            var index = try #require(journal.takeSnapshotIndex())
            // Open reads the key directory a leaf at a time: it lists no block.
            #expect(index.blocks.isEmpty && snapshot.keyDirectory != nil)
            var expected = Example.expectedIndex
            expected.blockSize = 1
            expected.isPaged = true
            // An index of strings is read whole at open.
            #expect(snapshot.storedIndexes.isEmpty)
            // Open finds each entity's keys through the directory instead of listing them.
            var blockNumbers: [Int] = []
            for entity in index.entities.indices {
                var keys: [UInt64] = []
                index.entities[entity].inSnapshot?.forEachRun(in: snapshot) { block, _, run in
                    if blockNumbers.last != block { blockNumbers.append(block) }
                    for position in 0..<run.count { keys.append(run[position]) }
                }
                #expect(index.entities[entity].keys.isEmpty && keys == expected.entities[entity].keys)
                index.entities[entity].keys = keys
                index.entities[entity].inSnapshot = nil
            }
            #expect(index == expected)
            #expect(try blockNumbers.map { try snapshot.entry($0).recordCount } == [2, 1])
            var read: [(key: UInt64, version: UInt64)] = []
            for number in blockNumbers {
                let block = try snapshot.readBlock(number)
                for slot in 0..<block.count { read.append((block.key(at: slot), block.version(at: slot))) }
            }
            #expect(read.map(\.key) == Example.records.map(\.key))
            #expect(read.map(\.version) == Example.records.map(\.version))
            #expect(try journal.transactions().map(\.changes) == [Example.transaction(journal.symbol(for:))])
            #expect(try StoreInspector.verify(path: path).isValid)
        }
    }

    /// Writes the example at `path`: §11.6's store, compacted into version 7
    /// without compression, then the same save after it; returns its bytes.
    static func build(at path: String) throws -> [UInt8] {
        try {
            let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
            defer { file.close() }
            let context = BlockContext(sequence: Example.sequence, symbols: Example.names, entities: [
                BlockContext.Entity(name: "Item", slots: ["name", "parent"], destinations: [nil, 0], nextKey: 5),
            ])
            var writer = SnapshotWriter(file: file, format: .paged, compression: .none, context: context, blockSize: Example.blockSize, time: Example.compactedAt, totalRecords: Example.records.count)
            _ = writer.addEntity(name: "Item", slots: ["name", "parent"], nextKey: 5)
            for record in Example.records {
                var values = ByteWriter(capacity: 32)
                for value in record.values { values.append(value) }
                try values.bytes.withUnsafeBytes { try writer.append(key: record.key, version: record.version, values: $0) }
            }
            _ = try writer.finishPaged(
                header: FileHeader(storeID: Example.storeID, createdAt: Example.createdAt, version: FileLayout.pagedWriteVersion), schema: [], dictionary: nil,
                symbols: Example.names, indexes: Example.indexes, pointers: Example.pointers)
        }()
        let journal = try Journal(path: path)
        try journal.append(Example.transaction(journal.symbol(for:)), at: Example.savedAt)
        journal.close()
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func make() throws -> [UInt8] {
        try withTemporaryDirectory { directory in try build(at: directory + "/example.logstore") }
    }
}
