// A secondary index of one attribute: record keys in the order of their values.

import Foundation

/// The records of one entity ordered by one attribute's value, for
/// equality, `IN` and range lookups and for sorted reads with a limit.
///
/// Entries live in a sorted array, with the latest changes in a short
/// unsorted tail that is merged in once a save leaves it longer than
/// `tailLimit`: a single-record save appends, a bulk save merges once.
/// A changed or deleted record's old entry is not searched for: the record's
/// generation moves on, and entries of an older generation are skipped and
/// dropped at the next merge.
struct SecondaryIndex: Sendable {
    struct Entry: Sendable {
        var value: StoredValue
        var key: UInt64
        var generation: UInt32
    }

    /// A set of values to look up.
    struct Range: Sendable {
        /// Exactly these values (`==`, `IN`); nil for a range.
        var values: [StoredValue]?
        var lower: (value: StoredValue, inclusive: Bool)?
        var upper: (value: StoredValue, inclusive: Bool)?

        static func equal(to values: [StoredValue]) -> Range { Range(values: values) }

        /// The values between `lower` and `upper` (either may be open) by
        /// the predicate order (``StoredValue/order(_:_:)``). NaN compares
        /// only with NaN, so a NaN bound selects NaN alone, or nothing.
        static func between(lower: (value: StoredValue, inclusive: Bool)?, upper: (value: StoredValue, inclusive: Bool)?) -> Range {
            let bounds = [lower, upper].compactMap { $0 }
            guard bounds.contains(where: { $0.value.numeric?.isNaN == true }) else {
                return Range(values: nil, lower: lower, upper: upper)
            }
            let nan = bounds.allSatisfy { $0.inclusive && $0.value.numeric?.isNaN == true }
            return .equal(to: nan ? [.double(.nan)] : [])
        }

        /// Whether `value` lies in the range, by the predicate order.
        func contains(_ value: StoredValue) -> Bool {
            if let values { return values.contains { StoredValue.order($0, value) == .orderedSame } }
            if let lower {
                guard let order = StoredValue.order(value, lower.value) else { return false }
                if order == .orderedAscending || (order == .orderedSame && !lower.inclusive) { return false }
            }
            if let upper {
                guard let order = StoredValue.order(value, upper.value) else { return false }
                if order == .orderedDescending || (order == .orderedSame && !upper.inclusive) { return false }
            }
            return value != .null && value.numeric?.isNaN != true
        }

        /// This range narrowed to values also in `other`.
        func intersected(with other: Range) -> Range {
            if let values { return Range(values: values.filter(other.contains)) }
            if let values = other.values { return Range(values: values.filter(contains)) }
            var result = self
            if let bound = other.lower {
                if let current = lower {
                    let order = StoredValue.sortOrder(bound.value, current.value)
                    if order == .orderedDescending || (order == .orderedSame && !bound.inclusive) { result.lower = bound }
                } else {
                    result.lower = bound
                }
            }
            if let bound = other.upper {
                if let current = upper {
                    let order = StoredValue.sortOrder(bound.value, current.value)
                    if order == .orderedAscending || (order == .orderedSame && !bound.inclusive) { result.upper = bound }
                } else {
                    result.upper = bound
                }
            }
            return result
        }
    }

    /// The attribute's slot.
    let slot: Int
    private var sorted: [Entry] = []
    private var tail: [Entry] = []
    /// Per record key, the generation of its current entry shifted left
    /// by one, with the low bit set while the record holds a value: one
    /// array, so that checking an entry costs one memory access.
    private var states = KeyMap<UInt32>(empty: 0)
    private static let tailLimit = 1024

    init(slot: Int) { self.slot = slot }

    /// The index a snapshot stored (FORMAT.md §11.3): `keys` in runs of
    /// `counts`, one run per value, values in sort order and each run's keys
    /// increasing, exactly as ``groups()`` gives them.
    init(slot: Int, values: [StoredValue], counts: [Int], keys: [UInt64]) {
        self.slot = slot
        sorted.reserveCapacity(keys.count)
        states.reserve(through: keys.max() ?? 0, holding: keys.count)
        var next = 0
        for (value, count) in zip(values, counts) {
            for key in keys[next..<(next + count)] {
                states[key] = 0b11
                sorted.append(Entry(value: value, key: key, generation: 0b11))
            }
            next += count
        }
    }

    /// Every current entry as a snapshot stores it: the values in sort
    /// order, how many keys each has, and the keys, increasing per value.
    func groups() -> (values: [StoredValue], counts: [Int], keys: [UInt64]) {
        var values: [StoredValue] = [], counts: [Int] = [], keys: [UInt64] = []
        forEachGroup(ascending: true) { value, group in
            values.append(value)
            counts.append(group.count)
            keys += group
            return true
        }
        return (values, counts, keys)
    }

    /// Records `key` as holding `value` (replacing what it held).
    mutating func set(_ key: UInt64, _ value: StoredValue) {
        states[key] = ((states[key] >> 1) &+ 1) << 1 | 1
        tail.append(Entry(value: value, key: key, generation: states[key]))
    }

