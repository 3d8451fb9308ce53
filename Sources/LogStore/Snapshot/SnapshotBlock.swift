// One snapshot block: sorted live records, their values in slot order
// (FORMAT.md §11.2).

import Synchronization

/// A decoded snapshot block: its raw payload, and where each record's
/// values lie in it.
///
/// Immutable once decoded, so the block cache hands the same instance to
/// any number of readers; a reader keeps it alive while it borrows bytes.
final class SnapshotBlock: CachedBlock {
    /// The block's position in the snapshot's directory.
    let number: Int
    /// Per record, in block order, its key, version and where its values
    /// are in `bytes`: one array of 24-byte places, since a block stays in
    /// the cache and a lookup that misses it pays for every page it takes.
    private let places: [Place]
    /// The records' entities (positions in the snapshot's entity list), a
    /// run at a time: records are sorted by entity first, so a block holds
    /// a few runs, mostly one.
    private let entityRuns: [EntityRun]
    private let bytes: [UInt8]
    /// How many values each entity's records hold.
    private let slotCounts: [Int]
    /// Whether every record's values were checked (``checkValues()``).
    private let valuesChecked = Atomic<Bool>(false)

    /// Where one record is. `start` is ``tombstone`` for a tombstone.
    fileprivate struct Place {
        let key: UInt64
        let version: UInt64
        let start: Int32
        let end: Int32
    }

    /// The records from `firstSlot` up to the next run's are of `entity`.
    private struct EntityRun {
        let entity: Int
        let firstSlot: Int
    }

    var count: Int { places.count }

    /// The raw size of the block, which the cache counts.
    var byteCount: Int { bytes.count + places.count * MemoryLayout<Place>.stride + entityRuns.count * MemoryLayout<EntityRun>.stride }

    /// The context the block starts with (format version 4), nil before.
    let context: BlockContext?

    /// The key of the record at `slot`.
    func key(at slot: Int) -> UInt64 { places[slot].key }

    /// The version of the record at `slot`: the transaction that wrote it.
    func version(at slot: Int) -> UInt64 { places[slot].version }

