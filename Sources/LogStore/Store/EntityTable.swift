// One entity's live records, packed: encoded values in a block of the
// store's snapshot, found by key through the snapshot's keys, or,
// once a save changed them, in a byte arena found through a key map.

import CLogStoreSupport

/// The committed records of one entity.
///
/// A record's values sit encoded (the value codec of FORMAT.md §5.2) either
/// in the snapshot the store was opened from or last compacted into, found
/// through ``SnapshotKeys`` (a few bytes per block, not per key, or a key
/// directory read a leaf at a time) and decoded when first touched; or, once a save changed the record since, in a paged
/// byte arena (``RecordArena``). Only records changed since the snapshot have an entry in the key
/// map: 24 bytes of bookkeeping beyond the values, and 12 more in the arena;
/// a record of the snapshot that a save deleted has an entry that hides it
/// (a tombstone). Keys are dense (the store hands them out 1, 2, 3, … and
/// never reuses one), so the map is an array indexed by key, not a hash
/// table, while the changed keys are about as dense (``KeyMap``). A changed
/// record is appended again; the arena is rewritten when more than half of
/// it is dead.
struct EntityTable: Sendable {
    /// A record changed since the snapshot: its values in the arena, or its
    /// deletion; one entry, so that a lookup by a random key misses the cache
    /// once here and once in the arena.
    private struct Entry: Sendable {
        /// Where its values are in `arena`; or `absent` (no change since
        /// the snapshot), or `deleted`.
        var start: RecordArena.Position
        var version: UInt64
        /// The length of its values in the arena.
        var length: UInt32

        static let absent = Entry(start: .max, version: 0, length: 0)
        static let deleted = Entry(start: .max - 1, version: 0, length: 0)
        var isPresent: Bool { start < Self.deleted.start }
        var isDeleted: Bool { start == Self.deleted.start }
        var isChange: Bool { start != Self.absent.start }
    }

    /// Where a live record is: in the arena (with its entry), or in a
    /// snapshot block, at a slot; or not known, its key-directory leaf
    /// unreadable (the snapshot keeps the failure).
    private enum Location {
        case arena(Entry)
        case snapshot(block: Int, slot: Int)
        case unreadable
    }

    /// The records changed since the snapshot, by key.
    private var entries = KeyMap(empty: Entry.absent)
    /// The snapshot's records of this entity, by key.
    private var inSnapshot = SnapshotKeys.none
    /// Records' encoded values in pages (no buffer per record), each after
    /// its key and length, so that rewriting the arena walks the arena, not
    /// every key of the table.
    private var arena = RecordArena()
    private var deadBytes = 0
    /// How many live records the arena holds.
    private var arenaRecords = 0
    private(set) var count = 0
    /// The snapshot that records not in the arena are read from.
    private(set) var snapshot: SnapshotFile?

    /// Where the live record with `key` is, or nil when there is none.
    @inline(__always)
    private func location(_ key: UInt64) -> Location? {
        let entry = entries[key]
        if entry.isChange { return entry.isPresent ? .arena(entry) : nil }
        switch inSnapshot.locate(key, in: snapshot) {
        case .at(let block, let slot): return .snapshot(block: block, slot: slot)
        case .absent: return nil
        case .unreadable: return .unreadable
        }
    }

    /// A snapshot record's version: the one its block keeps, the transaction
    /// that last changed it, but never past the snapshot's own (a crafted
    /// block's is not trusted further), so that a save after it always
    /// changes a record's version.
    private static func version(inBlock version: UInt64, of snapshot: SnapshotFile?) -> UInt64 { min(version, snapshot?.sequence ?? 0) }

    /// The record with `key`, decoded.
    func record(_ key: UInt64) -> Record? {
        if case .found(let record) = find(key)?.read() { return record }
        return nil
    }

