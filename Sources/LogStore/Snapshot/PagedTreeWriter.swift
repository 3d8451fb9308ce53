// Writes one paged table (FORMAT.md §13.5) as it is given its entries in
// order: leaves as they fill, branches bottom-up, one open block per level,
// so that writing a table of any size holds a few blocks in memory.

/// Where a written table is: what a root lists for it (FORMAT.md §13.4).
struct PagedTree: Sendable {
    var type: PagedTableType
    var run: UInt64
    var table: Int
    /// The top block's level: 0 when the table is one leaf.
    var height: Int
    var entryCount: UInt64
    var top: FrameHandle

    /// No tree is higher: a branch has at least two children, and a table
    /// holds fewer than 2⁶⁴ entries.
    static let maximumHeight = 64
}

/// Builds a paged table from its entries in the table's order.
///
/// Entries go to the open leaf until the next would take it past
/// ``blockSize``; the full leaf is then handed to `write`, which appends it
/// as a frame and returns its handle, and the leaf's first entry goes to the
/// open branch one level up, which closes the same way. A key directory's
/// leaf closes only between data blocks, since each data block belongs to
/// one leaf.
struct PagedTreeWriter {
    let type: PagedTableType
    let run: UInt64
    let table: Int
    /// The payload size a block is filled to (an entry may pass it).
    let blockSize: Int
    /// Whether `write` encodes runs of entries as run words (FORMAT.md
    /// §13.5), as version 6 does, which sizes entries.
    let runWords: Bool
    private let write: (PagedBlock) throws(LogStoreError) -> FrameHandle

    private var leaf: PagedBlock
    private var leafBytes = 0
    /// The open leaf's last entry, and how many entries before it went on
    /// in a run (``PagedBlock/goesOn(_:from:)``): what sizes the next.
    private var previousEntry: PagedEntry?
    private var runLength = 0
    /// Open branches: `branches[i]` lists blocks of level `i` for a block of level `i + 1`.
    private var branches: [[PagedBlock.Child]] = []
    private var branchBytes: [Int] = []
    private var last: (group: PagedGroup, key: UInt64)?
    private(set) var entryCount: UInt64 = 0

    init(type: PagedTableType, run: UInt64, table: Int, blockSize: Int, runWords: Bool = true, write: @escaping (PagedBlock) throws(LogStoreError) -> FrameHandle) {
        self.type = type
        self.runWords = runWords
        self.run = run
        self.table = table
        self.blockSize = max(blockSize, 1)
        self.write = write
        leaf = PagedBlock(run: run, table: table, level: 0)
    }

    /// Adds the entry (`group`, `key`) of a secondary index or pointer table.
    /// Entries must come in the table's order (``PagedGroup/order(_:_:)``).
    mutating func append(_ group: PagedGroup, _ entry: PagedEntry) throws(LogStoreError) {
        precondition(type != .keys, "a key directory takes its entries with their data blocks")
        let size = entrySize(group, entry)
        if !leaf.entries.isEmpty && (leafBytes + size > blockSize || leaf.entries.count == PagedBlock.maximumLeafEntries) {
            try closeLeaf()
            leafBytes += entrySize(group, entry)
        } else {
            leafBytes += size
        }
        add(group, entry)
    }

    /// Adds the entries of one group, present, with keys increasing: what
    /// ``append(_:_:)`` does for each, comparing the group once rather than
    /// at every entry (the open group's value may be a long string).
    mutating func append(_ group: PagedGroup, presentKeys keys: some Collection<UInt64>) throws(LogStoreError) {
        guard let first = keys.first else { return }
        try append(group, PagedEntry(key: first, state: .present))
        for key in keys.dropFirst() {
            precondition(key > previousEntry?.key ?? 0 && key < RecordID.keyLimit, "keys of a group out of order")
            let entry = PagedEntry(key: key, state: .present)
            let size = PagedBlock.entrySize(entry, after: previousEntry, runLength: runWords ? runLength : nil)
            if leafBytes + size > blockSize || leaf.entries.count == PagedBlock.maximumLeafEntries {
                try closeLeaf()
                // The group starts again in the new leaf, its value repeated.
                leafBytes = PagedBlock.groupHeadSize(group, count: 1) + 2 + PagedBlock.entrySize(entry, after: nil, runLength: 0)
                leaf.groups.append(group)
                leaf.groupEnds.append(0)
            } else {
                leafBytes += size
            }
            leaf.groupEnds[leaf.groupEnds.count - 1] += 1
            leaf.entries.append(entry)
            noteAdded(entry, inOpenGroup: previousEntry != nil)
            entryCount += 1
        }
        last = (group, previousEntry?.key ?? first)
    }

