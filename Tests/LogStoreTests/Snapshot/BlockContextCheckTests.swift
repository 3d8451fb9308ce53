// The context a block starts with, checked against the index's without
// decoding the same bytes twice.

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
    }

    @Test("A context cut short after one agreed is refused, not taken from the agreed bytes")
    func truncatedContext() throws {
        let check = BlockContextCheck(expected: Self.expected)
        let bytes = Self.bytes(Self.withDestinations([nil, 0]), trailer: [])
        _ = try Self.read(bytes, by: check)
        #expect(throws: DecodeFailure.self) { try Self.read(Array(bytes.dropLast()), by: check) }
    }
}
