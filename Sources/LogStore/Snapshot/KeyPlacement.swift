// What a key-directory leaf says, checked and placed: its data blocks, and
// where each of its keys lies in them. An open that reads the whole
// directory places every leaf in turn; a store that reads it a leaf at a
// time places a leaf when a lookup first needs it. Both go through here, so
// a leaf is checked the same way whichever reads it.

/// Checks key-directory leaves of one run and places their records.
struct KeyPlacement {
    let path: String
    let tree: PagedTree
    let run: SnapshotRoot.Run
    /// Per entity of the catalog, its name and next key.
    let entityNames: [String]
    let nextKeys: [UInt64]
    /// Tombstones are allowed, as skipped slots: a lazily read directory
    /// counts an entity's records from its leaves' entries, so it is only
    /// used for a run whose root says it holds none, and one found is damage.
    let allowsTombstones: Bool
    /// Where the data block placed last ends: each must start after it.
    var previousEnd: UInt64?

    private func damaged(_ offset: UInt64, _ reason: String) -> LogStoreError {
        PagedTreeReader.damage(path: path, run: tree.run, offset: offset, reason: reason)
    }

    /// Checks `leaf`, read at `offset`, against what its parent (or, for
    /// the top, the root) says of it: its run and table, its entry count,
    /// and its first entry, when the parent lists one.
    func check(_ leaf: KeyDirectoryLeaf, at offset: UInt64, entryCount: UInt64, first expected: (group: PagedGroup, key: UInt64)?) throws(LogStoreError) {
        guard leaf.run == tree.run, leaf.table == tree.table else {
            throw damaged(offset, "it says run \(leaf.run), table \(leaf.table), level 0 where run \(tree.run), table \(tree.table), level 0 was expected")
        }
        guard UInt64(leaf.entryCount) == entryCount else {
            throw damaged(offset, "it holds \(leaf.entryCount) entries where \(expected == nil ? "the root lists" : "its parent lists") \(entryCount)")
        }
        if let expected, let first = leaf.first, PagedGroup.order((.entity(first.entity), first.key), expected) != .orderedSame {
            throw damaged(offset, "its first entry is not the one its parent lists")
        }
    }

    /// Places `leaf`'s data blocks, numbered from `firstNumber`, and its
    /// entries: each block, checked, goes to `addBlock` once its records
    /// are placed, each run of present keys to `addKeys` with the block and
    /// slot of its first.
    mutating func place(_ leaf: KeyDirectoryLeaf, firstNumber: Int, addBlock: (SnapshotIndex.Block) -> Void,
                        addKeys: (_ entity: Int, _ firstKey: UInt64, _ count: Int, _ block: Int, _ firstSlot: Int) throws(LogStoreError) -> Void) throws(LogStoreError) {
        var position = 0, taken = 0
        for (blockPosition, dataBlock) in leaf.dataBlocks.enumerated() {
            // Within the run, each wholly after the one before (a block
            // listed twice would load its records twice), and at least
            // four raw bytes a record, the fewest a record takes.
            let handle = dataBlock.handle
            guard handle.offset >= run.extentStart, handle.offset <= run.extentEnd, handle.frameSize <= run.extentEnd - handle.offset,
                  previousEnd.map({ handle.offset >= $0 }) ?? true, dataBlock.recordCount <= Int(handle.rawSize) / 4 else {
                throw damaged(handle.offset, "its key directory places a data block outside the run, or over the block listed before it, or lists more records in it than its bytes can hold")
            }
            previousEnd = handle.offset + handle.frameSize
            let number = firstNumber + blockPosition
            var block = SnapshotIndex.Block(
                offset: handle.offset, storedSize: handle.storedSize, rawSize: handle.rawSize, checksum: handle.checksum,
                recordCount: dataBlock.recordCount, firstEntity: 0, firstKey: 0, lastEntity: 0, lastKey: 0)
            // The leaf's record counts add up to its entries (checked when
            // decoded), so its runs cover every slot.
            var slot = 0
            while slot < dataBlock.recordCount {
                let keys = leaf.runs[position]
                let count = min(keys.count - taken, dataBlock.recordCount - slot)
                let firstKey = keys.firstKey + UInt64(taken), lastKey = firstKey + UInt64(count - 1)
                guard keys.entity < nextKeys.count else {
                    throw damaged(handle.offset, "its key directory lists an entity the catalog lacks")
                }
                let nextKey = nextKeys[keys.entity]
                guard lastKey < nextKey else {
                    throw damaged(handle.offset, "its key directory lists \(entityNames[keys.entity])/\(max(firstKey, nextKey)), at or past the entity's next key")
                }
                if slot == 0 { (block.firstEntity, block.firstKey) = (keys.entity, firstKey) }
                (block.lastEntity, block.lastKey) = (keys.entity, lastKey)
                switch keys.state {
                case .present: try addKeys(keys.entity, firstKey, count, number, slot)
                case .tombstone where allowsTombstones: block.skipped.append(contentsOf: slot..<(slot + count))
                case .tombstone:
                    throw damaged(handle.offset, "its key directory lists a tombstone in a run whose root says it holds none")
                case .olderVersion:
                    throw damaged(handle.offset, "its table lists an older version of a record, which a run without history does not keep")
                }
                slot += count
                taken += count
                if taken == keys.count { (position, taken) = (position + 1, 0) }
            }
            addBlock(block)
        }
    }
}