    /// Adds a data block of the key directory and its records' entries, in
    /// order: `records` are (entity, entry) pairs.
    mutating func append(dataBlock handle: FrameHandle, records: [(entity: Int, entry: PagedEntry)]) throws(LogStoreError) {
        precondition(type == .keys && !records.isEmpty && records.count <= PagedBlock.maximumLeafEntries)
        var share = handle.encodedSize + ByteWriter.varintSize(UInt64(records.count))
        var shadowPrevious = previousEntry
        var shadowRun = runLength
        var openGroup = leaf.groups.last
        for record in records {
            let group = PagedGroup.entity(record.entity)
            let continues = openGroup.map { PagedGroup.order($0, group) == .orderedSame } ?? false
            if continues {
                share += PagedBlock.entrySize(record.entry, after: shadowPrevious, runLength: runWords ? shadowRun : nil)
                shadowRun = shadowPrevious.map { PagedBlock.goesOn(record.entry, from: $0) } == true ? shadowRun + 1 : 0
            } else {
                share += PagedBlock.groupHeadSize(group, count: 1) + 2 + PagedBlock.entrySize(record.entry, after: nil, runLength: 0)
                shadowRun = 0
            }
            openGroup = group
            shadowPrevious = record.entry
        }
        if !leaf.entries.isEmpty && (leafBytes + share > blockSize || leaf.entries.count + records.count > PagedBlock.maximumLeafEntries) {
            try closeLeaf()
            // The first group of a new leaf starts again: count it anew.
            return try append(dataBlock: handle, records: records)
        }
        leafBytes += share
        leaf.dataBlocks.append(PagedBlock.DataBlock(handle: handle, recordCount: records.count))
        for record in records { add(.entity(record.entity), record.entry) }
    }

    /// Closes every open block and returns the table's tree.
    mutating func finish() throws(LogStoreError) -> PagedTree {
        if !leaf.entries.isEmpty || branches.isEmpty { try closeLeaf() }
        var level = 0
        while true {
            if level == branches.count - 1 && branches[level].count == 1 {
                let top = branches[level][0]
                return PagedTree(type: type, run: run, table: table, height: level, entryCount: top.entryCount, top: top.handle)
            }
            try closeBranch(level)
            level += 1
        }
    }

    // MARK: - Filling blocks

    private func entrySize(_ group: PagedGroup, _ entry: PagedEntry) -> Int {
        if let open = leaf.groups.last, PagedGroup.order(open, group) == .orderedSame {
            return PagedBlock.entrySize(entry, after: previousEntry, runLength: runWords ? runLength : nil)
        }
        // A group's count may take more than one byte once it grows: two spare.
        return PagedBlock.groupHeadSize(group, count: 1) + 2 + PagedBlock.entrySize(entry, after: nil, runLength: 0)
    }

    private mutating func add(_ group: PagedGroup, _ entry: PagedEntry) {
        precondition(entry.key < RecordID.keyLimit, "a key at or past 2^62")
        if let last {
            let order = PagedGroup.order(last, (group, entry.key))
            precondition(order == .orderedAscending || (order == .orderedSame && entry.state == .olderVersion), "entries out of order")
        }
        let inOpenGroup: Bool
        if let open = leaf.groups.last, PagedGroup.order(open, group) == .orderedSame {
            leaf.groupEnds[leaf.groupEnds.count - 1] += 1
            inOpenGroup = true
        } else {
            leaf.groups.append(group)
            leaf.groupEnds.append(leaf.entries.count + 1)
            inOpenGroup = false
        }
        leaf.entries.append(entry)
        noteAdded(entry, inOpenGroup: inOpenGroup)
        last = (group, entry.key)
        entryCount += 1
    }

    /// Keeps `entry` as the one the next is sized after: a run goes on when
    /// it follows the open group's last entry by one key in its state.
    private mutating func noteAdded(_ entry: PagedEntry, inOpenGroup: Bool) {
        runLength = inOpenGroup && previousEntry.map { PagedBlock.goesOn(entry, from: $0) } == true ? runLength + 1 : 0
        previousEntry = entry
    }

    private mutating func closeLeaf() throws(LogStoreError) {
        let handle = try write(leaf)
        let first = leaf.first ?? (type == .values ? .value(.null, cut: false) : type == .keys ? .entity(0) : .target(0), 0)
        try addChild(PagedBlock.Child(group: first.group, key: first.key, entryCount: leaf.entryCount, handle: handle), at: 0)
        leaf = PagedBlock(run: run, table: table, level: 0)
        leafBytes = 0
        previousEntry = nil
        runLength = 0
    }

    private mutating func addChild(_ child: PagedBlock.Child, at level: Int) throws(LogStoreError) {
        if branches.count == level {
            branches.append([])
            branchBytes.append(0)
        }
        let size = PagedBlock.childSize(child)
        // A branch takes at least two children, so each level has fewer blocks.
        if branches[level].count >= 2 && branchBytes[level] + size > blockSize {
            try closeBranch(level)
        }
        branches[level].append(child)
        branchBytes[level] += size
    }

    private mutating func closeBranch(_ level: Int) throws(LogStoreError) {
        let children = branches[level]
        branches[level] = []
        branchBytes[level] = 0
        let block = PagedBlock(run: run, table: table, level: level + 1, children: children)
        let handle = try write(block)
        try addChild(PagedBlock.Child(group: children[0].group, key: children[0].key, entryCount: block.entryCount, handle: handle), at: level + 1)
    }
}
