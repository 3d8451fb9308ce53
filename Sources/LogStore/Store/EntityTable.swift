// One entity's live records, packed: encoded values in one byte arena,
// found by key through a dense array.

/// The committed records of one entity.
///
/// Keys are dense (the store hands them out 1, 2, 3, … and never reuses
/// one), so a record is found by indexing an array with its key, not by
/// hashing it. Its values sit encoded (the value codec of FORMAT.md §5.2) in
/// one byte arena: 24 bytes of bookkeeping per record beyond the values
/// themselves, where an array of enum values in a dictionary took over 150.
/// A changed record is appended again; the arena is rewritten when more than
/// half of it is dead.
struct EntityTable: Sendable {
    /// Where one key's record is: one entry, so that a lookup by a random
    /// key misses the cache once here and once in the arena.
    private struct Entry {
        /// Where its values start in `arena`, or `absent`.
        var start: UInt64
        var version: UInt64
        var length: UInt32

        static let absent = Entry(start: .max, version: 0, length: 0)
        var isPresent: Bool { start != .max }
    }

    private var entries: [Entry] = []
    /// Records' encoded values, appended in place (no buffer per record).
    private var arena = ByteWriter()
    private var deadBytes = 0
    private(set) var count = 0

    /// The record with `key`, decoded.
    func record(_ key: UInt64) -> Record? {
        guard let entry = entry(key) else { return nil }
        let start = Int(entry.start), end = start + Int(entry.length)
        let values = arena.bytes.withUnsafeBytes { bytes -> [StoredValue] in
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            var values: [StoredValue] = []
            values.reserveCapacity(8)
            // The bytes were written by `set` from valid values, so they decode.
            while !reader.isAtEnd, let value = try? reader.readValue(trusted: true) { values.append(value) }
            return values
        }
        return Record(values: values, version: entry.version)
    }

    /// The encoded values of the record with `key`, for `body` to read.
    func withValueBytes<Result>(_ key: UInt64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        guard let entry = entry(key) else { return nil }
        return arena.bytes.withUnsafeBytes { bytes in
            body(UnsafeRawBufferPointer(rebasing: bytes[Int(entry.start)..<(Int(entry.start) + Int(entry.length))]))
        }
    }

    /// Calls `body` with each live record's key and encoded values, in key order.
    func forEachRecord(_ body: (UInt64, UnsafeRawBufferPointer) -> Void) {
        arena.bytes.withUnsafeBytes { bytes in
            for (index, entry) in entries.enumerated() where entry.isPresent {
                body(UInt64(index), UnsafeRawBufferPointer(rebasing: bytes[Int(entry.start)..<(Int(entry.start) + Int(entry.length))]))
            }
        }
    }

    /// A record's values in slot order, in place of what `values` held (a
    /// scan reuses one array): decoded where `wanted` says so, `.null`
    /// elsewhere, and none past the last wanted slot.
    static func decode(_ bytes: UnsafeRawBufferPointer, wanted: [Bool], into values: inout [StoredValue]) {
        values.removeAll(keepingCapacity: true)
        var reader = ByteReader(bytes)
        // The bytes were written by `set` from valid values, so they decode;
        // strings and data that are not wanted are skipped by their length.
        for isWanted in wanted where !reader.isAtEnd {
            if isWanted {
                guard let value = try? reader.readValue(trusted: true) else { return }
                values.append(value)
            } else {
                guard (try? reader.skipTrustedValue()) != nil else { return }
                values.append(.null)
            }
        }
    }

    /// The version of the record with `key`, without decoding it.
    func version(_ key: UInt64) -> UInt64? { entry(key)?.version }

    /// Every live key, in increasing order.
    var keys: [UInt64] {
        var keys: [UInt64] = []
        keys.reserveCapacity(count)
        for (index, entry) in entries.enumerated() where entry.isPresent { keys.append(UInt64(index)) }
        return keys
    }

    mutating func set(_ key: UInt64, _ record: Record) {
        let index = Int(key)
        if index >= entries.count {
            entries.append(contentsOf: repeatElement(.absent, count: index + 1 - entries.count))
        }
        if entries[index].isPresent { deadBytes += Int(entries[index].length) } else { count += 1 }
        let start = arena.count
        for value in record.values { arena.append(value) }
        entries[index] = Entry(start: UInt64(start), version: record.version, length: UInt32(arena.count - start))
        compactIfMostlyDead()
    }

    mutating func remove(_ key: UInt64) {
        guard let entry = entry(key) else { return }
        deadBytes += Int(entry.length)
        entries[Int(key)] = .absent
        count -= 1
        compactIfMostlyDead()
    }

    private func entry(_ key: UInt64) -> Entry? {
        guard key < UInt64(entries.count), case let entry = entries[Int(key)], entry.isPresent else { return nil }
        return entry
    }

    private mutating func compactIfMostlyDead() {
        guard deadBytes > 1 << 16, deadBytes * 2 > arena.count else { return }
        var packed = ByteWriter(capacity: arena.count - deadBytes)
        for index in entries.indices where entries[index].isPresent {
            let start = Int(entries[index].start)
            entries[index].start = UInt64(packed.count)
            packed.append(contentsOf: arena.bytes[start..<(start + Int(entries[index].length))])
        }
        arena = packed
        deadBytes = 0
    }
}
