// The bytes of the records a table holds in memory, in pages.

import CLogStoreSupport

/// Records' encoded values, each after its key and length, appended in
/// pages of at most ``pageSize`` bytes that no record straddles.
///
/// Pages, not one buffer, because the committed state is copied on write: a
/// compaction holds the state as it was while saves go on, and a save's
/// first append then copies one page (and the list of pages), not every
/// record changed since the snapshot. A record lives at a ``Position``: its
/// page and where its values start there.
struct RecordArena: Sendable {
    /// Where a record's values start: the page in the high 32 bits, the
    /// offset in the page in the low 32 (a record is below the frame limit
    /// of 256 MiB, so a page holding one alone still fits).
    typealias Position = UInt64

    /// The largest page, except one holding a single larger record. A
    /// page's buffer grows by doubling up to it, so that a small table
    /// holds little.
    static let pageSize = 1 << 20
    /// The bytes before a record's values: its key (`u64`) and the length
    /// of its values (`u32`), little-endian, so that ``forEachRecord(_:)``
    /// walks the pages without the table's key map.
    static let prefix = 12

    private var pages: [ByteWriter] = []
    /// Where a record is encoded before its page is chosen.
    private var scratch = ByteWriter()
    /// The bytes of every page, prefixes included.
    private(set) var byteCount = 0

    /// The bytes the pages hold allocated: at most a page more than
    /// ``byteCount``, and what ends of pages records did not fit in.
    var capacityBytes: Int { pages.reduce(0) { $0 + $1.capacity } }

    /// How many pages hold the records.
    var pageCount: Int { pages.count }

    /// Appends the record with `key` and `values`; returns where its values
    /// start and their length.
    mutating func append(key: UInt64, values: [StoredValue]) -> (position: Position, length: UInt32) {
        scratch.removeAll()
        for value in values { scratch.append(value) }
        let length = scratch.count
        let position = scratch.bytes.withUnsafeBytes { append(key: key, encoded: $0) }
        // Not kept at the size of the largest record ever saved.
        if scratch.capacity > 1 << 16 { scratch = ByteWriter() }
        return (position, UInt32(length))
    }

    /// Appends the record with `key` whose values are `encoded`; returns
    /// where they start.
    mutating func append(key: UInt64, encoded: UnsafeRawBufferPointer) -> Position {
        let size = Self.prefix + encoded.count
        if pages.isEmpty || (pages[pages.count - 1].count > 0 && pages[pages.count - 1].count + size > Self.pageSize) {
            pages.append(ByteWriter(capacity: pages.isEmpty ? 0 : max(Self.pageSize, size)))
        }
        let page = pages.count - 1
        let start = pages[page].count
        let needed = start + size
        if needed > pages[page].capacity {
            // Doubling, but never past a page: an array left to grow by
            // itself would double a full page's buffer for its last record.
            pages[page].reserveCapacity(needed > Self.pageSize ? needed : min(Self.pageSize, max(needed, pages[page].capacity * 2)))
        }
        pages[page].appendFixed(key)
        pages[page].appendFixed(UInt32(encoded.count))
        pages[page].append(encoded)
        byteCount += size
        return UInt64(page) << 32 | UInt64(start + Self.prefix)
    }

    /// Calls `body` with the `length` bytes of values at `position`.
    @inline(__always)
    func withValues<Result>(at position: Position, length: UInt32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let start = Int(position & 0xFFFF_FFFF)
        return pages[Int(position >> 32)].bytes.withUnsafeBytes { bytes in
            body(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))]))
        }
    }

    /// Starts loading the values at `position` into the cache.
    @inline(__always)
    func prefetch(at position: Position) {
        pages[Int(position >> 32)].bytes.withUnsafeBytes { logstore_prefetch($0.baseAddress! + Int(position & 0xFFFF_FFFF)) }
    }

    /// Calls `body` with every record appended, in order: its key, where
    /// its values start, and the values.
    func forEachRecord(_ body: (_ key: UInt64, _ position: Position, _ values: UnsafeRawBufferPointer) -> Void) {
        for (page, writer) in pages.enumerated() {
            writer.bytes.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let key = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
                    let start = offset + Self.prefix
                    body(key, UInt64(page) << 32 | UInt64(start), UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
                    offset = start + length
                }
            }
        }
    }
}
