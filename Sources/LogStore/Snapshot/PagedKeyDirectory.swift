// A paged snapshot's key directory read a leaf at a time (FORMAT.md §13.6):
// open reads its branches, and the leaves where one entity's records end,
// for each entity's count and key range; a lookup reads the one leaf that
// holds its key, through the block cache.

/// The key directory of a paged snapshot whose leaves are read on demand.
///
/// A data block is named by the leaf that lists it and its position there,
/// packed into one number (``number(leaf:position:)``), so that the blocks
/// a store reads are cached and reported as the eagerly read directory's
/// are, without a directory of every block in memory. A class: a lookup
/// passes it along, and its arrays are not retained one by one.
final class PagedKeyDirectory: Sendable {
    /// The leaves, in order, as their parents list them: the first entry's
    /// entity and key, the entry count and the handle.
    let leaves: [PagedBlock.Child]
    /// Each leaf's first entry, as plain numbers for a lookup's search.
    private let firstEntries: [(entity: Int, key: UInt64)]
    /// The checks and placement of each leaf read.
    let placement: KeyPlacement

    /// The bits of a block number that give its position in its leaf: a
    /// leaf lists at most ``PagedBlock/maximumLeafEntries`` records, so no
    /// more data blocks.
    static let positionBits = 18

    /// The number of the data block at `position` of leaf `leaf`.
    static func number(leaf: Int, position: Int) -> Int { leaf << positionBits | position }

    /// The leaf and position a block number names.
    static func leafAndPosition(of number: Int) -> (leaf: Int, position: Int) {
        (number >> positionBits, number & (1 << positionBits - 1))
    }

    /// The directory of `run` whose leaves `leaves` lists (read from its
    /// branches), for a run without tombstones.
    ///
    /// - Throws: `.corruptSnapshot` when the leaves' first entries do not
    ///   increase, or name an entity the catalog lacks.
    init(leaves: [PagedBlock.Child], tree: PagedTree, run: SnapshotRoot.Run, entityNames: [String], nextKeys: [UInt64], path: String) throws(LogStoreError) {
        placement = KeyPlacement(path: path, tree: tree, run: run, entityNames: entityNames, nextKeys: nextKeys, allowsTombstones: false)
        for (position, leaf) in leaves.enumerated() {
            guard case .entity(let entity) = leaf.group, entity < entityNames.count,
                  position == 0 || PagedGroup.order((leaves[position - 1].group, leaves[position - 1].key), (leaf.group, leaf.key)) == .orderedAscending else {
                throw PagedTreeReader.damage(path: path, run: tree.run, offset: leaf.handle.offset, reason: "its parent lists it as starting with an entry of an entity the catalog lacks, or not after the leaf before it")
            }
        }
        self.leaves = leaves
        firstEntries = leaves.map { leaf in
            guard case .entity(let entity) = leaf.group else { return (0, leaf.key) }
            return (entity, leaf.key)
        }
    }

    /// The last leaf within `range` whose first entry is not after
    /// (`entity`, `key`); the range's first when none is.
    func leaf(holding key: UInt64, of entity: Int, within range: Range<Int>) -> Int {
        firstEntries.withUnsafeBufferPointer { firsts in
            var low = range.lowerBound + 1, high = range.upperBound
            while low < high {
                let middle = (low + high) >> 1
                let first = firsts[middle]
                if first.entity < entity || (first.entity == entity && first.key <= key) { low = middle + 1 } else { high = middle }
            }
            return low - 1
        }
    }

    /// The entity of leaf `number`'s first entry (checked at init).
    func firstEntity(ofLeaf number: Int) -> Int { firstEntries[number].entity }

    /// Whether leaf `number` may hold entries of more than one entity, or
    /// the last of one: the last leaf, and each whose next leaf starts with
    /// another entity. Every other leaf holds its first entity's only.
    func isBoundary(_ number: Int) -> Bool {
        number == leaves.count - 1 || firstEntity(ofLeaf: number + 1) != firstEntity(ofLeaf: number)
    }

    /// Whether open reads leaf `number`: a boundary leaf, and the first of
    /// each entity's leaves, so that each entity's first and last keys come
    /// from leaves checked against their parents, not from a parent alone.
    func isReadAtOpen(_ number: Int) -> Bool {
        isBoundary(number) || number == 0 || firstEntity(ofLeaf: number - 1) != firstEntity(ofLeaf: number)
    }

