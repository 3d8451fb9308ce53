// A secondary index's table in a paged snapshot (FORMAT.md §13.5), read a
// leaf at a time as lookups need it, through the snapshot's block cache.

/// One secondary index of a paged snapshot as ``IndexPages``: a page per
/// leaf, found through the leaves' entries in their parents, which open
/// reads; the leaves themselves are read when a lookup reaches them, and
/// kept in the snapshot's block cache (FORMAT.md §13.6).
///
/// Only for an attribute whose values are never cut (FORMAT.md §13.5):
/// a cut group holds values that only their records can order, so an
/// index of strings or data is loaded whole instead (and rebuilt from the
/// records when it holds a cut group). A cut group met here is damage.
final class PagedIndexTable: IndexPages {
    private let snapshot: SnapshotFile
    private let reader: PagedTreeReader
    private let leaves: [PagedBlock.Child]

    /// Reads the table's branches through `reader`, and no leaf.
    init(_ reader: PagedTreeReader, of snapshot: SnapshotFile) throws(LogStoreError) {
        self.reader = reader
        self.snapshot = snapshot
        leaves = try reader.leaves()
        for leaf in leaves {
            guard case .value(_, cut: false) = leaf.group else {
                throw reader.damaged(leaf.handle.offset, "it starts with a cut value, which an index of this attribute never holds")
            }
        }
    }

    var count: Int { leaves.count }

    func firstValue(ofPage number: Int) -> StoredValue {
        // Every leaf's first group is a whole value (checked in init).
        guard case .value(let value, _) = leaves[number].group else { return .null }
        return value
    }

    func keyCount(ofPage number: Int) -> Int { Int(clamping: leaves[number].entryCount) }

    func page(_ number: Int) -> IndexPage? {
        snapshot.indexLeaf(at: leaves[number].handle.offset) { () throws(LogStoreError) -> IndexPage in
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
