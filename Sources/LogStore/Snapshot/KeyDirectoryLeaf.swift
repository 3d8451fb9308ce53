// A key directory's leaf (FORMAT.md §13.5) read as runs of consecutive
// keys, which is what open needs of it: the keys a store hands out are
// dense, so a leaf of twelve thousand entries is usually a handful of runs.

/// A key-directory leaf: its data blocks, and its entries as runs.
///
/// It is read by the same reading as a whole ``PagedBlock`` leaf
/// (``PagedBlock/readLeafBody(_:_:dataBlock:group:entry:)``), so it accepts
/// exactly the leaves that one does and holds the same entries; only the
/// entries of one entity that follow one another by one key, in one state
/// other than an older version, are held as one ``Run``.
struct KeyDirectoryLeaf: Sendable, Equatable {
    /// Keys `firstKey ..< firstKey + count` of `entity`, all in `state`.
    struct Run: Sendable, Equatable {
        var entity: Int
        var firstKey: UInt64
        var count: Int
        var state: PagedEntry.State

        var lastKey: UInt64 { firstKey + UInt64(count - 1) }
    }

    /// The run and table the block says it belongs to.
    var run: UInt64
    var table: Int
    var dataBlocks: [PagedBlock.DataBlock] = []
    /// The entries in order, which the data blocks' records are one for one.
    var runs: [Run] = []
    var entryCount = 0

    /// Its first and last entries as (entity, key); nil for an empty leaf.
    var first: (entity: Int, key: UInt64)? { runs.first.map { ($0.entity, $0.firstKey) } }
    var last: (entity: Int, key: UInt64)? { runs.last.map { ($0.entity, $0.lastKey) } }

    /// Decodes a key-directory block that must be a leaf.
    init(decoding raw: UnsafeRawBufferPointer) throws(DecodeFailure) {
        var reader = ByteReader(raw)
        let head = try PagedBlock.readHead(&reader)
        guard head.level == 0 else { throw DecodeFailure("it is of level \(head.level) where a leaf was expected") }
        (run, table) = (head.run, head.table)
        var dataBlocks: [PagedBlock.DataBlock] = []
        var runs: [Run] = []
        var entity = 0
        try PagedBlock.readLeafBody(
            &reader, .keys, dataBlock: { dataBlocks.append($0) },
            group: { group, _ in
                // A key directory's groups are entities (readGroupHead).
                if case .entity(let number) = group { entity = number }
            },
            entries: { first, count, state in runs.append(Run(entity: entity, firstKey: first, count: count, state: state)) })
        guard reader.isAtEnd else { throw DecodeFailure("\(reader.remaining) bytes follow its body") }
        self.dataBlocks = dataBlocks
        self.runs = runs
        entryCount = runs.reduce(0) { $0 + $1.count }
    }

    /// The same leaf from a whole decoded one, entry by entry: what the
    /// tests hold this reading to.
    init(_ leaf: PagedBlock) {
        run = leaf.run
        table = leaf.table
        dataBlocks = leaf.dataBlocks
        for (index, entry) in leaf.entries.enumerated() {
            guard case .entity(let entity) = leaf.groups[leaf.group(ofEntry: index)] else { continue }
            Self.add(entry, of: entity, to: &runs)
        }
        entryCount = leaf.entries.count
    }

    /// Adds the next entry to `runs`: to the last run when it goes on from it.
    @inline(__always)
    private static func add(_ entry: PagedEntry, of entity: Int, to runs: inout [Run]) {
        if let last = runs.indices.last, runs[last].entity == entity, runs[last].state == entry.state,
           entry.state != .olderVersion, entry.key == runs[last].lastKey + 1 {
            runs[last].count += 1
        } else {
            runs.append(Run(entity: entity, firstKey: entry.key, count: 1, state: entry.state))
        }
    }
}
