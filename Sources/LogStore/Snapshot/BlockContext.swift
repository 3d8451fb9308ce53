// What every block of a version 4 snapshot repeats of its index
// (FORMAT.md §11.2), so that the index can be rebuilt from the blocks.

import Synchronization

/// The part of a snapshot's index that the records of a block cannot be
/// read without: the snapshot's sequence number, its name table, and per
/// entity its name, slots (with each relationship's destination) and next
/// key. Every block of a version 4 snapshot starts with it.
///
/// With the index damaged, any whole block gives it back, and the blocks'
/// own records give the key lists and the directory; the secondary indexes
/// and pointers are rebuilt from the records. What no block repeats is the
/// recorded model and the store dictionary (too large to repeat per block).
struct BlockContext: Sendable, Equatable {
    struct Entity: Sendable, Equatable {
        var name: String
        var slots: [String]
        /// Per slot, the entity position a relationship's references point
        /// to; nil for an attribute. References in blocks name their target
        /// by key, and this says of which entity.
        var destinations: [Int?]
        var nextKey: UInt64
    }

    var sequence: UInt64
    var symbols: [String]
    var entities: [Entity]

    func encode(into writer: inout ByteWriter) {
        writer.appendVarint(sequence)
        SnapshotIndex.appendStrings(symbols, to: &writer)
        writer.appendVarint(UInt64(entities.count))
        for entity in entities {
            writer.appendLengthPrefixed(entity.name)
            Self.appendSlots(entity.slots, entity.destinations, to: &writer)
            writer.appendVarint(entity.nextKey)
        }
    }

    /// An entity's slots, each with its destination (0 for an attribute,
    /// else the destination entity's position plus one): as a context lists
    /// them, and a catalog (FORMAT.md §13.4).
    static func appendSlots(_ slots: [String], _ destinations: [Int?], to writer: inout ByteWriter) {
        writer.appendVarint(UInt64(slots.count))
        for (slot, destination) in zip(slots, destinations) {
            writer.appendLengthPrefixed(slot)
            writer.appendVarint(destination.map { UInt64($0) + 1 } ?? 0)
        }
    }

    /// Reads what ``appendSlots(_:_:to:)`` writes for entity `name`, each
    /// destination checked against the `entityCount` entities listed.
    static func readSlots(_ reader: inout ByteReader, of name: String, entityCount: Int) throws(DecodeFailure) -> (slots: [String], destinations: [Int?]) {
        let slotCount = try reader.readCount(minimumItemSize: 2)
        var slots: [String] = [], destinations: [Int?] = []
        for _ in 0..<slotCount {
            slots.append(try reader.readString())
            let destination = try reader.readVarint()
            guard destination <= UInt64(entityCount) else {
                throw DecodeFailure("slot \(slots.last ?? "") of \(name) points to entity #\(destination - 1), but \(entityCount) are listed")
            }
            destinations.append(destination == 0 ? nil : Int(destination - 1))
        }
        return (slots, destinations)
    }

    /// Decodes a context, checking every count against the bytes left and
    /// every destination against the entities listed.
    init(decoding reader: inout ByteReader) throws(DecodeFailure) {
        sequence = try reader.readVarint()
        symbols = try SnapshotIndex.readStrings(&reader)
        let entityCount = try reader.readCount()
        entities = []
        for _ in 0..<entityCount {
            let name = try reader.readString()
            let (slots, destinations) = try Self.readSlots(&reader, of: name, entityCount: entityCount)
            entities.append(Entity(name: name, slots: slots, destinations: destinations, nextKey: try reader.readVarint()))
        }
    }

    init(sequence: UInt64, symbols: [String], entities: [Entity]) {
        self.sequence = sequence
        self.symbols = symbols
        self.entities = entities
    }

    /// Whether `other` says what this context does (destinations, which
    /// only blocks carry, aside).
    func agrees(with other: BlockContext) -> Bool {
        sequence == other.sequence && symbols == other.symbols && entities.count == other.entities.count
            && zip(entities, other.entities).allSatisfy { $0.name == $1.name && $0.slots == $1.slots && $0.nextKey == $1.nextKey }
    }
}

/// The check of the context each block of one snapshot starts with
/// against the index's (``BlockContext/agrees(with:)``).
///
/// A snapshot's writer repeats one context in every block, so once a
/// block's context has been decoded and found to agree, a block starting
/// with the same bytes says the same thing: it is taken without decoding
/// its names again, which in a 4 KiB block cost about as much as finding
/// its records. Other bytes are decoded and checked in full.
final class BlockContextCheck: Sendable {
    /// What the index says.
    let expected: BlockContext
    /// The bytes of the last context that agreed, and what they decode to.
    private let agreed = Protected<(bytes: [UInt8], context: BlockContext)?>(nil)
    /// How many contexts were decoded rather than matched by their bytes.
    let decodedCount = Atomic<Int>(0)

    init(expected: BlockContext) { self.expected = expected }

    /// Reads the context at `reader`'s position; throws if it is malformed
    /// or says other than the index.
    func read(_ reader: inout ByteReader) throws(DecodeFailure) -> BlockContext {
        let rest = UnsafeRawBufferPointer(rebasing: reader.buffer[reader.position...])
        if let known = agreed.withLock({ $0 }), rest.starts(with: known.bytes) {
            try reader.skip(known.bytes.count)
            return known.context
        }
        let start = reader.position
        decodedCount.add(1, ordering: .relaxed)
        let context = try BlockContext(decoding: &reader)
        guard expected.agrees(with: context) else {
            throw DecodeFailure("the context it starts with is not what the index says")
        }
        let bytes = Array(reader.buffer[start..<reader.position])
        agreed.withLock { $0 = (bytes, context) }
        return context
    }
}

extension SnapshotIndex {
    /// What each block of this index's snapshot must repeat (destinations
    /// aside, which the index does not hold); nil when its blocks repeat
    /// nothing (format versions 2 and 3).
    var blockContext: BlockContext? {
        guard blocksHaveContext else { return nil }
        return BlockContext(sequence: sequence, symbols: symbols, entities: entities.map {
            BlockContext.Entity(name: $0.name, slots: $0.slots, destinations: [], nextKey: $0.nextKey)
        })
    }
}
