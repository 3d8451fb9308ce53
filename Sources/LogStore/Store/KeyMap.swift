// Values by record key, in memory proportional to the keys held, whatever
// keys a file names.

/// A value per record key: an array indexed by key while the keys are about
/// as dense as the store hands them out, and a dictionary for keys far past
/// the others.
///
/// Keys come from the file, and a checksum does not make them honest: one
/// record with key 2^40 would make an array indexed by key allocate 2^40
/// elements. Here the array grows to cover a key only while its length stays
/// within ``slack`` and ``spread`` times the keys held; a key beyond that costs
/// one dictionary entry. The keys a store hands out (dense from 1, with at
/// most one reservation skipped per session, FORMAT.md §5.5) stay in the
/// array, where a lookup is one index.
///
/// The array is kept in pages of ``pageSize`` values, so that growing it
/// adds pages and never copies the ones it has: one array of every key
/// would double, and the save whose new key crossed its capacity would copy
/// all of it (240 MB for an entity table of 10^7 records).
struct KeyMap<Value: Sendable>: Sendable {
    /// What a key holds until it is set.
    let empty: Value
    /// Key `k` of the array is at `pages[k / pageSize][k % pageSize]`; every
    /// page is full but the last, which holds the keys up to `arrayLength`
    /// and may hold room (``empty`` values) past it.
    private var pages: [[Value]] = []
    /// How many keys the array covers: in proportion to the keys held.
    private(set) var arrayLength = 0
    /// Keys at or past the array's end only.
    private var sparse: [UInt64: Value] = [:]
    /// Keys set past the array's end (and promised by ``reserve(through:holding:)``):
    /// the array may grow to ``spread`` times this, plus ``slack``.
    private var held = 0

    /// The array may cover this many keys more than any key set justifies.
    static var slack: Int { 1 << 16 }
    /// The array may cover this many keys per key set past its end.
    static var spread: Int { 8 }
    /// Keys per page: a growing last page copies at most this many values.
    static var pageSize: Int { 1 << pageShift }
    private static var pageShift: Int { 14 }

    init(empty: Value) { self.empty = empty }

    /// The value of `key`, or ``empty``.
    @inline(__always)
    subscript(key: UInt64) -> Value {
        get {
            if key < UInt64(arrayLength) { return pages[Int(key) >> Self.pageShift][Int(key) & (Self.pageSize - 1)] }
            return sparse.isEmpty ? empty : sparse[key] ?? empty
        }
        set {
            if key < UInt64(arrayLength) {
                pages[Int(key) >> Self.pageShift][Int(key) & (Self.pageSize - 1)] = newValue
            } else {
                store(newValue, at: key)
            }
        }
    }

    /// Calls `body` with where the array holds `key`'s value, when it does:
    /// for a prefetch.
    @inline(__always)
    func withDenseAddress(of key: UInt64, _ body: (UnsafePointer<Value>) -> Void) {
        guard key < UInt64(arrayLength) else { return }
        pages[Int(key) >> Self.pageShift].withUnsafeBufferPointer { body($0.baseAddress! + (Int(key) & (Self.pageSize - 1))) }
    }

    /// Calls `body` with every key and its value, in key order, ``empty``
    /// ones included in the array's range and left out beyond it.
    @inline(__always)
    func forEach(_ body: (UInt64, Value) -> Void) {
        forEachRun { first, run in
            for index in run.indices { body(first + UInt64(index), run[index]) }
        }
    }

    /// Calls `body` with the values of consecutive keys from a first key,
    /// in key order: each page of the array, then each key beyond it alone.
    /// What ``forEach(_:)`` visits, for a loop that walks the values itself.
    @inline(__always)
    func forEachRun(_ body: (_ firstKey: UInt64, UnsafeBufferPointer<Value>) -> Void) {
        for (number, page) in pages.enumerated() {
            let first = number << Self.pageShift
            // The last page may hold room past the array's end.
            page.withUnsafeBufferPointer { body(UInt64(first), UnsafeBufferPointer(rebasing: $0.prefix(arrayLength - first))) }
        }
        guard !sparse.isEmpty else { return }
        for key in sparse.keys.sorted() {
            withUnsafePointer(to: sparse[key]!) { body(key, UnsafeBufferPointer(start: $0, count: 1)) }
        }
    }

    /// About the bytes it holds: the array's pages and the dictionary's
    /// entries, for tests and statistics.
    var byteCount: Int {
        pages.reduce(0) { $0 + $1.capacity } * MemoryLayout<Value>.stride + sparse.capacity * (MemoryLayout<Value>.stride + 8)
    }

    /// Lets the array cover keys up to `largest` now, when `count` keys are
    /// about to be set (in any order) and that many justify it: a snapshot's
    /// index lists its keys by value, not by key.
    /// A reservation the keys do not justify changes nothing: each key is
    /// then counted as it is set, once.
    mutating func reserve(through largest: UInt64, holding count: Int) {
        guard largest >= UInt64(arrayLength), largest < limit(holding: held + count) else { return }
        held += count
        grow(to: Int(largest) + 1)
    }

    /// How far the array may reach with `keys` held past its end.
    private func limit(holding keys: Int) -> UInt64 { UInt64(Self.slack) + UInt64(Self.spread) * UInt64(keys) }

    /// Sets `key` at or past the array's end: a key the dictionary does not
    /// hold yet counts once, however often it is set.
    private mutating func store(_ value: Value, at key: UInt64) {
        let isNew = sparse.isEmpty || sparse[key] == nil
        guard key < limit(holding: held + (isNew ? 1 : 0)) else {
            sparse[key] = value
            if isNew { held += 1 }
            return
        }
        if isNew { held += 1 }
        grow(to: Int(key) + 1)
        self[key] = value
    }

    /// Extends the array to `count` keys, moving in the keys of the
    /// dictionary it now covers: looked up one by one, or found by a walk
    /// of the dictionary, whichever is fewer, so that all growth together
    /// costs time in proportion to the array's length. The last page is
    /// filled ahead, doubling up to a whole page, so that keys handed out
    /// one by one do not each extend it.
    private mutating func grow(to count: Int) {
        let start = arrayLength
        var filled = pages.last.map { (pages.count - 1) * Self.pageSize + $0.count } ?? 0
        while filled < count {
            if let last = pages.indices.last, pages[last].count < Self.pageSize {
                let size = pages[last].count
                let added = min(Self.pageSize, max(2 * size, size + count - filled)) - size
                pages[last].append(contentsOf: repeatElement(empty, count: added))
                filled += added
            } else {
                let added = min(Self.pageSize, count - filled)
                pages.append(Array(repeating: empty, count: added))
                filled += added
            }
        }
        arrayLength = count
        guard !sparse.isEmpty else { return }
        if count - start < sparse.count {
            for key in start..<count {
                if let value = sparse.removeValue(forKey: UInt64(key)) { self[UInt64(key)] = value }
            }
        } else {
            for (key, value) in sparse where key < UInt64(count) {
                sparse[key] = nil
                self[key] = value
            }
        }
    }
}
