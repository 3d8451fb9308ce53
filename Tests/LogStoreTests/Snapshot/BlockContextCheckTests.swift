// The context a block starts with, checked against the index's without
// decoding the same bytes twice.

import Foundation
import Synchronization
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Block context check")
struct BlockContextCheckTests {
    static let expected = BlockContext(sequence: 9, symbols: ["name", "parent"], entities: [
        BlockContext.Entity(name: "Item", slots: ["name", "parent"], destinations: [], nextKey: 5),
    ])

    /// `context` encoded, followed by `trailer` (a block's records).
    static func bytes(_ context: BlockContext, trailer: [UInt8] = [0xA1, 0xA2]) -> [UInt8] {
        var writer = ByteWriter()
        context.encode(into: &writer)
        return writer.bytes + trailer
    }

    /// What `check` reads from `bytes`, and where the reader stops.
    static func read(_ bytes: [UInt8], by check: BlockContextCheck) throws(DecodeFailure) -> (BlockContext, Int) {
        try bytes.withBytes { (buffer) throws(DecodeFailure) in
            var reader = ByteReader(buffer)
            let context = try check.read(&reader)
            return (context, reader.position)
        }
    }

    static func withDestinations(_ destinations: [Int?], nextKey: UInt64 = 5, slots: [String] = ["name", "parent"]) -> BlockContext {
        BlockContext(sequence: 9, symbols: ["name", "parent"], entities: [
            BlockContext.Entity(name: "Item", slots: slots, destinations: destinations, nextKey: nextKey),
        ])
    }

    @Test("A context read again from the same bytes is the one decoded, and the reader stops where decoding did")
    func sameBytesTwice() throws {
        let check = BlockContextCheck(expected: Self.expected)
        let block = Self.withDestinations([nil, 0])
        let bytes = Self.bytes(block)
        let first = try Self.read(bytes, by: check)
        let second = try Self.read(bytes, by: check)
        #expect(first.0 == block)
        #expect(second.0 == block)
        #expect(first.1 == bytes.count - 2 && second.1 == first.1)
        #expect(check.decodedCount.load(ordering: .relaxed) == 1, "the second read matched the bytes")
    }

    @Test("After one block agreed, a block whose context says otherwise is refused", arguments: [
        withDestinations([nil, 0], nextKey: 6),
        withDestinations([nil, 0], slots: ["name", "parents"]),
        BlockContext(sequence: 8, symbols: ["name", "parent"], entities: withDestinations([nil, 0]).entities),
    ])
    func disagreementAfterAgreement(other: BlockContext) throws {
        let check = BlockContextCheck(expected: Self.expected)
        _ = try Self.read(Self.bytes(Self.withDestinations([nil, 0])), by: check)
        #expect(throws: DecodeFailure.self) { try Self.read(Self.bytes(other), by: check) }
        // And the agreeing bytes are still taken after the refusal.
        #expect(try Self.read(Self.bytes(Self.withDestinations([nil, 0])), by: check).0 == Self.withDestinations([nil, 0]))
    }

    @Test("Other bytes that say the same (destinations, which the index lacks) are decoded, checked and taken")
    func otherBytesThatAgree() throws {
        let check = BlockContextCheck(expected: Self.expected)
        _ = try Self.read(Self.bytes(Self.withDestinations([nil, 0])), by: check)
        let other = Self.withDestinations([nil, nil])
        #expect(try Self.read(Self.bytes(other), by: check).0 == other)
        #expect(check.decodedCount.load(ordering: .relaxed) == 2)
    }

    @Test("A context cut short after one agreed is refused, not taken from the agreed bytes")
    func truncatedContext() throws {
        let check = BlockContextCheck(expected: Self.expected)
        let bytes = Self.bytes(Self.withDestinations([nil, 0]), trailer: [])
        _ = try Self.read(bytes, by: check)
        #expect(throws: DecodeFailure.self) { try Self.read(Array(bytes.dropLast()), by: check) }
    }
}

@Suite("Data block size")
struct DataBlockSizeTests {
    /// An entity of 120 attributes with 40-character names: a context
    /// larger than the default block.
    static func wideModel() throws -> Model {
        try Model {
            Entity("Wide") {
                for slot in 0..<120 {
                    Attribute(Self.name(slot), .int64)
                }
            }
        }
    }

    static func name(_ slot: Int) -> String { "an_attribute_with_a_rather_long_name_\(String(format: "%03d", slot))" }

    @Test("A compaction fills data blocks to at least three times the context each repeats")
    func blocksGrowWithTheContext() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/wide.logstore"
            do {
                let store = try Store(path: path, model: try Self.wideModel(), options: JournalOptions(compaction: .manual))
                defer { store.close() }
                let context = store.newContext()
                for number in 0..<2_000 {
                    let object = try context.insert("Wide")
                    object[Self.name(0)] = Int64(number)
                }
                try context.save()
                try store.compact()
            }
            let file = try SystemFile(path: path, mode: .readOnly)
            defer { file.close() }
            let extent = try #require(try SnapshotFile.read(in: file, header: try PagedSnapshotTests.header(path), fileSize: try file.size()))
            let slotCounts = extent.index.entities.map(\.slots.count)
            let check = extent.index.blockContext.map(BlockContextCheck.init)
            let blocks = extent.index.blocks.dropLast()
            #expect(blocks.count > 1)
            for number in blocks.indices {
                // The context as the block holds it (with destinations).
                let block = try SnapshotFile.readBlock(number, of: extent.index.blocks, slotCounts: slotCounts, context: check, paged: true, in: file)
                var encoded = ByteWriter()
                try #require(block.context).encode(into: &encoded)
                #expect(encoded.count > JournalOptions.defaultSnapshotBlockSize, "the premise: a context of \(encoded.count) bytes")
                let records = Int(extent.index.blocks[number].rawSize) - encoded.count
                #expect(records >= 3 * encoded.count, "block \(number): \(records) bytes of records after a context of \(encoded.count)")
            }
        }
    }

    @Test("A small model's blocks are the size asked for")
    func smallContextKeepsTheRequestedSize() {
        let context = BlockContextCheckTests.expected
        #expect(SnapshotWriter.dataBlockSize(4 << 10, repeating: context) == 4 << 10)
        #expect(SnapshotWriter.dataBlockSize(16, repeating: context) > 16)
    }
}