    mutating func remove(_ key: UInt64) {
        let state = states[key]
        guard state != 0 else { return }
        states[key] = ((state >> 1) &+ 1) << 1
    }

    /// Merges the tail once it is long; called after each save is applied.
    mutating func settle() {
        guard tail.count > Self.tailLimit else { return }
        var recent = tail.filter(isCurrent)
        recent.sort(by: Self.precedes)
        var merged: [Entry] = []
        merged.reserveCapacity(sorted.count + recent.count)
        var old = sorted.makeIterator(), new = recent.makeIterator()
        var a = old.next(), b = new.next()
        while let left = a {
            guard isCurrent(left) else { a = old.next(); continue }
            if let right = b, Self.precedes(right, left) {
                merged.append(right)
                b = new.next()
            } else {
                merged.append(left)
                a = old.next()
            }
        }
        while let right = b {
            merged.append(right)
            b = new.next()
        }
        sorted = merged
        tail = []
    }

    private func isCurrent(_ entry: Entry) -> Bool {
        states[entry.key] == entry.generation
    }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        switch StoredValue.sortOrder(a.value, b.value) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a.key < b.key
        }
    }

    /// The first position in `sorted` whose value is not before `value`
    /// (or, with `after`, not before or equal).
    private func boundary(_ value: StoredValue, after: Bool) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            let order = StoredValue.sortOrder(sorted[middle].value, value)
            if order == .orderedAscending || (after && order == .orderedSame) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func span(_ range: Range) -> [Swift.Range<Int>] {
        if let values = range.values {
            return values.map { boundary($0, after: false)..<boundary($0, after: true) }
        }
        // Ranges never include nil or NaN, which sort before every number.
        let start = range.lower.map { boundary($0.value, after: !$0.inclusive) }
            ?? boundary(.double(.nan), after: true)
        let end = range.upper.map { boundary($0.value, after: $0.inclusive) } ?? sorted.count
        return [start..<max(start, end)]
    }

    /// The keys whose current value lies in `range`, in no set order.
    func keys(in range: Range) -> [UInt64] {
        var keys: [UInt64] = []
        var seen = Set<UInt64>()
        for part in span(range) {
            for entry in sorted[part] where isCurrent(entry) { keys.append(entry.key) }
        }
        for entry in tail where isCurrent(entry) && range.contains(entry.value) { keys.append(entry.key) }
        // `IN` with a repeated value finds a key twice.
        if range.values.map({ $0.count > 1 }) ?? false { keys = keys.filter { seen.insert($0).inserted } }
        return keys
    }

    /// How many records hold a value in `range`.
    func count(in range: Range) -> Int {
        // Several values may be one value of different kinds (5 and 5.0).
        if let values = range.values, values.count > 1 { return keys(in: range).count }
        var count = 0
        for part in span(range) {
            for entry in sorted[part] where isCurrent(entry) { count += 1 }
        }
        return count + tail.count { isCurrent($0) && range.contains($0.value) }
    }

    /// About how many records `range` holds, without reading them.
    func estimate(_ range: Range) -> Int {
        span(range).reduce(0) { $0 + $1.count } + tail.count { range.contains($0.value) }
    }

    /// Calls `body` with the keys of each value in value order (nil first
    /// when ascending, last when descending), the keys of one value in
    /// increasing order, until it returns false.
    func forEachGroup(ascending: Bool, _ body: (StoredValue, [UInt64]) -> Bool) {
        var recent = tail.filter(isCurrent)
        recent.sort(by: Self.precedes)
        // Two cursors, over the sorted entries and the recent ones, moving
        // in the direction asked for.
        var main = ascending ? 0 : sorted.count - 1
        var other = ascending ? 0 : recent.count - 1
        let step = ascending ? 1 : -1
        func valid(_ position: Int, _ count: Int) -> Bool { position >= 0 && position < count }
        while true {
            while valid(main, sorted.count), !isCurrent(sorted[main]) { main += step }
            let hasMain = valid(main, sorted.count), hasOther = valid(other, recent.count)
            guard hasMain || hasOther else { return }
            let fromMain: Bool
            if hasMain && hasOther {
                let order = StoredValue.sortOrder(sorted[main].value, recent[other].value)
                fromMain = (order == .orderedAscending) == ascending || order == .orderedSame
            } else {
                fromMain = hasMain
            }
            // The entry that gives the value is taken before any comparison,
            // so every step moves on whatever the order says.
            let value: StoredValue
            var keys: [UInt64]
            if fromMain {
                (value, keys) = (sorted[main].value, [sorted[main].key])
                main += step
            } else {
                (value, keys) = (recent[other].value, [recent[other].key])
                other += step
            }
            while valid(main, sorted.count), StoredValue.sortOrder(sorted[main].value, value) == .orderedSame {
                if isCurrent(sorted[main]) { keys.append(sorted[main].key) }
                main += step
            }
            while valid(other, recent.count), StoredValue.sortOrder(recent[other].value, value) == .orderedSame {
                keys.append(recent[other].key)
                other += step
            }
            keys.sort()
            guard body(value, keys) else { return }
        }
    }
}
