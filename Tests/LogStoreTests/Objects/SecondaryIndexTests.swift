// The secondary index against a dictionary of current values.

import Foundation
import Testing
@testable import LogStore

@Suite("Secondary index")
struct SecondaryIndexTests {
    /// The shapes the index takes: the default (every settle of this test
    /// merges everything), and runs and tails so short that settles put
    /// entries into runs one by one, split runs, sweep and join them.
    static let shapes: [(chunkCapacity: Int, tailLimit: Int)] = [(512, 1024), (4, 8), (2, 3), (16, 40)]

    @Test("Sets, changes and removes, settled and unsettled: lookups, estimates and ordered groups match a brute-force answer",
          arguments: shapes.indices)
    func matchesBruteForce(shape: Int) {
        var index = SecondaryIndex(slot: 0, chunkCapacity: Self.shapes[shape].chunkCapacity, tailLimit: Self.shapes[shape].tailLimit)
        var current: [UInt64: StoredValue] = [:]
        var random = JournalFixtures.SeededGenerator(seed: 0x1DE + UInt64(shape))
        func value() -> StoredValue {
            switch random.next() % 10 {
            case 0: .null
            case 1: .double(Double(random.next() % 50) + 0.5)
            default: .int64(Int64(random.next() % 50))
            }
        }
        func check(_ step: Int) {
            let ranges: [SecondaryIndex.Range] = [
                .equal(to: [.int64(7)]), .equal(to: [.null]), .equal(to: [.int64(3), .double(10.5), .int64(3)]),
                SecondaryIndex.Range(values: nil, lower: (.int64(10), true), upper: (.int64(20), false)),
                SecondaryIndex.Range(values: nil, lower: (.double(40.5), false), upper: nil),
                SecondaryIndex.Range(values: nil, lower: nil, upper: (.int64(5), true)),
            ]
            for range in ranges {
                let expected = current.filter { range.contains($0.value) }.keys.sorted()
                #expect(index.keys(in: range).sorted() == expected, "step \(step), \(range)")
                #expect(index.count(in: range) == expected.count, "step \(step), \(range)")
                #expect(index.estimate(range) >= expected.count)
            }
            for ascending in [true, false] {
                var seen: [(StoredValue, [UInt64])] = []
                index.forEachGroup(ascending: ascending) { value, keys in
                    seen.append((value, keys))
                    return true
                }
                let groups = Dictionary(grouping: current, by: { $0.value }).map { ($0.key, $0.value.map(\.key).sorted()) }
                    .sorted { a, b in
                        let order = StoredValue.sortOrder(a.0, b.0)
                        return ascending ? order == .orderedAscending : order == .orderedDescending
                    }
                #expect(seen.map(\.1) == groups.map(\.1), "step \(step), ascending \(ascending)")
            }
        }
        for step in 0..<6_000 {
            let key = random.next() % 400 + 1
            if random.next() % 5 == 0 {
                index.remove(key)
                current[key] = nil
            } else {
                let new = value()
                index.set(key, new)
                current[key] = new
            }
            // Settles after runs of 1 to about 30 changes, so the tail takes
            // new entries both one by one and by merging a sorted batch.
            if random.next() % 9 == 0 { index.settle() }
            if step % 1_000 == 999 { check(step) }
            if step % 1_000 == 500 {
                index.settle()
                check(step)
            }
        }
        index.settle()
        check(6_000)
    }

    @Test("An index loaded from a snapshot, then changed a few records at a time, matches a brute-force answer", arguments: shapes.indices)
    func loadedThenChanged(shape: Int) {
        var random = JournalFixtures.SeededGenerator(seed: 0x5EC + UInt64(shape))
        var current: [UInt64: StoredValue] = [:]
        for key in UInt64(1)...2_000 { current[key] = .int64(Int64(random.next() % 300)) }
        let groups = Dictionary(grouping: current, by: { $0.value })
            .map { ($0.key, $0.value.map(\.key).sorted()) }
            .sorted { StoredValue.sortOrder($0.0, $1.0) == .orderedAscending }
        // Stored in pages of a few keys, each value's keys going on from
        // one page into the next as a paged snapshot's leaves hold them.
        let pageSize = [1, 7, 50, 3_000][shape]
        var index = SecondaryIndex(slot: 0, stored: SplitPages(values: groups.map(\.0), counts: groups.map(\.1.count), keys: groups.flatMap(\.1), pageSize: pageSize))
        let shapes = Self.shapes[shape]
        var reshaped = SecondaryIndex(slot: 0, chunkCapacity: shapes.chunkCapacity, tailLimit: shapes.tailLimit)
        for (key, value) in current { reshaped.set(key, value) }
        reshaped.settle()
        var written: (index: SecondaryIndex, changes: [UInt64: StoredValue?])?
        for step in 0..<3_000 {
            let key = random.next() % 2_200 + 1
            if random.next() % 4 == 0 {
                index.remove(key)
                reshaped.remove(key)
                current[key] = nil
            } else {
                let value = StoredValue.int64(Int64(random.next() % 300))
                index.set(key, value)
                reshaped.set(key, value)
                current[key] = value
            }
            index.settle()
            reshaped.settle()
            // A compaction part way: what the index held then becomes the
            // base of a new one, and the changes since are applied to it.
            if step == 1_000 { written = (index, [:]) }
            if step > 1_000 { written?.changes[key] = current[key] }
            if step % 500 == 499 {
                var candidates = [index, reshaped]
                if let written {
                    let (values, counts, keys) = written.index.groups()
                    candidates.append(index.relocated(to: SplitPages(values: values, counts: counts, keys: keys, pageSize: pageSize),
                                                      changedSince: written.changes.map { (key: $0.key, value: $0.value) }))
                }
                let range = SecondaryIndex.Range(values: nil, lower: (.int64(100), true), upper: (.int64(150), false))
                let expected = current.filter { range.contains($0.value) }.keys.sorted()
                let expectedGroups = Dictionary(grouping: current, by: { $0.value }).map { ($0.key, $0.value.map(\.key).sorted()) }
                    .sorted { StoredValue.sortOrder($0.0, $1.0) == .orderedAscending }
                for candidate in candidates {
                    #expect(candidate.keys(in: range).sorted() == expected, "step \(step)")
                    #expect(candidate.count(in: range) == expected.count, "step \(step)")
                    #expect(candidate.estimate(range) >= expected.count, "step \(step)")
                    let groups = candidate.groups()
                    #expect(groups.keys.count == current.count, "step \(step)")
                    #expect(Set(groups.keys) == Set(current.keys), "step \(step)")
                    for ascending in [true, false] {
                        var seen: [(StoredValue, [UInt64])] = []
                        candidate.forEachGroup(ascending: ascending) { value, keys in
                            seen.append((value, keys))
                            return true
                        }
                        let ordered = ascending ? expectedGroups : expectedGroups.reversed()
                        #expect(seen.map(\.1) == ordered.map(\.1) && seen.map(\.0) == ordered.map(\.0), "step \(step), ascending \(ascending)")
                    }
                }
            }
        }
    }

