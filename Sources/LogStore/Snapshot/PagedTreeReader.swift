// Finds entries in one paged table (FORMAT.md §13.5), reading blocks from
// the top down and checking each against what its parent says of it.

import Foundation

/// Reads one table of one run through `load`, which reads and decodes the
/// block a handle names (the frame checked against the handle) and may
/// cache it.
///
/// Every block is checked against its parent before it is used: its run,
/// table and level, its first entry, and how many entries it holds. A block
/// that disagrees is damage, reported with its offset; nothing it says is
/// used.
struct PagedTreeReader: Sendable {
    let tree: PagedTree
    /// The store's path, for messages.
    let path: String
    let load: @Sendable (FrameHandle) throws(LogStoreError) -> PagedBlock

    /// A position in the table, moving forward one entry at a time.
    struct Cursor: Sendable {
        fileprivate let reader: PagedTreeReader
        /// The branches from the top down, and which child each is in.
        fileprivate var path: [(block: PagedBlock, child: Int)] = []
        fileprivate var leaf: PagedBlock?
        /// Where the leaf is in the file.
        fileprivate var leafOffset: UInt64 = 0
        fileprivate var index = 0

        /// The entry at the cursor, and moves past it; nil past the last.
        mutating func next() throws(LogStoreError) -> (group: PagedGroup, entry: PagedEntry)? {
            while let leaf, index == leaf.entries.count {
                try advanceLeaf()
            }
            guard let leaf else { return nil }
            defer { index += 1 }
            return (leaf.groups[leaf.group(ofEntry: index)], leaf.entries[index])
        }

        /// The entry at the cursor and where it is: its leaf and position.
        mutating func peek() throws(LogStoreError) -> (leaf: PagedBlock, index: Int)? {
            while let leaf, index == leaf.entries.count {
                try advanceLeaf()
            }
            return leaf.map { ($0, index) }
        }

        /// The leaf at the cursor, whole, and moves to the next leaf's
        /// first entry; nil past the last.
        mutating func nextLeaf() throws(LogStoreError) -> PagedBlock? {
            guard let current = leaf else { return nil }
            index = current.entries.count
            try advanceLeaf()
            return current
        }

        /// Moves to the first entry of the next leaf, or past the end.
        ///
        /// The next leaf must go on where this one ended: its first entry
        /// after this one's last, or the same key's older version; and it
        /// must lie after this one in the file, as a writer appends leaves
        /// in order (FORMAT.md §13.5). Checking each step keeps a crafted
        /// tree whose branches share blocks from yielding entries twice, or
        /// a walk longer than the file.
        private mutating func advanceLeaf() throws(LogStoreError) {
            let previous = leaf.flatMap { $0.entries.isEmpty ? nil : ($0.groups[$0.groups.count - 1], $0.entries[$0.entries.count - 1].key) }
            let previousOffset = leafOffset
            leaf = nil
            index = 0
            while let (branch, popped) = path.popLast() {
                let child = popped + 1
                guard child < branch.children.count else { continue }
                path.append((branch, child))
                try descendFirst(from: branch.children[child], level: branch.level - 1)
                guard leafOffset > previousOffset else {
                    throw reader.damaged(leafOffset, "the tree leads back to it after the block at \(previousOffset), which it must follow in the file")
                }
                if let previous, let next = leaf, let first = next.first {
                    let order = PagedGroup.order(previous, first)
                    guard order == .orderedAscending || (order == .orderedSame && next.entries[0].state == .olderVersion) else {
                        throw reader.damaged(branch.children[child].handle.offset, "its entries do not follow those of the block before it")
                    }
                }
                return
            }
        }

        /// Descends from `child` to its leftmost leaf.
        fileprivate mutating func descendFirst(from child: PagedBlock.Child, level: Int) throws(LogStoreError) {
            var block = try reader.block(child.handle, level: level, expected: child)
            var offset = child.handle.offset
            while !block.isLeaf {
                path.append((block, 0))
                offset = block.children[0].handle.offset
                block = try reader.block(block.children[0].handle, level: block.level - 1, expected: block.children[0])
            }
            leaf = block
            leafOffset = offset
        }
    }