    /// The entity (a position in the snapshot's entity list) of the record at `slot`.
    func entity(at slot: Int) -> Int {
        // The last run starting at or before `slot`.
        var low = 0, high = entityRuns.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if entityRuns[middle].firstSlot <= slot { low = middle } else { high = middle - 1 }
        }
        return entityRuns[low].entity
    }

    /// Decodes a block's raw payload and checks every record: sorted, of a
    /// known entity, its values within the block; with `checkingValues`,
    /// also exactly as many values as its entity has slots, each well
    /// formed. Damage found here is reported for the block, never trusted
    /// later.
    ///
    /// Without `checkingValues`, a record's values are checked when first
    /// read (``checkValues(at:)``, ``checkValues()``): a lookup of one
    /// record then checks its values, not the whole block's. Nothing
    /// hands out a record's bytes before they are checked.
    ///
    /// A block of format version 4 (`hasContext`) starts with its context,
    /// which `contextCheck`, if given, checks against the index's;
    /// `slotCounts` nil takes the slot counts from it (a rebuild of the index).
    /// A block of a paged snapshot (`paged`, FORMAT.md §13.5) gives each
    /// record's length plus one, 0 marking a tombstone, and may repeat a key
    /// for its older versions, newest first. `expectedCount`, the records
    /// a directory lists in the block, only sizes the arrays up front.
    init(number: Int, raw: [UInt8], slotCounts: [Int]?, hasContext: Bool, contextCheck: BlockContextCheck? = nil, paged: Bool = false, expectedCount: Int = 0, checkingValues: Bool = true) throws(DecodeFailure) {
        // Offsets are kept as Int32: a frame's payload is at most 256 MiB
        // (FrameLayout.maxPayloadSize), and nothing longer is a block.
        guard raw.count <= Int(Int32.max) else {
            throw DecodeFailure("a block of \(raw.count) bytes is larger than any frame's payload")
        }
        var places: [Place] = [], entityRuns: [EntityRun] = []
        // A record takes at least four bytes, and a block of the default
        // size holds about a hundred: a crafted count reserves no more than
        // the block's bytes could hold, nor more than a few thousand
        // records (more grow as they are read).
        places.reserveCapacity(min(max(expectedCount, 0), raw.count / 4, 4_096))
        var context: BlockContext?
        var counts: [Int] = []
        try raw.withBytes { (buffer) throws(DecodeFailure) in
            var reader = ByteReader(buffer)
            if hasContext {
                if let contextCheck { context = try contextCheck.read(&reader) } else { context = try BlockContext(decoding: &reader) }
            }
            guard let slotCounts = slotCounts ?? context?.entities.map(\.slots.count) else {
                throw DecodeFailure("the block says nothing of its entities, and no index does")
            }
            counts = slotCounts
            var previous: (entity: Int, key: UInt64, version: UInt64)?
            while !reader.isAtEnd {
                let entity = Int(clamping: try reader.readVarint())
                guard entity < slotCounts.count else {
                    throw DecodeFailure("record \(places.count + 1) names entity #\(entity), but the snapshot has \(slotCounts.count)")
                }
                let key = try reader.readVarint()
                let version = try reader.readVarint()
                if let previous {
                    let order = (previous.entity, previous.key) < (entity, key) ? 1 : (previous.entity, previous.key) == (entity, key) ? 0 : -1
                    guard order > 0 || (paged && order == 0 && version < previous.version) else {
                        throw DecodeFailure("record \(places.count + 1) (entity #\(entity), key \(key)) is out of order")
                    }
                }
                if previous?.entity != entity { entityRuns.append(EntityRun(entity: entity, firstSlot: places.count)) }
                previous = (entity, key, version)
                let values: UnsafeRawBufferPointer
                if paged {
                    let length = try reader.readVarint()
                    if length == 0 {
                        places.append(Place(key: key, version: version, start: Self.tombstone, end: Int32(reader.position)))
                        continue
                    }
                    guard length - 1 <= UInt64(reader.remaining) else {
                        throw DecodeFailure("record \(places.count + 1) (entity #\(entity), key \(key)) declares \(length - 1) bytes of values, past the end of the block")
                    }
                    values = try reader.readBytes(count: Int(length - 1))
                } else {
                    values = try reader.readLengthPrefixed()
                }
                let end = reader.position
                places.append(Place(key: key, version: version, start: Int32(end - values.count), end: Int32(end)))
            }
        }
        self.number = number
        self.context = context
        self.places = places
        self.entityRuns = entityRuns
        self.slotCounts = counts
        bytes = raw
        if checkingValues { try checkValues() }
    }

    /// Checks the values of the record at `slot`: each well formed, and as
    /// many as its entity has slots. A tombstone has none to check.
    func checkValues(at slot: Int) throws(DecodeFailure) {
        guard !valuesChecked.load(ordering: .acquiring), !isTombstone(slot) else { return }
        try bytes.withBytes { (buffer) throws(DecodeFailure) in try checkValues(at: slot, in: buffer) }
    }

    /// Checks the values of every record, once: what a read of the whole
    /// block (a scan) needs first.
    func checkValues() throws(DecodeFailure) {
        guard !valuesChecked.load(ordering: .acquiring) else { return }
        try bytes.withBytes { (buffer) throws(DecodeFailure) in
            for slot in places.indices where !isTombstone(slot) { try checkValues(at: slot, in: buffer) }
        }
        valuesChecked.store(true, ordering: .releasing)
    }

    private func checkValues(at slot: Int, in buffer: UnsafeRawBufferPointer) throws(DecodeFailure) {
        let place = places[slot]
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: buffer[Int(place.start)..<Int(place.end)]))
        var slots = 0
        while !reader.isAtEnd {
            try reader.skipValue { _ throws(DecodeFailure) in }
            slots += 1
        }
        let owner = entity(at: slot)
        guard slots == slotCounts[owner] else {
            throw DecodeFailure("record \(slot + 1) (entity #\(owner), key \(place.key)) has \(slots) values where its entity has \(slotCounts[owner]) slots")
        }
    }

    /// Calls `body` with the encoded values of the record at `slot`, which
    /// the caller checked (``checkValues(at:)``), or the block's reader did.
    func withValues<Result>(at slot: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let place = places[slot]
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[Int(place.start)..<Int(place.end)])) }
    }

    /// ``withValues(at:_:)`` for the record with `key`, which the index
    /// placed at `slot`; nil if the block holds another record there, or
    /// that key's tombstone.
    func withValues<Result>(at slot: Int, key: UInt64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        guard slot < places.count, places[slot].key == key, !isTombstone(slot) else { return nil }
        return withValues(at: slot, body)
    }

    /// Calls `body` with the block's records borrowed in place: what a scan
    /// reads record after record without retaining the block at each one,
    /// once their values are checked (``checkValues()``).
    /// The records, and every buffer they give, are valid inside `body` only.
    func withRecords(_ body: (Records) -> Void) {
        places.withUnsafeBufferPointer { places in
            bytes.withUnsafeBytes { bytes in body(Records(places: places, bytes: bytes)) }
        }
    }

    /// A block's records, borrowed for the length of ``withRecords(_:)``,
    /// which must not keep them.
    struct Records {
        fileprivate let places: UnsafeBufferPointer<Place>
        fileprivate let bytes: UnsafeRawBufferPointer

        /// The version of the record at `slot`.
        @inline(__always)
        func version(at slot: Int) -> UInt64 { places[slot].version }

        /// The encoded values of the record with `key`, which the index
        /// placed at `slot`; nil if the block holds another record there,
        /// or that key's tombstone (as ``SnapshotBlock/withValues(at:key:_:)``).
        @inline(__always)
        func values(at slot: Int, key: UInt64) -> UnsafeRawBufferPointer? {
            guard slot < places.count else { return nil }
            let place = places[slot]
            guard place.key == key, place.start != SnapshotBlock.tombstone else { return nil }
            return UnsafeRawBufferPointer(rebasing: bytes[Int(place.start)..<Int(place.end)])
        }
    }

    /// Whether the record at `slot` is a tombstone (FORMAT.md §13.5): the
    /// key deleted as of its version, with no values.
    func isTombstone(_ slot: Int) -> Bool { places[slot].start == Self.tombstone }

    /// Where a tombstone's values would start: it has none.
    fileprivate static let tombstone: Int32 = -1

    /// Appends one record to a block's raw payload; in a paged snapshot's
    /// block (`paged`) its length is one more, and nil values are a tombstone.
    static func append(entity: Int, key: UInt64, version: UInt64, values: UnsafeRawBufferPointer?, paged: Bool = false, to writer: inout ByteWriter) {
        writer.appendVarint(UInt64(entity))
        writer.appendVarint(key)
        writer.appendVarint(version)
        guard paged else {
            writer.appendLengthPrefixed(values ?? UnsafeRawBufferPointer(start: nil, count: 0))
            return
        }
        guard let values else {
            writer.appendVarint(0)
            return
        }
        writer.appendVarint(UInt64(values.count) + 1)
        writer.append(values)
    }
}
