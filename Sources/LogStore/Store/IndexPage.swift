// The entries of a secondary index as a snapshot stored them, in pages:
// held in memory, or read from a paged snapshot's leaves when needed.

/// A run of a secondary index's entries as a snapshot stored them: values
/// in sort order, and per value its keys, increasing. Immutable, so a
/// cache can hand one page to any number of readers.
final class IndexPage: CachedBlock {
    let values: [StoredValue]
    /// Group `g`'s keys are `keys[starts[g] ..< starts[g + 1]]`.
    let starts: [Int]
    let keys: [UInt64]

    /// `keys` in runs of `counts`, one run per value; a count past the keys
    /// left (only a file LogStore did not write holds one) is cut to them.
    init(values: [StoredValue], counts: [Int], keys: [UInt64]) {
        var kept: [StoredValue] = [], starts = [0]
        kept.reserveCapacity(values.count)
        starts.reserveCapacity(values.count + 1)
        var next = 0
        for (value, count) in zip(values, counts) {
            next += min(max(count, 0), keys.count - next)
            kept.append(value)
            starts.append(next)
        }
        self.values = kept
        self.starts = starts
        self.keys = next == keys.count ? keys : Array(keys[..<next])
    }

    var groupCount: Int { values.count }

    /// The bytes it takes, as the block cache counts them: the keys and
    /// group starts, and about 32 bytes a value.
    var byteCount: Int { keys.count * 8 + starts.count * 8 + values.count * 32 }

    func keys(ofGroup group: Int) -> ArraySlice<UInt64> { keys[starts[group]..<starts[group + 1]] }

    /// The first group whose value is not before `value` (or, with
    /// `after`, not before or equal).
    func boundary(_ value: StoredValue, after: Bool) -> Int {
        var low = 0, high = values.count
        while low < high {
            let middle = (low + high) / 2
            let order = StoredValue.sortOrder(values[middle], value)
            if order == .orderedAscending || (after && order == .orderedSame) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// The pages of a secondary index's stored entries, in order: a value's
/// keys may go on from one page into the next, its value repeated.
protocol IndexPages: Sendable {
    /// How many pages there are.
    var count: Int { get }
    /// The first value of page `number`, known without reading the page.
    func firstValue(ofPage number: Int) -> StoredValue
    /// How many keys page `number` holds, known without reading the page.
    func keyCount(ofPage number: Int) -> Int
    /// Page `number`; nil when it cannot be read. The snapshot keeps that
    /// failure, and a read that needed the page throws it
    /// (``SnapshotFile/checkNoReadFailed(since:)``).
    func page(_ number: Int) -> IndexPage?
}

/// Pages held in memory: what a snapshot loaded whole, or a compaction
/// wrote.
struct LoadedIndexPages: IndexPages {
    private let pages: [IndexPage]

    /// The groups `values`, `counts`, `keys` as one page, or none when empty.
    init(values: [StoredValue], counts: [Int], keys: [UInt64]) {
        let page = IndexPage(values: values, counts: counts, keys: keys)
        pages = page.groupCount > 0 ? [page] : []
    }

    var count: Int { pages.count }
    func firstValue(ofPage number: Int) -> StoredValue { pages[number].values[0] }
    func keyCount(ofPage number: Int) -> Int { pages[number].keys.count }
    func page(_ number: Int) -> IndexPage? { pages[number] }
}