    /// A cursor at the first entry at or after (`group`, `key`).
    func seek(_ group: PagedGroup, key: UInt64) throws(LogStoreError) -> Cursor {
        var cursor = Cursor(reader: self)
        var block = try top()
        var offset = tree.top.offset
        let target = (group: group, key: key)
        while !block.isLeaf {
            // The last child starting before the target (the first if none):
            // a key's versions may run on from one block into the next, and
            // the newest is the first of them.
            var low = 0, high = block.children.count
            while low < high {
                let middle = (low + high) / 2
                let child = block.children[middle]
                if PagedGroup.order((child.group, child.key), target) == .orderedAscending { low = middle + 1 } else { high = middle }
            }
            let chosen = max(low - 1, 0)
            cursor.path.append((block, chosen))
            offset = block.children[chosen].handle.offset
            block = try self.block(block.children[chosen].handle, level: block.level - 1, expected: block.children[chosen])
        }
        var low = 0, high = block.entries.count
        while low < high {
            let middle = (low + high) / 2
            let here = (group: block.groups[block.group(ofEntry: middle)], key: block.entries[middle].key)
            if PagedGroup.order(here, target) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        cursor.leaf = block
        cursor.leafOffset = offset
        cursor.index = low
        return cursor
    }

    /// A cursor at the table's first entry.
    func first() throws(LogStoreError) -> Cursor {
        var cursor = Cursor(reader: self)
        let top = try top()
        if top.isLeaf {
            cursor.leaf = top
            cursor.leafOffset = tree.top.offset
        } else {
            cursor.path.append((top, 0))
            try cursor.descendFirst(from: top.children[0], level: top.level - 1)
        }
        return cursor
    }

    /// Where a key directory holds `key` of entity `entity`: the data block,
    /// the record's position in it, and the entry's state; nil when the run
    /// has no entry for it. Of several versions, the newest (the first).
    func locate(entity: Int, key: UInt64) throws(LogStoreError) -> (dataBlock: FrameHandle, record: Int, state: PagedEntry.State)? {
        precondition(tree.type == .keys)
        var cursor = try seek(.entity(entity), key: key)
        guard let (leaf, index) = try cursor.peek(), leaf.entries[index].key == key,
              case .entity(entity) = leaf.groups[leaf.group(ofEntry: index)] else { return nil }
        var before = 0
        for block in leaf.dataBlocks {
            if index < before + block.recordCount { return (block.handle, index - before, leaf.entries[index].state) }
            before += block.recordCount
        }
        // The leaf's record counts add up to its entries (checked when decoded).
        throw damaged(leaf.dataBlocks.last?.handle.offset ?? tree.top.offset, "its data blocks do not cover its entries")
    }

    /// The table's leaves as their parents list them, in order: every
    /// branch is read and checked, no leaf is. A table that is one leaf is
    /// read, as its own top.
    ///
    /// The leaves must lie one after another in the file and their first
    /// entries increase, as a writer appends them (FORMAT.md §13.5); a
    /// leaf is checked against its entry here when it is read (``leaf(_:)``).
    func leaves() throws(LogStoreError) -> [PagedBlock.Child] {
        let top = try top()
        if top.isLeaf {
            guard let first = top.first else { return [] }
            return [PagedBlock.Child(group: first.group, key: first.key, entryCount: top.entryCount, handle: tree.top)]
        }
        var children = top.children
        var level = top.level
        while true {
            // Each level's blocks lie one after another in the file, so no
            // crafted tree makes the walk longer than the file.
            for (earlier, later) in zip(children, children.dropFirst()) {
                guard later.handle.offset > earlier.handle.offset,
                      PagedGroup.order((earlier.group, earlier.key), (later.group, later.key)) == .orderedAscending else {
                    throw damaged(later.handle.offset, "it does not follow the block listed before it, in the file and in order")
                }
            }
            guard level > 1 else { break }
            var below: [PagedBlock.Child] = []
            for child in children { below += try block(child.handle, level: level - 1, expected: child).children }
            children = below
            level -= 1
        }
        for leaf in children where leaf.entryCount > UInt64(PagedBlock.entryLimit(byteCount: Int(leaf.handle.rawSize))) {
            throw damaged(leaf.handle.offset, "its parent says it holds \(leaf.entryCount) entries, more than a leaf of \(leaf.handle.rawSize) bytes may")
        }
        return children
    }

    /// The leaf `child` names (one of ``leaves()``), checked against it.
    func leaf(_ child: PagedBlock.Child) throws(LogStoreError) -> PagedBlock {
        try block(child.handle, level: 0, expected: child)
    }

    // MARK: - Checked blocks

    private func top() throws(LogStoreError) -> PagedBlock {
        let block = try load(tree.top)
        try check(block, at: tree.top, level: tree.height)
        guard block.entryCount == tree.entryCount else {
            throw damaged(tree.top.offset, "it holds \(block.entryCount) entries where the root lists \(tree.entryCount)")
        }
        return block
    }

    /// The block `handle` names, checked against its parent's `expected` entry.
    fileprivate func block(_ handle: FrameHandle, level: Int, expected: PagedBlock.Child) throws(LogStoreError) -> PagedBlock {
        let block = try load(handle)
        try check(block, at: handle, level: level)
        guard block.entryCount == expected.entryCount else {
            throw damaged(handle.offset, "it holds \(block.entryCount) entries where its parent lists \(expected.entryCount)")
        }
        guard let first = block.first, PagedGroup.order(first, (expected.group, expected.key)) == .orderedSame else {
            throw damaged(handle.offset, "its first entry is not the one its parent lists")
        }
        return block
    }

    private func check(_ block: PagedBlock, at handle: FrameHandle, level: Int) throws(LogStoreError) {
        guard block.run == tree.run, block.table == tree.table, block.level == level else {
            throw damaged(handle.offset, "it says run \(block.run), table \(block.table), level \(block.level) where run \(tree.run), table \(tree.table), level \(level) was expected")
        }
    }

    func damaged(_ offset: UInt64, _ reason: String) -> LogStoreError {
        Self.damage(path: path, run: tree.run, offset: offset, reason: reason)
    }

    /// The error for an index block that cannot be used.
    static func damage(path: String, run: UInt64, offset: UInt64, reason: String) -> LogStoreError {
        LogStoreError(.corruptSnapshot, "the index block at offset \(offset) of run \(run) in \(path) is damaged: \(reason). The records it leads to cannot be found through it; open the store read-write with recoveryMode .salvage, or run \"logstore-tool recover \(path) --output NEW\", to rebuild its tables from the records (\"logstore-tool verify \(path)\" lists every damaged block)", path: path, offset: offset)
    }
}
