// Where one entity's records lie in the store's snapshot, by key, in memory
// that grows with the snapshot's blocks rather than with its keys.

/// The keys of one entity's records in a snapshot, each with the block and
/// slot that hold it.
///
/// A snapshot lists an entity's records in key order, block after block,
/// and the keys a store hands out are dense: most blocks hold a run of
/// consecutive keys in consecutive slots. Such a run is one ``Segment`` of
/// 40 bytes, whatever its length. Where keys skip (records deleted before
/// the snapshot was written), a short segment keeps each key's offset from
/// its first key, 4 bytes a key, and a long one ends, so that a gap in a
/// long run costs one segment. A key is found by a binary search of the
/// segments, then of the offsets when the segment keeps them.
///
/// The key map this replaces held 24 bytes for every key the snapshot held,
/// and open wrote all of them.
struct LocatedKeys: Sendable, Equatable {
    /// Keys `firstKey + offset` at slots `firstSlot ..< firstSlot + count`
    /// of `block`: every offset below `count` when `offsetsStart` is nil,
    /// else `offsets[offsetsStart ..< offsetsStart + count]`, increasing.
    private struct Segment: Sendable, Equatable {
        var firstKey: UInt64
        var offsetsStart: Int?
        var block: UInt32
        var firstSlot: UInt32
        var count: UInt32
    }

    private var segments: [Segment] = []
    private var offsets: [UInt32] = []
    /// How many keys it holds.
    private(set) var count = 0
    /// The last key appended.
    private(set) var lastKey: UInt64?

    /// A dense segment longer than this ends at a gap; a shorter one keeps
    /// offsets from then on: one new segment costs as much as 10 offsets.
    private static let longRun: UInt32 = 10

    /// Records that `key` is at `slot` of `block`.
    ///
    /// - Returns: false, recording nothing, when `key` is not past every key
    ///   recorded before, or `block` or `slot` cannot be held: keys come
    ///   from the file, and a list out of order is damage.
    mutating func append(_ key: UInt64, block: Int, slot: Int) -> Bool {
        guard lastKey.map({ key > $0 }) ?? true, let block = UInt32(exactly: block), let slot = UInt32(exactly: slot) else { return false }
        lastKey = key
        count += 1
        if let last = segments.indices.last {
            var segment = segments[last]
            let distance = key - segment.firstKey
            if segment.block == block, UInt64(segment.firstSlot) + UInt64(segment.count) == UInt64(slot),
               segment.count < UInt32.max, let offset = UInt32(exactly: distance) {
                if segment.offsetsStart == nil {
                    if offset == segment.count {
                        segments[last].count += 1
                        return true
                    }
                    if segment.count < Self.longRun {
                        segment.offsetsStart = offsets.count
                        offsets.append(contentsOf: 0..<segment.count)
                    }
                }
                if segment.offsetsStart != nil {
                    // Only the last segment ever grows, so its offsets are the
                    // last ones in `offsets`.
                    offsets.append(offset)
                    segment.count += 1
                    segments[last] = segment
                    return true
                }
            }
        }
        segments.append(Segment(firstKey: key, offsetsStart: nil, block: block, firstSlot: slot, count: 1))
        return true
    }

    /// Records that the `count` keys from `firstKey` on, consecutive, are
    /// at the slots from `firstSlot` on of `block`: what ``append(_:block:slot:)``
    /// of each would record, in one step where they extend a segment.
    mutating func append(run firstKey: UInt64, count: Int, block: Int, firstSlot: Int) -> Bool {
        guard count > 0 else { return true }
        let (lastKey, keyOverflow) = firstKey.addingReportingOverflow(UInt64(count - 1))
        guard !keyOverflow, UInt32(exactly: firstSlot + count - 1) != nil, append(firstKey, block: block, slot: firstSlot) else { return false }
        let last = segments.count - 1
        guard count > 1 else { return true }
        // The segment holding `firstKey` ends with it: a dense one takes
        // the rest by its count.
        if segments[last].offsetsStart == nil, segments[last].count <= UInt32.max - UInt32(count - 1) {
            segments[last].count += UInt32(count - 1)
            self.lastKey = lastKey
            self.count += count - 1
            return true
        }
        for index in 1..<count where !append(firstKey + UInt64(index), block: block, slot: firstSlot + index) { return false }
        return true
    }

