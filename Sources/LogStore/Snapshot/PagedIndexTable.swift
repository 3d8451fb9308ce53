// A secondary index's table in a paged snapshot (FORMAT.md §13.5), read a
// leaf at a time as lookups need it, through the snapshot's block cache.

/// One secondary index of a paged snapshot as ``IndexPages``: a page per
/// leaf, found through the leaves' entries in their parents, which open
/// reads (``leaves(of:)``); the leaves themselves are read when a lookup
/// reaches them, and kept in the snapshot's block cache (FORMAT.md §13.6).
///
/// Only for an attribute whose values are never cut (FORMAT.md §13.5,
/// ``PagedGroup/mayCut(storedType:)``): a cut group holds values that only
/// their records can order, so an index of strings or data is read whole
/// at open instead (and rebuilt from the records when it holds a cut
/// group). A cut group met here is damage.
final class PagedIndexTable: IndexPages {
    private let snapshot: SnapshotFile
    private let reader: PagedTreeReader
    private let leaves: [PagedBlock.Child]

    /// The table `reader` reads, whose leaves are `leaves` (``leaves(of:)``),
    /// read through `snapshot`'s cache.
    init(_ reader: PagedTreeReader, leaves: [PagedBlock.Child], of snapshot: SnapshotFile) {
        self.reader = reader
        self.snapshot = snapshot
        self.leaves = leaves
    }

    /// The leaves of the table `reader` reads, as its branches list them,
    /// each starting with a whole value.
    static func leaves(of reader: PagedTreeReader) throws(LogStoreError) -> [PagedBlock.Child] {
        let leaves = try reader.leaves()
        for leaf in leaves {
            guard case .value(_, cut: false) = leaf.group else {
                throw reader.damaged(leaf.handle.offset, "it starts with a cut value, which an index of this attribute never holds")
            }
        }
        return leaves
    }

    /// Reads and checks every leaf, bypassing the cache: a salvage's open
    /// finds damage a checksum cannot show while it can still repair it.
    func checkEveryLeaf() throws(LogStoreError) {
        for number in leaves.indices { _ = try decode(number) }
    }

    var count: Int { leaves.count }

    func firstValue(ofPage number: Int) -> StoredValue {
        // Every leaf's first group is a whole value (checked by leaves(of:)).
        guard case .value(let value, _) = leaves[number].group else { return .null }
        return value
    }

    func keyCount(ofPage number: Int) -> Int { Int(clamping: leaves[number].entryCount) }

    func page(_ number: Int) -> IndexPage? {
        snapshot.indexLeaf(of: reader.tree.table, at: leaves[number].handle.offset) { () throws(LogStoreError) -> IndexPage in
            try decode(number)
        }
    }

    /// Leaf `number` as a page, checked against its parent's entry and
    /// against the next leaf's first entry, which it must stay before.
    private func decode(_ number: Int) throws(LogStoreError) -> IndexPage {
        let child = leaves[number]
        let leaf = try reader.leaf(child)
        func damaged(_ reason: String) -> LogStoreError { reader.damaged(child.handle.offset, reason) }
        if number + 1 < leaves.count, let last = leaf.entries.last {
            let next = leaves[number + 1]
            guard PagedGroup.order((leaf.groups[leaf.groups.count - 1], last.key), (next.group, next.key)) == .orderedAscending else {
                throw damaged("its entries run past the first entry of the leaf after it")
            }
        }
        var values: [StoredValue] = [], counts: [Int] = [], keys: [UInt64] = []
        values.reserveCapacity(leaf.groups.count)
        counts.reserveCapacity(leaf.groups.count)
        keys.reserveCapacity(leaf.entries.count)
        var start = 0
        for (group, end) in zip(leaf.groups, leaf.groupEnds) {
            defer { start = end }
            guard case .value(let value, cut: false) = group else { throw damaged("it holds a cut value, which an index of this attribute never holds") }
            var present = 0
            for entry in leaf.entries[start..<end] {
                switch entry.state {
                case .present:
                    keys.append(entry.key)
                    present += 1
                case .tombstone: break  // hides nothing in the only run
                case .olderVersion: throw damaged("its table lists an older version of a record, which a run without history does not keep")
                }
            }
            guard present > 0 else { continue }
            values.append(value)
            counts.append(present)
        }
        return IndexPage(values: values, counts: counts, keys: keys)
    }
}
