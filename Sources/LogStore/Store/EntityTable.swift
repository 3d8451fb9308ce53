// One entity's live records, packed: encoded values in one byte arena,
// found by key through dense arrays.

/// The committed records of one entity.
///
/// Keys are dense (the store hands them out 1, 2, 3, … and never reuses
/// one), so a record is found by indexing arrays with its key, not by
/// hashing it. Its values sit encoded (the value codec of FORMAT.md §5.2) in
/// one byte arena: about 20 bytes of bookkeeping per record beyond the
/// values themselves, where an array of enum values in a dictionary took
/// over 150. A changed record is appended again; the arena is rewritten when
/// more than half of it is dead.
struct EntityTable: Sendable {
    private static let absent = UInt64.max

    /// Per key: where its values start in `arena`, or `absent`.
    private var starts: [UInt64] = []
    private var lengths: [UInt32] = []
    private var versions: [UInt64] = []
    private var arena: [UInt8] = []
    private var deadBytes = 0
    private(set) var count = 0

    /// The record with `key`, decoded.
    func record(_ key: UInt64) -> Record? {
        guard let index = slot(key), starts[index] != Self.absent else { return nil }
        let start = Int(starts[index]), end = start + Int(lengths[index])
        let values = arena.withUnsafeBytes { bytes -> [StoredValue] in
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            var values: [StoredValue] = []
            // The bytes were written by `set` from valid values, so they decode.
            while !reader.isAtEnd, let value = try? reader.readValue() { values.append(value) }
            return values
        }
        return Record(values: values, version: versions[index])
    }

    /// The version of the record with `key`, without decoding it.
    func version(_ key: UInt64) -> UInt64? {
        guard let index = slot(key), starts[index] != Self.absent else { return nil }
        return versions[index]
    }

    /// Every live key, in increasing order.
    var keys: [UInt64] {
        var keys: [UInt64] = []
        keys.reserveCapacity(count)
        for (index, start) in starts.enumerated() where start != Self.absent { keys.append(UInt64(index)) }
        return keys
    }

    mutating func set(_ key: UInt64, _ record: Record) {
        let index = Int(key)
        if index >= starts.count {
            let grow = index + 1 - starts.count
            starts.append(contentsOf: repeatElement(Self.absent, count: grow))
            lengths.append(contentsOf: repeatElement(0, count: grow))
            versions.append(contentsOf: repeatElement(0, count: grow))
        }
        if starts[index] == Self.absent { count += 1 } else { deadBytes += Int(lengths[index]) }
        var writer = ByteWriter(capacity: 64)
        for value in record.values { writer.append(value) }
        starts[index] = UInt64(arena.count)
        lengths[index] = UInt32(writer.count)
        versions[index] = record.version
        arena.append(contentsOf: writer.bytes)
        compactIfMostlyDead()
    }

    mutating func remove(_ key: UInt64) {
        guard let index = slot(key), starts[index] != Self.absent else { return }
        deadBytes += Int(lengths[index])
        starts[index] = Self.absent
        count -= 1
        compactIfMostlyDead()
    }

    private func slot(_ key: UInt64) -> Int? {
        key < UInt64(starts.count) ? Int(key) : nil
    }

    private mutating func compactIfMostlyDead() {
        guard deadBytes > 1 << 16, deadBytes * 2 > arena.count else { return }
        var packed: [UInt8] = []
        packed.reserveCapacity(arena.count - deadBytes)
        for index in starts.indices where starts[index] != Self.absent {
            let start = Int(starts[index])
            starts[index] = UInt64(packed.count)
            packed.append(contentsOf: arena[start..<(start + Int(lengths[index]))])
        }
        arena = packed
        deadBytes = 0
    }
}