    /// Makes room for `count` segments, as many as the blocks an open
    /// expects its keys to lie in, so that appending them copies nothing.
    mutating func reserveCapacity(segments count: Int) {
        segments.reserveCapacity(count)
    }

    /// Gives back the room its arrays grew into while keys were appended,
    /// when that is more than an eighth of what they hold: a copy of the
    /// whole array to save less would cost an open more than it saves.
    mutating func trim() {
        segments = Self.trimmed(segments)
        offsets = Self.trimmed(offsets)
    }

    private static func trimmed<Element>(_ array: [Element]) -> [Element] {
        guard array.capacity - array.count > array.count / 8 else { return array }
        var copy: [Element] = []
        copy.reserveCapacity(array.count)
        copy.append(contentsOf: array)
        return copy
    }

    /// The block and slot of `key`, or nil when it holds no such key.
    @inline(__always)
    func locate(_ key: UInt64) -> (block: Int, slot: Int)? {
        segments.withUnsafeBufferPointer { segments -> (block: Int, slot: Int)? in
            // The last segment starting at or before `key`.
            var low = 0, high = segments.count
            while low < high {
                let middle = (low + high) >> 1
                if segments[middle].firstKey <= key { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let segment = segments[low - 1]
            guard let rank = rank(of: key - segment.firstKey, in: segment) else { return nil }
            return (Int(segment.block), Int(segment.firstSlot) + rank)
        }
    }

    /// Whether it holds `key`.
    func contains(_ key: UInt64) -> Bool { locate(key) != nil }

    /// The position of the key `distance` past `segment`'s first among its keys.
    @inline(__always)
    private func rank(of distance: UInt64, in segment: Segment) -> Int? {
        guard let start = segment.offsetsStart else {
            return distance < UInt64(segment.count) ? Int(distance) : nil
        }
        guard let target = UInt32(exactly: distance) else { return nil }
        return offsets.withUnsafeBufferPointer { offsets -> Int? in
            var low = start, high = start + Int(segment.count)
            while low < high {
                let middle = (low + high) >> 1
                if offsets[middle] < target { low = middle + 1 } else { high = middle }
            }
            return low < start + Int(segment.count) && offsets[low] == target ? low - start : nil
        }
    }

    /// Calls `body` with each run of keys that lie in consecutive slots of
    /// one block, in key order: the block, the first slot, and the keys.
    func forEachRun(_ body: (_ block: Int, _ firstSlot: Int, _ keys: Run) -> Void) {
        offsets.withUnsafeBufferPointer { offsets in
            for segment in segments {
                let run = Run(
                    firstKey: segment.firstKey, count: Int(segment.count),
                    offsets: segment.offsetsStart.map { UnsafeBufferPointer(rebasing: offsets[$0..<($0 + Int(segment.count))]) })
                body(Int(segment.block), Int(segment.firstSlot), run)
            }
        }
    }

    /// Calls `body` with every key, in increasing order.
    func forEach(_ body: (UInt64) -> Void) {
        forEachRun { _, _, run in
            for index in 0..<run.count { body(run[index]) }
        }
    }

    /// The keys of one segment, borrowed for the length of ``forEachRun(_:)``.
    struct Run {
        let firstKey: UInt64
        let count: Int
        fileprivate let offsets: UnsafeBufferPointer<UInt32>?

        /// The key at `index`, below ``count``.
        @inline(__always)
        subscript(index: Int) -> UInt64 {
            offsets.map { firstKey + UInt64($0[index]) } ?? firstKey + UInt64(index)
        }
    }

    /// The bytes it holds, for tests and statistics.
    var byteCount: Int { segments.capacity * MemoryLayout<Segment>.stride + offsets.capacity * 4 }
}