    /// A live record found in a table, to be read once the lock that guards
    /// the table is released: a record changed since the snapshot is
    /// decoded from the arena when found, one of the snapshot is read from
    /// its block only by ``read()``, which may read the disk.
    struct FoundRecord {
        fileprivate enum Place {
            case decoded(Record)
            case snapshot(SnapshotFile, block: Int, slot: Int)
            /// In a snapshot whose key directory is read a leaf at a time,
            /// found through its leaf by ``read()``, which may read the disk.
            case paged(SnapshotFile, SnapshotKeys)
        }
        let key: UInt64
        fileprivate let place: Place

        /// The record; when its block cannot be read, the failure the
        /// snapshot keeps (``SnapshotFile/checkReadable()``).
        func read() -> Store.RecordLookup {
            switch place {
            case .decoded(let record): return .found(record)
            case .snapshot(let snapshot, let number, let slot):
                if let record = EntityTable.withSnapshotValues(snapshot, block: number, slot: slot, key: key, { EntityTable.decode(version: $0, $1) }) {
                    return .found(record)
                }
                return Self.failure(of: snapshot, key: key)
            case .paged(let snapshot, let keys):
                switch keys.locate(key, in: snapshot) {
                case .at(let number, let slot):
                    return FoundRecord(key: key, place: .snapshot(snapshot, block: number, slot: slot)).read()
                case .absent: return .absent
                case .unreadable: return Self.failure(of: snapshot, key: key)
                }
            }
        }

        /// The failure `snapshot` keeps for the read of the record with `key`.
        private static func failure(of snapshot: SnapshotFile, key: UInt64) -> Store.RecordLookup {
                do throws(LogStoreError) {
                    try snapshot.checkReadable()
                } catch {
                    return .unreadable(error)
                }
                // A failed read is always kept, so this is not reached.
                return .unreadable(LogStoreError(.corruptSnapshot, "the record with key \(key) could not be read from \(snapshot.path)", path: snapshot.path))
        }
    }

    /// Where the live record with `key` is, reading nothing from the disk;
    /// nil when there is none. In a snapshot whose key directory is read a
    /// leaf at a time, the leaf is read by ``FoundRecord/read()``.
    func find(_ key: UInt64) -> FoundRecord? {
        let entry = entries[key]
        if entry.isChange {
            guard entry.isPresent else { return nil }
            return FoundRecord(key: key, place: .decoded(arenaValues(entry) { Self.decode(version: entry.version, $0) }))
        }
        guard let snapshot else { return nil }
        if case .paged(let keys) = inSnapshot {
            return keys.mayHold(key) ? FoundRecord(key: key, place: .paged(snapshot, inSnapshot)) : nil
        }
        guard case .at(let block, let slot) = inSnapshot.locate(key, in: snapshot) else { return nil }
        return FoundRecord(key: key, place: .snapshot(snapshot, block: block, slot: slot))
    }

    /// A record from its version and encoded values.
    private static func decode(version: UInt64, _ bytes: UnsafeRawBufferPointer) -> Record {
        var reader = ByteReader(bytes)
        var values: [StoredValue] = []
        values.reserveCapacity(8)
        // The bytes were written by `set` from valid values, or checked
        // when their block was decoded, so they decode.
        while !reader.isAtEnd, let value = try? reader.readValue(trusted: true) { values.append(value) }
        return Record(values: values, version: version)
    }

    /// Whether a live record has `key`, reading no data block: true too
    /// when the key-directory leaf that would hold it cannot be read (the
    /// snapshot keeps the failure), so that nothing the snapshot may hold
    /// is taken for absent.
    func contains(_ key: UInt64) -> Bool {
        let entry = entries[key]
        return entry.isChange ? entry.isPresent : snapshotMayHold(key)
    }

    /// Whether the snapshot holds `key`, or its leaf cannot be read.
    private func snapshotMayHold(_ key: UInt64) -> Bool {
        inSnapshot.locate(key, in: snapshot) != .absent
    }

    /// The version of the record with `key`: for a record in the snapshot,
    /// read from its block; nil when there is none, or its block cannot be read.
    func version(_ key: UInt64) -> UInt64? {
        withValues(of: key) { version, _ in version }
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
        let entry = entries[key]
        guard entry.isPresent else { return }
        arena.prefetch(at: entry.start)
    }

