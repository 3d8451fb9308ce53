// One entity's live records, packed: encoded values in one byte arena or
// in a block of the store's snapshot, found by key through a dense array.

import CLogStoreSupport

/// The committed records of one entity.
///
/// Keys are dense (the store hands them out 1, 2, 3, … and never reuses
/// one), so a record is found by indexing an array with its key, not by
/// hashing it; a key from a file far past the others costs one entry of a
/// dictionary instead (``KeyMap``). A record's values sit encoded (the value codec of FORMAT.md
/// §5.2) either in the snapshot the store was opened from or last compacted
/// into, as a block and a slot in it, decoded when first touched; or, once
/// a save changed the record since, in one byte arena: 24 bytes of
/// bookkeeping per record beyond the values themselves, and 12 more in the
/// arena for a record held there. A changed record is appended again; the
/// arena is rewritten when more than half of it is dead.
struct EntityTable: Sendable {
    /// Where one key's record is: one entry, so that a lookup by a random
    /// key misses the cache once here and once in the arena.
    private struct Entry: Sendable {
        /// Where its values start in `arena`; with `inSnapshot` set, the
        /// snapshot block number instead; or `absent`.
        var start: UInt64
        var version: UInt64
        /// The length of its values in the arena, or its slot in the block.
        var length: UInt32

        static let absent = Entry(start: .max, version: 0, length: 0)
        static let inSnapshot: UInt64 = 1 << 62
        var isPresent: Bool { start != .max }
        var isInSnapshot: Bool { isPresent && start & Self.inSnapshot != 0 }
        var block: Int { Int(start & ~Self.inSnapshot) }
    }

    private var entries = KeyMap(empty: Entry.absent)
    /// Records' encoded values, appended in place (no buffer per record),
    /// each after its key and length (``arenaPrefix`` bytes), so that
    /// rewriting the arena walks the arena, not every key of the table.
    private var arena = ByteWriter()
    /// The bytes before a record's values in the arena: its key (`u64`)
    /// and the length of its values (`u32`), little-endian.
    private static let arenaPrefix = 12
    private var deadBytes = 0
    /// How many live records the arena holds.
    private var arenaRecords = 0
    private(set) var count = 0
    /// The snapshot that records not in the arena are read from.
    private(set) var snapshot: SnapshotFile?

    /// The record with `key`, decoded.
    func record(_ key: UInt64) -> Record? {
        guard let entry = entry(key) else { return nil }
        let values = withValueBytes(entry, key: key) { bytes -> [StoredValue] in
            var reader = ByteReader(bytes)
            var values: [StoredValue] = []
            values.reserveCapacity(8)
            // The bytes were written by `set` from valid values, or checked
            // when their block was decoded, so they decode.
            while !reader.isAtEnd, let value = try? reader.readValue(trusted: true) { values.append(value) }
            return values
        }
        return values.map { Record(values: $0, version: entry.version) }
    }

    /// Starts loading where the record with `key` is into the cache, for a
    /// ``record(_:)`` soon after.
    @inline(__always)
    func prefetch(_ key: UInt64) {
        entries.withDenseAddress(of: key) { logstore_prefetch($0) }
    }

    /// Starts loading the values of the record with `key` into the cache,
    /// once its entry is there (after ``prefetch(_:)``).
    func prefetchValues(_ key: UInt64) {
        guard let entry = entry(key), !entry.isInSnapshot else { return }
        arena.bytes.withUnsafeBytes { logstore_prefetch($0.baseAddress! + Int(entry.start)) }
    }

    /// The encoded values of the record with `key`, for `body` to read.
    func withValueBytes<Result>(_ key: UInt64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        guard let entry = entry(key) else { return nil }
        return withValueBytes(entry, key: key, body)
    }

    private func withValueBytes<Result>(_ entry: Entry, key: UInt64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        if entry.isInSnapshot {
            // A block that cannot be read was recorded by the snapshot; the
            // store refuses saves after it (SnapshotFile.checkReadable).
            return snapshot?.block(entry.block)?.withValues(at: Int(entry.length), key: key, body)
        }
        return arena.bytes.withUnsafeBytes { bytes in
            body(UnsafeRawBufferPointer(rebasing: bytes[Int(entry.start)..<(Int(entry.start) + Int(entry.length))]))
        }
    }

