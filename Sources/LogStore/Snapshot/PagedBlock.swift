// One index block of a paged table (FORMAT.md §13.5): a leaf holding the
// table's entries in groups, or a branch holding its children's first
// entries, and their encoding.

/// One entry of a paged table: a record key and what the table says of it.
struct PagedEntry: Hashable, Sendable {
    enum State: UInt8, Sendable {
        /// The record is in the table within the run's range.
        case present = 0
        /// The record left the table within the run's range: it hides the
        /// same entry in older runs.
        case tombstone = 1
        /// An older version of the previous entry's key (kept history).
        case olderVersion = 2
    }

    var key: UInt64
    var state: State
}

/// A decoded index block of one table of one run.
///
/// A leaf (level 0) holds entries, grouped by what they are sorted under;
/// a key directory's leaf also lists the data blocks its entries are the
/// records of, in order. A branch holds one ``Child`` per block of the
/// level below.
struct PagedBlock: Sendable {
    /// A data block of a key-directory leaf, and how many records it holds.
    struct DataBlock: Hashable, Sendable {
        var handle: FrameHandle
        var recordCount: Int
    }

    /// A branch's entry for one block below: its first entry, how many
    /// entries it and the blocks under it hold, and where it is.
    struct Child: Sendable {
        var group: PagedGroup
        var key: UInt64
        var entryCount: UInt64
        var handle: FrameHandle
    }

    /// The run whose table this is (the frame's sequence field).
    var run: UInt64
    /// The table's position in its run.
    var table: Int
    /// 0 for a leaf; a branch is one above the blocks it lists.
    var level: Int
    var dataBlocks: [DataBlock] = []
    var groups: [PagedGroup] = []
    /// Where each group's entries end in ``entries``.
    var groupEnds: [Int] = []
    var entries: [PagedEntry] = []
    var children: [Child] = []

    /// An empty leaf (level 0), or a branch of `children`.
    init(run: UInt64, table: Int, level: Int, children: [Child] = []) {
        self.run = run
        self.table = table
        self.level = level
        self.children = children
    }

    var isLeaf: Bool { level == 0 }

    /// The entries this block and the blocks under it hold.
    var entryCount: UInt64 {
        isLeaf ? UInt64(entries.count) : children.reduce(0) { $0 + $1.entryCount }
    }

    /// Its first (group, key), nil for an empty leaf.
    var first: (group: PagedGroup, key: UInt64)? {
        if isLeaf { return entries.first.map { (groups[0], $0.key) } }
        return children.first.map { ($0.group, $0.key) }
    }