    /// The encoded values of the record with `key`, for `body` to read.
    func withValueBytes<Result>(_ key: UInt64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        withValues(of: key) { _, bytes in body(bytes) }
    }

    /// The version and encoded values of the record with `key`, for `body`
    /// to read; nil when there is none, or its block cannot be read.
    func withValues<Result>(of key: UInt64, _ body: (_ version: UInt64, _ bytes: UnsafeRawBufferPointer) -> Result) -> Result? {
        switch location(key) {
        case nil, .unreadable:
            return nil
        case .arena(let entry):
            return arenaValues(entry) { body(entry.version, $0) }
        case .snapshot(let number, let slot):
            guard let snapshot else { return nil }
            return Self.withSnapshotValues(snapshot, block: number, slot: slot, key: key, body)
        }
    }

    /// Calls `body` with the key, version and encoded values of each live
    /// record among `keys`, in their order, skipping keys with none: what
    /// ``withValues(of:_:)`` gives for each, with one closure for them all,
    /// and a block fetched once for a run of keys that fall in it (keys
    /// found through an index come in increasing order, many to a block).
    /// Stops when `body` returns false.
    func forEachRecord(of keys: some Collection<UInt64>, _ body: (_ key: UInt64, _ version: UInt64, _ bytes: UnsafeRawBufferPointer) -> Bool) {
        // The block the previous key was read from, kept while the next
        // keys fall in it; nil after a block that could not be read.
        var current: (number: Int, block: SnapshotBlock?)?
        for key in keys {
            switch location(key) {
            case nil, .unreadable:
                continue
            case .arena(let entry):
                guard arenaValues(entry, { body(key, entry.version, $0) }) else { return }
            case .snapshot(let number, let slot):
                guard let snapshot else { continue }
                if current?.number != number { current = (number, snapshot.block(number)) }
                guard let block = current?.block else { continue }
                guard Self.withValues(in: block, of: snapshot, slot: slot, key: key, { body(key, $0, $1) }) != false else { return }
            }
        }
    }

    /// The encoded values `entry` places in the arena, for `body` to read.
    private func arenaValues<Result>(_ entry: Entry, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        arena.withValues(at: entry.start, length: entry.length, body)
    }

    /// The version and encoded values of the record with `key` at `slot` of
    /// block `number` of `snapshot`, for `body` to read; nil when the block
    /// cannot be read, or does not hold the key there.
    private static func withSnapshotValues<Result>(_ snapshot: SnapshotFile, block number: Int, slot: Int, key: UInt64,
                                                   _ body: (_ version: UInt64, _ bytes: UnsafeRawBufferPointer) -> Result) -> Result? {
        // A block that cannot be read was recorded by the snapshot; the
        // store refuses saves after it (SnapshotFile.checkReadable).
        guard let block = snapshot.block(number) else { return nil }
        return withValues(in: block, of: snapshot, slot: slot, key: key, body)
    }

    /// The version and encoded values of the record with `key` at `slot` of
    /// `block`, one of `snapshot`'s, for `body` to read; nil when the block
    /// does not hold the key there, or its values are not well formed.
    private static func withValues<Result>(in block: SnapshotBlock, of snapshot: SnapshotFile, slot: Int, key: UInt64,
                                           _ body: (_ version: UInt64, _ bytes: UnsafeRawBufferPointer) -> Result) -> Result? {
        let number = block.number
        guard slot < block.count, block.key(at: slot) == key, !block.isTombstone(slot) else {
            snapshot.reportMisplaced(key: key, block: number, slot: slot)
            return nil
        }
        guard snapshot.checkedValues(of: block, at: slot) else { return nil }
        var result: Result?
        block.withRecords { records in
            guard let values = records.values(at: slot, key: key) else { return }
            result = body(version(inBlock: records.version(at: slot), of: snapshot), values)
        }
        return result
    }