    /// Reads leaf `number` with `reader` and places it: checked against its
    /// parent's entry and against the next leaf's first entry, which its
    /// entries must stay before.
    func page(_ number: Int, reader: PagedSnapshotReader) throws(LogStoreError) -> KeyDirectoryPage {
        let child = leaves[number]
        let leaf = try reader.keyLeaf(child.handle, of: placement.run)
        try placement.check(leaf, at: child.handle.offset, entryCount: child.entryCount, first: (child.group, child.key))
        if number + 1 < leaves.count, let last = leaf.last {
            let next = leaves[number + 1]
            guard PagedGroup.order((.entity(last.entity), last.key), (next.group, next.key)) == .orderedAscending else {
                throw PagedTreeReader.damage(path: placement.path, run: placement.tree.run, offset: child.handle.offset, reason: "its entries run past the first entry of the leaf after it")
            }
        }
        // A leaf of more data blocks than a number holds positions for
        // (only a leaf larger than any writer writes can list them).
        guard leaf.dataBlocks.count <= 1 << Self.positionBits else {
            throw PagedTreeReader.damage(path: placement.path, run: placement.tree.run, offset: child.handle.offset, reason: "it lists \(leaf.dataBlocks.count) data blocks, more than a leaf of this version can (\(1 << Self.positionBits))")
        }
        var placing = placement
        var blocks: [SnapshotIndex.Block] = []
        blocks.reserveCapacity(leaf.dataBlocks.count)
        var entities: [Int] = [], located: [LocatedKeys] = []
        try placing.place(leaf, firstNumber: 0, addBlock: { blocks.append($0) }) { (entity, firstKey, count, block, firstSlot) throws(LogStoreError) in
            if entities.last != entity {
                entities.append(entity)
                located.append(LocatedKeys())
            }
            // Keys increase within the leaf (checked as it was decoded), and
            // its entities follow one another, so each is appended once.
            guard located[located.count - 1].append(run: firstKey, count: count, block: block, firstSlot: firstSlot) else {
                throw PagedTreeReader.damage(path: placement.path, run: placement.tree.run, offset: child.handle.offset, reason: "its key directory lists \(placement.entityNames[entity])/\(firstKey) out of key order")
            }
        }
        return KeyDirectoryPage(blocks: blocks, entities: entities, located: located)
    }
}

/// One key-directory leaf, placed: its data blocks, and where each of its
/// entities' keys lies in them (blocks numbered by their position here).
final class KeyDirectoryPage: CachedBlock {
    let blocks: [SnapshotIndex.Block]
    /// The entities the leaf holds records of, in order, and their keys.
    let entities: [Int]
    let located: [LocatedKeys]
    let byteCount: Int

    init(blocks: [SnapshotIndex.Block], entities: [Int], located: [LocatedKeys]) {
        self.blocks = blocks
        self.entities = entities
        self.located = located.map { var keys = $0; keys.trim(); return keys }
        byteCount = blocks.count * MemoryLayout<SnapshotIndex.Block>.stride + self.located.reduce(0) { $0 + $1.byteCount } + 64
    }

    /// The keys of `entity` the leaf holds; nil when it holds none.
    func keys(of entity: Int) -> LocatedKeys? {
        entities.firstIndex(of: entity).map { located[$0] }
    }

    /// Whether the leaf's last entry comes before `entity`'s `key`.
    func isBefore(_ entity: Int, _ key: UInt64) -> Bool {
        guard let lastEntity = entities.last, let last = located.last?.lastKey else { return true }
        return lastEntity < entity || (lastEntity == entity && last < key)
    }

    /// The block (its position here) and slot of `entity`'s `key`, or nil
    /// when the leaf does not hold it: read in place, as a lookup does.
    @inline(__always)
    func locate(_ key: UInt64, of entity: Int) -> (block: Int, slot: Int)? {
        // Most leaves hold one entity's keys.
        if entities.count == 1 { return entities[0] == entity ? located[0].locate(key) : nil }
        guard let position = entities.firstIndex(of: entity) else { return nil }
        return located[position].locate(key)
    }
}