    /// The group of entry `index` of a leaf.
    func group(ofEntry index: Int) -> Int {
        var low = 0, high = groupEnds.count - 1
        while low < high {
            let middle = (low + high) / 2
            if groupEnds[middle] > index { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The most a state and key step can take: states fit in two bits, and
    /// keys stay below 2⁶², so a step shifted left by two fits in 64 bits.
    private static let stateBits: UInt64 = 2

    // MARK: - Encoding

    /// Its payload (FORMAT.md §13.5) in a table of `type`; without
    /// `runWords`, as version 5 wrote it, every entry by itself.
    func encoded(as type: PagedTableType, runWords: Bool = true) -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        writer.appendVarint(run)
        writer.appendVarint(UInt64(table))
        writer.appendVarint(UInt64(level))
        if isLeaf {
            if type == .keys {
                writer.appendVarint(UInt64(dataBlocks.count))
                for block in dataBlocks {
                    writer.append(block.handle)
                    writer.appendVarint(UInt64(block.recordCount))
                }
            }
            writer.appendVarint(UInt64(groups.count))
            var start = 0
            for (group, end) in zip(groups, groupEnds) {
                Self.appendGroupHead(group, count: end - start, into: &writer)
                Self.appendEntries(entries[start..<end], runWords: runWords, into: &writer)
                start = end
            }
        } else {
            writer.appendVarint(UInt64(children.count))
            for child in children {
                Self.appendFirst(child.group, key: child.key, into: &writer)
                writer.appendVarint(child.entryCount)
                writer.append(child.handle)
            }
        }
        return writer.bytes
    }

    /// The bytes a group's head takes in a leaf (for filling blocks).
    static func groupHeadSize(_ group: PagedGroup, count: Int) -> Int {
        var writer = ByteWriter(capacity: 16)
        appendGroupHead(group, count: count, into: &writer)
        return writer.count
    }

    /// The bytes a child's entry takes in a branch.
    static func childSize(_ child: Child) -> Int {
        var writer = ByteWriter(capacity: 16)
        appendFirst(child.group, key: child.key, into: &writer)
        return writer.count + ByteWriter.varintSize(child.entryCount) + child.handle.encodedSize
    }

    /// The bytes an entry takes after `previous` in its group (nil: first),
    /// at most: `runLength` is how many entries before it went on from
    /// the one before them (``goesOn(_:from:)``), nil when runs are not
    /// written (version 5). An entry that starts a run is counted as the
    /// run's whole word, one that lengthens it as nothing.
    static func entrySize(_ entry: PagedEntry, after previous: PagedEntry?, runLength: Int?) -> Int {
        guard let previous else { return ByteWriter.varintSize(entry.key << stateBits) }
        if let runLength, goesOn(entry, from: previous) { return runLength == 0 ? runWordSize : 0 }
        return ByteWriter.varintSize((entry.key - previous.key) << stateBits)
    }

    /// Whether `entry` goes on from `previous` in a run (FORMAT.md §13.5):
    /// the next key, in the same state, neither an older version.
    @inline(__always)
    static func goesOn(_ entry: PagedEntry, from previous: PagedEntry) -> Bool {
        entry.state == previous.state && entry.state != .olderVersion && entry.key == previous.key &+ 1
    }

    /// The most entries a version 6 writer puts in a leaf (FORMAT.md
    /// §13.5): a run takes one word for any number of entries, so a leaf's
    /// bytes no longer bound them, and a whole leaf is decoded into one
    /// entry each.
    static let maximumLeafEntries = 1 << 18

    /// The most entries a leaf of `byteCount` raw bytes may hold: 2¹⁸, or
    /// one a byte where that is more, as a version 5 leaf of a large data
    /// block's records may be (that version's bound).
    static func entryLimit(byteCount: Int) -> Int { max(maximumLeafEntries, byteCount) }
    /// The bytes of a run's word at most: `count << 2 | 3` for a count up
    /// to ``maximumLeafEntries``.
    private static let runWordSize = ByteWriter.varintSize(UInt64(maximumLeafEntries) << stateBits | 3)
    /// The state bits of a run's word.
    private static let runMark: UInt64 = 3

    /// Appends a group's entries: the first as its key, each other as its
    /// step from the one before, except that two or more entries going on
    /// from the one before them are one run word.
    private static func appendEntries(_ entries: ArraySlice<PagedEntry>, runWords: Bool, into writer: inout ByteWriter) {
        var previous: PagedEntry?
        var run = 0
        func flushRun() {
            if run == 1 {
                writer.appendVarint(1 << stateBits | UInt64(previous!.state.rawValue))
            } else if run > 1 {
                writer.appendVarint(UInt64(run) << stateBits | runMark)
            }
            run = 0
        }
        for entry in entries {
            if runWords, let last = previous, goesOn(entry, from: last) {
                run += 1
            } else {
                flushRun()
                let step = previous.map { entry.key - $0.key } ?? entry.key
                writer.appendVarint(step << stateBits | UInt64(entry.state.rawValue))
            }
            previous = entry
        }
        flushRun()
    }

    private static func appendGroupHead(_ group: PagedGroup, count: Int, into writer: inout ByteWriter) {
        switch group {
        case .entity(let entity):
            writer.appendVarint(UInt64(entity))
            writer.appendVarint(UInt64(count))
        case .value(let value, let cut):
            writer.append(value)
            writer.appendVarint(UInt64(count) << 1 | (cut ? 1 : 0))
        case .target(let target):
            writer.appendVarint(target)
            writer.appendVarint(UInt64(count))
        }
    }

    private static func appendFirst(_ group: PagedGroup, key: UInt64, into writer: inout ByteWriter) {
        switch group {
        case .entity(let entity):
            writer.appendVarint(UInt64(entity))
            writer.appendVarint(key)
        case .value(let value, let cut):
            writer.append(value)
            writer.appendVarint(key << 1 | (cut ? 1 : 0))
        case .target(let target):
            writer.appendVarint(target)
            writer.appendVarint(key)
        }
    }

    // MARK: - Decoding

    /// Decodes a block of a table of `type`, checking everything the bytes
    /// alone can show: the encoding, keys below 2⁶², entries and groups in
    /// the table's order, data blocks' record counts adding up to the
    /// entries, and nothing after the body. That it is the block its parent
    /// expects is the reader's to check (``PagedTreeReader``).
    init(decoding raw: UnsafeRawBufferPointer, as type: PagedTableType) throws(DecodeFailure) {
        var reader = ByteReader(raw)
        (run, table, level) = try Self.readHead(&reader)
        if level == 0 {
            var dataBlocks: [DataBlock] = [], groups: [PagedGroup] = [], groupEnds: [Int] = [], entries: [PagedEntry] = []
            try Self.readLeafBody(
                &reader, type, dataBlock: { dataBlocks.append($0) },
                group: { group, count in
                    groups.append(group)
                    groupEnds.append(entries.count + count)
                },
                entries: { first, count, state in
                    for step in 0..<UInt64(count) { entries.append(PagedEntry(key: first + step, state: state)) }
                })
            (self.dataBlocks, self.groups, self.groupEnds, self.entries) = (dataBlocks, groups, groupEnds, entries)
        } else {
            try decodeBranch(&reader, type)
        }
        guard reader.isAtEnd else { throw DecodeFailure("\(reader.remaining) bytes follow its body") }
    }

    /// Reads an index block's run, table and level.
    static func readHead(_ reader: inout ByteReader) throws(DecodeFailure) -> (run: UInt64, table: Int, level: Int) {
        let run = try reader.readVarint()
        guard let table = Int(exactly: try reader.readVarint()), let level = Int(exactly: try reader.readVarint()), level <= PagedTree.maximumHeight else {
            throw DecodeFailure("its table or level is out of range")
        }
        return (run, table, level)
    }

    /// Reads a leaf's body of a table of `type`, handing over its data
    /// blocks (a key directory's), then each group before its entries, then
    /// its entries as runs: keys `first ..< first + count` in one state.
    /// It is the one reading of a leaf, with every check its bytes alone
    /// allow (groups increasing, keys increasing within a group and below
    /// 2⁶², counts within the bytes, record counts adding up to the
    /// entries). A whole leaf (``init(decoding:as:)``) and a key directory
    /// read as runs (``KeyDirectoryLeaf``) are both built through it.
    ///
    /// A run is as long as the entries go on by one key in a state other
    /// than an older version. A version 6 writer writes two or more such
    /// entries as one run word, `count << 2 | 3`; a version 5 writer wrote
    /// each as the one byte `1 << 2 | state`, read by skipping those bytes.
    /// The keys a store hands out are dense, so a key directory's leaf is
    /// mostly runs. A run word makes a leaf's bytes no bound on its
    /// entries: ``entryLimit(byteCount:)`` is.
    @inline(__always)
    static func readLeafBody(_ reader: inout ByteReader, _ type: PagedTableType, dataBlock: (DataBlock) -> Void,
                             group: (PagedGroup, _ count: Int) -> Void,
                             entries: (_ first: UInt64, _ count: Int, _ state: PagedEntry.State) -> Void) throws(DecodeFailure) {
        var recordTotal = 0
        let limit = entryLimit(byteCount: reader.remaining)
        if type == .keys {
            let count = try reader.readCount(minimumItemSize: FrameHandle.minimumEncodedSize + 1)
            for _ in 0..<count {
                let handle = try reader.readHandle()
                guard let records = Int(exactly: try reader.readVarint()), records >= 1, records <= limit - recordTotal else {
                    throw DecodeFailure("a data block's record count is 0, or takes the leaf past \(limit) entries")
                }
                recordTotal += records
                dataBlock(DataBlock(handle: handle, recordCount: records))
            }
        }
        let groupCount = try reader.readCount(minimumItemSize: 2)
        var lastGroup: PagedGroup?
        var entryTotal = 0
        for _ in 0..<groupCount {
            let (head, count) = try readGroupHead(&reader, type)
            if let lastGroup, PagedGroup.order(lastGroup, head) != .orderedAscending {
                throw DecodeFailure("its groups are not in increasing order")
            }
            guard count >= 1, count <= limit - entryTotal else {
                throw DecodeFailure("a group declares \(count) entries: none, or more than the leaf may hold (\(limit))")
            }
            group(head, count)
            var run = try entry(reader.readVarint(), after: nil, before: reader.position)
            var runCount = 1, left = count - 1
            while true {
                if run.state != .olderVersion {
                    let next = UInt8(truncatingIfNeeded: 1 << stateBits | UInt64(run.state.rawValue))
                    let more = reader.skipRepeating(next, limit: left)
                    guard run.key + UInt64(runCount + more - 1) < RecordID.keyLimit else {
                        throw DecodeFailure("a key before byte \(reader.position) is not below 2^62")
                    }
                    runCount += more
                    left -= more
                }
                guard left > 0 else { break }
                let word = try reader.readVarint()
                if word & runMark == runMark {
                    // A run word: that many more entries go on from the last.
                    let more = word >> stateBits
                    guard run.state != .olderVersion, more >= 1, more <= UInt64(left) else {
                        throw DecodeFailure("a run before byte \(reader.position) is empty, passes its group's count, or follows an older version")
                    }
                    guard run.key + UInt64(runCount) + more - 1 < RecordID.keyLimit else {
                        throw DecodeFailure("a key before byte \(reader.position) is not below 2^62")
                    }
                    runCount += Int(more)
                    left -= Int(more)
                    continue
                }
                let entry = try entry(word, after: run.key + UInt64(runCount - 1), before: reader.position)
                left -= 1
                // A step of one in the same state written in more bytes than
                // it needs still goes on with the run.
                if entry.state == run.state, entry.state != .olderVersion, entry.key == run.key + UInt64(runCount) {
                    runCount += 1
                } else {
                    entries(run.key, runCount, run.state)
                    (run, runCount) = (entry, 1)
                }
            }
            entries(run.key, runCount, run.state)
            lastGroup = head
            entryTotal += count
        }
        guard type != .keys || recordTotal == entryTotal else {
            throw DecodeFailure("its data blocks hold \(recordTotal) records but it lists \(entryTotal) entries")
        }
    }

    /// The entry an entry's `word` gives after the `previous` key of its
    /// group (nil: its first), read before byte `position`; not a run word.
    @inline(__always)
    private static func entry(_ word: UInt64, after previous: UInt64?, before position: Int) throws(DecodeFailure) -> PagedEntry {
        let step = word >> stateBits
        guard let state = PagedEntry.State(rawValue: UInt8(word & 3)) else {
            throw DecodeFailure("a group's first entry before byte \(position) is a run, which must follow an entry")
        }
        guard let previous else {
            guard step < RecordID.keyLimit else { throw DecodeFailure("a key before byte \(position) is not below 2^62") }
            return PagedEntry(key: step, state: state)
        }
        // An older version repeats the key before it; anything else follows it.
        guard (state == .olderVersion) == (step == 0) else {
            throw DecodeFailure("an entry before byte \(position) does not follow the one before it in order")
        }
        let (key, overflow) = previous.addingReportingOverflow(step)
        guard !overflow, key < RecordID.keyLimit else { throw DecodeFailure("a key before byte \(position) is not below 2^62") }
        return PagedEntry(key: key, state: state)
    }

    private static func readGroupHead(_ reader: inout ByteReader, _ type: PagedTableType) throws(DecodeFailure) -> (PagedGroup, Int) {
        switch type {
        case .keys:
            guard let entity = Int(exactly: try reader.readVarint()), let count = Int(exactly: try reader.readVarint()) else {
                throw DecodeFailure("a group's entity or count is out of range")
            }
            return (.entity(entity), count)
        case .values:
            let value = try reader.readValue()
            let countAndCut = try reader.readVarint()
            let cut = countAndCut & 1 == 1
            guard PagedGroup.isValidIndexedValue(value, cut: cut), let count = Int(exactly: countAndCut >> 1) else {
                throw DecodeFailure("a group's value before byte \(reader.position) is not one an index holds")
            }
            return (.value(value, cut: cut), count)
        case .targets:
            let target = try reader.readKey()
            guard let count = Int(exactly: try reader.readVarint()) else { throw DecodeFailure("a group's count is out of range") }
            return (.target(target), count)
        }
    }

    private mutating func decodeBranch(_ reader: inout ByteReader, _ type: PagedTableType) throws(DecodeFailure) {
        // Each child takes at least its group and key (2), count (1) and handle.
        let count = try reader.readCount(minimumItemSize: 3 + FrameHandle.minimumEncodedSize)
        guard count >= 1 else { throw DecodeFailure("it is a branch without children") }
        children.reserveCapacity(count)
        var total: UInt64 = 0
        for _ in 0..<count {
            let (group, key) = try Self.readFirst(&reader, type)
            let entryCount = try reader.readVarint()
            let handle = try reader.readHandle()
            let (sum, overflow) = total.addingReportingOverflow(entryCount)
            guard entryCount >= 1, !overflow else { throw DecodeFailure("a child's entry count is 0 or too large") }
            total = sum
            // Equal firsts are children holding versions of one key.
            if let last = children.last, PagedGroup.order((last.group, last.key), (group, key)) == .orderedDescending {
                throw DecodeFailure("its children are not in increasing order")
            }
            children.append(Child(group: group, key: key, entryCount: entryCount, handle: handle))
        }
    }

    private static func readFirst(_ reader: inout ByteReader, _ type: PagedTableType) throws(DecodeFailure) -> (PagedGroup, UInt64) {
        switch type {
        case .keys:
            guard let entity = Int(exactly: try reader.readVarint()) else { throw DecodeFailure("a child's entity is out of range") }
            return (.entity(entity), try reader.readKey())
        case .values:
            let value = try reader.readValue()
            let keyAndCut = try reader.readVarint()
            let cut = keyAndCut & 1 == 1
            guard PagedGroup.isValidIndexedValue(value, cut: cut), keyAndCut >> 1 < RecordID.keyLimit else {
                throw DecodeFailure("a child's first value or key before byte \(reader.position) is not one an index holds")
            }
            return (.value(value, cut: cut), keyAndCut >> 1)
        case .targets:
            return (.target(try reader.readKey()), try reader.readKey())
        }
    }
}