    /// Calls `body` with each live record's key, version and encoded
    /// values, in key order: the snapshot's records a block at a time, each
    /// block fetched once per run of its keys and its records borrowed in
    /// place, merged with the records changed since.
    func forEachRecord(_ body: (UInt64, UInt64, UnsafeRawBufferPointer) -> Void) {
        let changed = changedKeys()
        // Where the walk is in `changed`. Each run copies it in and out once:
        // a variable the per-record loop shared with a closure was checked
        // for exclusive access at run time at every record.
        var next = 0
        inSnapshot.forEachRun(in: snapshot) { number, firstSlot, run in
            // A scan reads every record of the block: all are checked.
            guard let snapshot, let block = snapshot.block(number), snapshot.checkedValues(of: block) else {
                // Its records cannot be read (the failure is kept); the
                // changed ones among them still can.
                for index in 0..<run.count { _ = emitChanges(through: run[index], changed, &next, body) }
                return
            }
            var position = next
            block.withRecords { records in
                var upcoming = position < changed.count ? changed[position] : .max
                for index in 0..<run.count {
                    let key = run[index]
                    if key >= upcoming {
                        let isChanged = emitChanges(through: key, changed, &position, body)
                        upcoming = position < changed.count ? changed[position] : .max
                        if isChanged { continue }
                    }
                    let slot = firstSlot + index
                    if let values = records.values(at: slot, key: key) {
                        body(key, Self.version(inBlock: records.version(at: slot), of: snapshot), values)
                    } else {
                        snapshot.reportMisplaced(key: key, block: number, slot: slot)
                    }
                }
            }
            next = position
        }
        _ = emitChanges(through: nil, changed, &next, body)
    }

    /// Calls `body` with the changed records from `changed[position]` up to
    /// `key` (all of them when nil), moving `position` past them; returns
    /// whether `key` itself is one.
    private func emitChanges(through key: UInt64?, _ changed: [UInt64], _ position: inout Int,
                             _ body: (UInt64, UInt64, UnsafeRawBufferPointer) -> Void) -> Bool {
        while position < changed.count, key.map({ changed[position] <= $0 }) ?? true {
            let changedKey = changed[position]
            position += 1
            let entry = entries[changedKey]
            if entry.isPresent {
                arenaValues(entry) { body(changedKey, entry.version, $0) }
            }
            if changedKey == key { return true }
        }
        return false
    }

    /// Calls `body` with each live record's key and encoded values, in key order.
    func forEachRecord(_ body: (UInt64, UnsafeRawBufferPointer) -> Void) {
        forEachRecord { key, _, bytes in body(key, bytes) }
    }