/// One entity's records in a paged snapshot whose key directory is read a
/// leaf at a time: which leaves hold them, how many there are (the entries
/// of those leaves, a run without tombstones holding only live records),
/// and the first and last key.
struct PagedEntityKeys: Sendable, Equatable {
    let entity: Int
    let leaves: Range<Int>
    let count: Int
    let firstKey: UInt64
    let lastKey: UInt64

    /// Each entity's records in `directory`: the counts of the leaves that
    /// hold one entity's entries only from their parents, the others' from
    /// the leaf, read by `page`.
    static func all(in directory: PagedKeyDirectory, entityCount: Int, page: (Int) throws(LogStoreError) -> KeyDirectoryPage) throws(LogStoreError) -> [PagedEntityKeys] {
        var found: [(leaves: Range<Int>, count: Int, firstKey: UInt64, lastKey: UInt64)?] = Array(repeating: nil, count: entityCount)
        func add(_ entity: Int, leaf: Int, count: Int, firstKey: UInt64, lastKey: UInt64) {
            guard count > 0 else { return }
            if let known = found[entity] {
                found[entity] = (known.leaves.lowerBound..<(leaf + 1), known.count + count, known.firstKey, lastKey)
            } else {
                found[entity] = (leaf..<(leaf + 1), count, firstKey, lastKey)
            }
        }
        for number in directory.leaves.indices {
            let child = directory.leaves[number]
            if directory.isReadAtOpen(number) {
                let leaf = try page(number)
                for (entity, keys) in zip(leaf.entities, leaf.located) {
                    var first: UInt64?, last: UInt64 = 0
                    keys.forEachRun { _, _, run in
                        if first == nil { first = run[0] }
                        last = run[run.count - 1]
                    }
                    if let first { add(entity, leaf: number, count: keys.count, firstKey: first, lastKey: last) }
                }
            } else {
                // Its next leaf starts with the same entity, so every entry
                // is its first entity's; the last key is a boundary leaf's.
                add(directory.firstEntity(ofLeaf: number), leaf: number, count: Int(clamping: child.entryCount), firstKey: child.key, lastKey: child.key)
            }
        }
        return found.enumerated().map { entity, found in
            guard let found else { return PagedEntityKeys(entity: entity, leaves: 0..<0, count: 0, firstKey: 1, lastKey: 0) }
            return PagedEntityKeys(entity: entity, leaves: found.leaves, count: found.count, firstKey: found.firstKey, lastKey: found.lastKey)
        }
    }

    /// Whether `key` lies within the entity's keys, reading no leaf: a key
    /// outside them is absent.
    func mayHold(_ key: UInt64) -> Bool { count > 0 && key >= firstKey && key <= lastKey }

    /// Where `key` is in `snapshot`: in which block (numbered as
    /// ``PagedKeyDirectory`` numbers them) and slot, or not there, or in a
    /// leaf that cannot be read (the failure kept by the snapshot).
    func locate(_ key: UInt64, in snapshot: SnapshotFile) -> SnapshotKeys.Placement {
        guard mayHold(key), let directory = snapshot.keyDirectory else { return .absent }
        // The first leaf of the range may start with another entity's
        // entries, then this one's.
        let number = directory.leaf(holding: key, of: entity, within: leaves)
        guard let leaf = snapshot.keyPage(number) else { return .unreadable }
        guard let (position, slot) = leaf.locate(key, of: entity) else {
            // Past the leaf's last entry, before the next leaf's first as its
            // parent gives it: absent only if the next leaf, read and checked
            // against that entry, does start there.
            if number + 1 < leaves.upperBound, leaf.isBefore(entity, key), snapshot.keyPage(number + 1) == nil { return .unreadable }
            return .absent
        }
        return .at(block: PagedKeyDirectory.number(leaf: number, position: position), slot: slot)
    }

    /// Calls `body` with each run of keys in consecutive slots of one
    /// block of `snapshot`, in key order; a leaf that cannot be read is
    /// skipped (its failure kept by the snapshot, for the caller to check).
    func forEachRun(in snapshot: SnapshotFile, _ body: (_ block: Int, _ firstSlot: Int, _ keys: LocatedKeys.Run) -> Void) {
        for number in leaves {
            guard let keys = snapshot.keyPage(number)?.keys(of: entity) else { continue }
            keys.forEachRun { position, firstSlot, run in
                body(PagedKeyDirectory.number(leaf: number, position: position), firstSlot, run)
            }
        }
    }
}