    @Test("Single-record updates leave few stale entries in the runs for lookups, counts and estimates to walk; the snapshot's, until the next compaction", arguments: [false, true])
    func staleEntriesStayFew(shuffled: Bool) {
        let count = 100_000, updated = 30_000
        let keys = (1...UInt64(count)).map { $0 }
        var generator = JournalFixtures.SeededGenerator(seed: 24)
        let order = shuffled ? keys.shuffled(using: &generator) : keys
        var index = SecondaryIndex(slot: 0, values: [.int64(0)], counts: [count], keys: keys)
        for key in order.prefix(updated) {
            index.set(key, .int64(1))
            index.settle()
        }
        let live = count - updated
        #expect(index.count(in: .equal(to: [.int64(0)])) == live)
        // The snapshot's entries stay until a compaction writes a new one;
        // the runs hold the changes, and stale entries among them are swept
        // in proportion to the entries each settle moves, so they stay near
        // 1/`sweepRatio` of the runs.
        #expect(index.estimate(.equal(to: [.int64(0)])) <= count)
        #expect(index.estimate(.equal(to: [.int64(1)])) <= updated + updated / 8)
        // Thirty thousand more updates of the same records, each superseding
        // an entry in the runs.
        for key in order.prefix(updated) {
            index.set(key, .int64(2))
            index.settle()
        }
        #expect(index.estimate(.equal(to: [.int64(2)])) <= updated + updated / 8)
        #expect(index.estimate(.equal(to: [.int64(1)])) <= updated / 8)
        // After a compaction, the new snapshot holds exactly the live entries.
        let (values, counts, stored) = index.groups()
        let compacted = index.relocated(to: LoadedIndexPages(values: values, counts: counts, keys: stored), changedSince: [])
        #expect(compacted.estimate(.equal(to: [.int64(0)])) == live && compacted.estimate(.equal(to: [.int64(2)])) == updated)
        #expect(compacted.count(in: .equal(to: [.int64(2)])) == updated)
    }
}

/// Stored index entries cut into pages of `pageSize` keys, a value's keys
/// going on into the next page with the value repeated, as a paged
/// snapshot's leaves hold them (PagedIndexTable reads those from a file).
private struct SplitPages: IndexPages {
    private let pages: [IndexPage]

    init(values: [StoredValue], counts: [Int], keys: [UInt64], pageSize: Int) {
        var pages: [IndexPage] = []
        var pageValues: [StoredValue] = [], pageCounts: [Int] = [], pageKeys: [UInt64] = []
        var next = 0
        for (value, count) in zip(values, counts) {
            for key in keys[next..<(next + count)] {
                if pageKeys.count == pageSize {
                    pages.append(IndexPage(values: pageValues, counts: pageCounts, keys: pageKeys))
                    (pageValues, pageCounts, pageKeys) = ([], [], [])
                }
                if pageCounts.isEmpty || StoredValue.sortOrder(pageValues[pageValues.count - 1], value) != .orderedSame {
                    pageValues.append(value)
                    pageCounts.append(0)
                }
                pageCounts[pageCounts.count - 1] += 1
                pageKeys.append(key)
            }
            next += count
        }
        if !pageKeys.isEmpty { pages.append(IndexPage(values: pageValues, counts: pageCounts, keys: pageKeys)) }
        self.pages = pages
    }

    var count: Int { pages.count }
    func firstValue(ofPage number: Int) -> StoredValue { pages[number].values[0] }
    func keyCount(ofPage number: Int) -> Int { pages[number].keys.count }
    func page(_ number: Int) -> IndexPage? { pages[number] }
}