    /// The keys changed since the snapshot (saved or deleted), in order.
    func changedKeys() -> [UInt64] {
        var keys: [UInt64] = []
        entries.forEach { key, entry in if entry.isChange { keys.append(key) } }
        return keys
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

    /// Calls `body` with each live record's key, in key order, reading no
    /// block: the snapshot's keys merged with those changed since.
    func forEachKey(_ body: (UInt64) -> Void) {
        let changed = changedKeys()
        var next = 0
        inSnapshot.forEachRun(in: snapshot) { _, _, run in
            // Copied in and out once a run, as in forEachRecord.
            var position = next
            var upcoming = position < changed.count ? changed[position] : .max
            for index in 0..<run.count {
                let key = run[index]
                if key >= upcoming {
                    var isChanged = false
                    while position < changed.count, changed[position] <= key {
                        if entries[changed[position]].isPresent { body(changed[position]) }
                        isChanged = changed[position] == key
                        position += 1
                    }
                    upcoming = position < changed.count ? changed[position] : .max
                    if isChanged { continue }
                }
                body(key)
            }
            next = position
        }
        for key in changed[next...] where entries[key].isPresent { body(key) }
    }

    /// Every live key, in increasing order.
    ///
    /// - Throws: the failure of a key-directory leaf that could not be
    ///   read (its keys would be missing), or of one that failed meanwhile.
    func keys() throws(LogStoreError) -> [UInt64] {
        let failedBefore = snapshot?.failedReadCount ?? 0
        var keys: [UInt64] = []
        keys.reserveCapacity(count)
        forEachKey { keys.append($0) }
        try snapshot?.checkNoReadFailed(since: failedBefore)
        return keys
    }

    /// The bytes that find records, not counting their values: the entries
    /// of the records changed since the snapshot, and the snapshot's located
    /// keys. For tests and statistics.
    var bookkeepingBytes: Int { entries.byteCount + inSnapshot.byteCount }

    /// How many records were changed or deleted since the snapshot: the
    /// entries the key map holds.
    var changedCount: Int { changedKeys().count }

    /// The bytes of live records' values held in memory (not in the snapshot).
    var arenaLiveBytes: Int { arena.byteCount - deadBytes - RecordArena.prefix * arenaRecords }

    mutating func set(_ key: UInt64, _ record: Record) {
        let old = entries[key]
        if old.isPresent {
            retire(old)
        } else if old.isDeleted || !snapshotMayHold(key) {
            count += 1
        }
        let (start, length) = arena.append(key: key, values: record.values)
        entries[key] = Entry(start: start, version: record.version, length: length)
        arenaRecords += 1
        compactIfMostlyDead()
    }

    mutating func remove(_ key: UInt64) {
        let old = entries[key]
        let inSnapshot = snapshotMayHold(key)
        guard old.isPresent || (!old.isChange && inSnapshot) else { return }
        if old.isPresent { retire(old) }
        count -= 1
        // A record the snapshot holds stays hidden; one only the arena held
        // leaves nothing behind.
        entries[key] = inSnapshot ? .deleted : .absent
        compactIfMostlyDead()
    }

    /// Reads the records `keys` places from `snapshot` from now on: what
    /// open does, before any record is changed.
    mutating func attach(_ snapshot: SnapshotFile, keys: SnapshotKeys) {
        self.snapshot = snapshot
        inSnapshot = keys
        count = keys.count
    }

    /// After a compaction wrote `written` (this table as it was when the
    /// compaction took it) into `snapshot`, where `located` finds its
    /// records: each record not changed since is read from there from now
    /// on, and the memory its values and entry took is freed. Changes since
    /// stay, and the live records are the same ones.
    mutating func relocate(into snapshot: SnapshotFile, located: SnapshotKeys, from written: EntityTable) {
        var kept = KeyMap(empty: Entry.absent)
        var movedBytes = 0, movedRecords = 0
        entries.forEach { key, entry in
            guard entry.isChange else { return }
            let before = written.entries[key]
            // A change `written` already held is in the new snapshot: a
            // record at the same version (a save gives each change a new
            // one), or a deletion (a deleted key is never used again).
            let isWritten = entry.isDeleted ? before.isDeleted : before.isPresent && before.version == entry.version
            if !isWritten {
                kept[key] = entry
            } else if entry.isPresent {
                movedBytes += RecordArena.prefix + Int(entry.length)
                movedRecords += 1
            }
        }
        // A record `written` held in its arena and deleted since left no
        // entry (the old snapshot never held it); the new one does, so it
        // needs one that hides it.
        written.entries.forEach { key, before in
            if before.isPresent && !entries[key].isChange { kept[key] = .deleted }
        }
        deadBytes += movedBytes
        arenaRecords -= movedRecords
        entries = kept
        self.snapshot = snapshot
        inSnapshot = located
        packArena()
    }

    /// Frees the arena of records that were changed again, deleted, or moved
    /// to the snapshot.
    mutating func packArena() {
        guard deadBytes > 0 else { return }
        var packed = RecordArena()
        arena.forEachRecord { key, position, values in
            var entry = entries[key]
            // A record is live where its entry still points; an older
            // copy, or one of a record deleted or moved to the snapshot, is not.
            if entry.isPresent && entry.start == position {
                entry.start = packed.append(key: key, encoded: values)
                entries[key] = entry
            }
        }
        arena = packed
        deadBytes = 0
    }

    /// Counts the arena bytes of a record changed again, deleted or moved
    /// to the snapshot as dead.
    private mutating func retire(_ entry: Entry) {
        deadBytes += RecordArena.prefix + Int(entry.length)
        arenaRecords -= 1
    }

    private mutating func compactIfMostlyDead() {
        guard deadBytes > 1 << 16, deadBytes * 2 > arena.byteCount else { return }
        packArena()
    }
}