    /// Calls `body` with each live record's key, version and encoded
    /// values, in key order. Records in the snapshot are read a block at a
    /// time, in block order: each block is fetched once per run of keys
    /// (a page of the key map) and its records borrowed in place while the
    /// keys stay in it.
    func forEachRecord(_ body: (UInt64, UInt64, UnsafeRawBufferPointer) -> Void) {
        arena.bytes.withUnsafeBytes { arenaBytes in
            func inArena(_ entry: Entry) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: arenaBytes[Int(entry.start)..<(Int(entry.start) + Int(entry.length))])
            }
            entries.forEachRun { firstKey, run in
                var index = 0
                while index < run.count {
                    let entry = run[index]
                    guard entry.isInSnapshot else {
                        if entry.isPresent { body(firstKey + UInt64(index), entry.version, inArena(entry)) }
                        index += 1
                        continue
                    }
                    let number = entry.block
                    guard let block = snapshot?.block(number) else {
                        index += 1
                        continue
                    }
                    block.withRecords { records in
                        // This block's records, and the changed ones held in
                        // the arena between them, until a key lies in another block.
                        while index < run.count {
                            let entry = run[index], key = firstKey + UInt64(index)
                            if entry.isInSnapshot {
                                guard entry.block == number else { return }
                                // The block keeps the transaction that last changed the
                                // record; open gives every record the snapshot's, which
                                // is never older (a crafted block's is not trusted past it).
                                let slot = Int(entry.length)
                                if let values = records.values(at: slot, key: key) { body(key, min(records.versions[slot], entry.version), values) }
                            } else if entry.isPresent {
                                body(key, entry.version, inArena(entry))
                            }
                            index += 1
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with each live record's key and encoded values, in key order.
    func forEachRecord(_ body: (UInt64, UnsafeRawBufferPointer) -> Void) {
        forEachRecord { key, _, bytes in body(key, bytes) }
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

    /// Calls `body` with each live record's key and version, in key order,
    /// reading no values.
    func forEachKey(_ body: (UInt64, UInt64) -> Void) {
        entries.forEach { key, entry in if entry.isPresent { body(key, entry.version) } }
    }

    /// The version of the record with `key`, without decoding it.
    func version(_ key: UInt64) -> UInt64? { entry(key)?.version }

    /// Every live key, in increasing order.
    var keys: [UInt64] {
        var keys: [UInt64] = []
        keys.reserveCapacity(count)
        entries.forEach { key, entry in if entry.isPresent { keys.append(key) } }
        return keys
    }

    /// The bytes of live records' values held in memory (not in the snapshot).
    var arenaLiveBytes: Int { arena.count - deadBytes - Self.arenaPrefix * arenaRecords }

    mutating func set(_ key: UInt64, _ record: Record) {
        retire(entries[key])
        let prefix = arena.count
        arena.appendFixed(key)
        arena.appendFixed(UInt32(0))
        let start = arena.count
        for value in record.values { arena.append(value) }
        let length = UInt32(arena.count - start)
        arena.overwrite(length, at: prefix + 8)
        entries[key] = Entry(start: UInt64(start), version: record.version, length: length)
        arenaRecords += 1
        count += 1
        compactIfMostlyDead()
    }

    mutating func remove(_ key: UInt64) {
        guard let entry = entry(key) else { return }
        retire(entry)
        entries[key] = .absent
        compactIfMostlyDead()
    }

    /// Reads records not in the arena from `snapshot` from now on.
    mutating func attach(_ snapshot: SnapshotFile) { self.snapshot = snapshot }

    /// Lets the table hold keys up to `largest` without growing, when
    /// `count` of them are about to be located (``KeyMap/reserve(through:holding:)``).
    mutating func reserve(through largest: UInt64, holding count: Int) {
        entries.reserve(through: largest, holding: count)
    }

    /// Records that the values of `key`, at `version`, are in `slot` of
    /// snapshot block `block` (of the attached snapshot).
    mutating func locate(_ key: UInt64, version: UInt64, block: Int, slot: Int) {
        retire(entries[key])
        entries[key] = Entry(start: Entry.inSnapshot | UInt64(block), version: version, length: UInt32(slot))
        count += 1
    }

    /// Frees the arena of records that moved to the snapshot.
    mutating func packArena() {
        guard deadBytes > 0 else { return }
        var packed = ByteWriter(capacity: arena.count - deadBytes)
        var position = 0
        arena.bytes.withUnsafeBytes { bytes in
            while position < bytes.count {
                let key = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position + 8, as: UInt32.self)))
                let start = position + Self.arenaPrefix
                var entry = entries[key]
                // A record is live where its entry still points; an older
                // copy, or one of a record deleted or moved to the snapshot, is not.
                if entry.isPresent && !entry.isInSnapshot && entry.start == UInt64(start) {
                    packed.append(UnsafeRawBufferPointer(rebasing: bytes[position..<(start + length)]))
                    entry.start = UInt64(packed.count - length)
                    entries[key] = entry
                }
                position = start + length
            }
        }
        arena = packed
        deadBytes = 0
    }

    /// Forgets where a record was before it moves or goes.
    private mutating func retire(_ entry: Entry) {
        guard entry.isPresent else { return }
        count -= 1
        if !entry.isInSnapshot {
            deadBytes += Self.arenaPrefix + Int(entry.length)
            arenaRecords -= 1
        }
    }

    private func entry(_ key: UInt64) -> Entry? {
        let entry = entries[key]
        return entry.isPresent ? entry : nil
    }

    private mutating func compactIfMostlyDead() {
        guard deadBytes > 1 << 16, deadBytes * 2 > arena.count else { return }
        packArena()
    }
}
