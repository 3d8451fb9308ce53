// Opens a paged snapshot (FORMAT.md §13): the root and catalog, then each
// table walked down from its top block into the state the store keeps.

import Foundation
import Synchronization

extension SnapshotFile {
    /// Opens the paged snapshot whose base root is at `rootOffset` of
    /// `journalFile`, checking the root, the catalog and each index block
    /// it reads against its parent; with `checkingDataBlocks`, also every
    /// frame of the run against its checksum, in one sequential read.
    ///
    /// Without it, a data block is checked when it is first read, against
    /// its handle, its checksum and the key directory (``readBlock(_:)``),
    /// as FORMAT.md §13.6 has it: open reads index blocks only, and a read
    /// that needs a damaged block throws (FetchExecution, and
    /// ``Store/lookup(_:)``). A salvage, a recover and a compaction's
    /// read-back check every frame.
    ///
    /// The store's state is built from it as from an index frame: the key
    /// directory gives where each live record is, the target tables the
    /// pointers. Without `checkingDataBlocks`, and when the run holds no
    /// tombstones, the key directory is read a leaf at a time
    /// (``PagedKeyDirectory``): open reads its branches and the leaves
    /// where an entity's records end, for each entity's count and key
    /// range. Otherwise every leaf is read now, into the block directory.
    /// Of the secondary indexes, one whose attribute's values are never
    /// cut, as the snapshot's recorded model types it, is read a leaf at a
    /// time from then on: open reads its branches
    /// (``SnapshotFile/storedIndexes``). The others are read whole, unless
    /// `readingWholeIndexes` is false.
    ///
    /// - Returns: the snapshot, and what it holds as an index, the indexes
    ///   read a leaf at a time left out.
    /// - Throws: `.corruptSnapshot` naming the frame that is damaged; `.io`
    ///   when reading fails.
    static func openPaged(_ journalFile: any FileIO, rootOffset: UInt64, fileSize: UInt64, cacheCapacity: Int, checkingDataBlocks: Bool, readingWholeIndexes: Bool = true) throws(LogStoreError) -> (SnapshotFile, SnapshotIndex) {
        var extent = try readPaged(in: journalFile, rootOffset: rootOffset, fileSize: fileSize, checkingFrames: checkingDataBlocks, opening: true)
        let reader = PagedSnapshotReader(file: journalFile, rootOffset: rootOffset, fileSize: fileSize)
        let recorded = try? StoredSchema.decode(Data(extent.index.schema), path: journalFile.path)
        var paged: [StoredIndexTable] = []
        for var stored in extent.deferredIndexes {
            let entity = extent.index.entities[stored.entity].name
            let type = recorded?.entities.first { $0.name == entity }?.attributes.first { $0.name == stored.attribute }?.type
            let tableReader = reader.tableReader(stored.tree, run: stored.run)
            if let type, !PagedGroup.mayCut(storedType: type) {
                stored.leaves = try PagedIndexTable.leaves(of: tableReader)
                paged.append(stored)
            } else if readingWholeIndexes, let whole = try reader.readValues(tableReader, entity: stored.entity, attribute: stored.attribute) {
                extent.index.indexes.append(whole)
            }
        }
        let file = try journalFile.reopenForReading()
        let snapshot = SnapshotFile(index: extent.index, tailStart: extent.tailStart, file: file, cacheCapacity: cacheCapacity,
                                    storedIndexes: paged, rootOffset: rootOffset, keyDirectory: extent.keyDirectory, dataBytes: extent.dataBytes)
        if extent.keyDirectory != nil {
            for keys in try snapshot.pagedEntityKeys() { extent.index.entities[keys.entity].inSnapshot = .paged(keys) }
        }
        return (snapshot, extent.index)
    }

    /// Reads a paged snapshot's root at `rootOffset`, its catalog and its
    /// tables into an index; with `checkingFrames`, also checks every frame
    /// of its run, data blocks included, in one sequential read.
    /// With `keysOnly`, reads the key directory and no other table: what a
    /// salvage needs, which rebuilds the others from the records. With
    /// `opening`, reads what a store's open needs: the secondary indexes'
    /// tables listed in the extent's `deferredIndexes` rather than read, and
    /// each entity's keys located (``SnapshotIndex/Entity/inSnapshot``)
    /// rather than listed; or, when no frame is checked and the run holds no
    /// tombstones, the key directory's leaves listed in the extent's
    /// `keyDirectory`, to be read a leaf at a time (FORMAT.md §13.6).
    static func readPaged(in file: any FileIO, rootOffset: UInt64, fileSize: UInt64, checkingFrames: Bool, keysOnly: Bool = false, opening: Bool = false) throws(LogStoreError) -> SnapshotExtent {
        let reader = PagedSnapshotReader(file: file, rootOffset: rootOffset, fileSize: fileSize)
        let (root, rootFrame) = try reader.readRoot()
        let rootEnd = rootOffset + rootFrame.frameSize
        let catalog = try reader.readCatalog(root.catalog, root: root)
        var deferred: [StoredIndexTable] = []
        var keyDirectory: PagedKeyDirectory?
        let pagingKeys = opening && !checkingFrames && root.runs[0].tombstoneCount == 0
        var index = try reader.index(root: root, catalog: catalog, keysOnly: keysOnly, deferring: opening ? { deferred.append($0) } : nil,
                                     pagingKeys: pagingKeys ? { keyDirectory = $0 } : nil)
        index.isPaged = true
        if checkingFrames { try reader.checkFrames(of: root.runs[0], directory: index.blocks) }
        let tally = reader.tally
        return SnapshotExtent(
            index: index, deferredIndexes: deferred, keyDirectory: keyDirectory, dataBytes: min(root.runs[0].dataBytes, root.runs[0].extentEnd - root.runs[0].extentStart),
            start: UInt64(FileLayout.pagedFramesStart), offset: rootOffset, tailStart: rootEnd,
            indexFrames: tally.frames.load(ordering: .relaxed) + 2,
            indexStoredBytes: tally.storedBytes.load(ordering: .relaxed) + UInt64(root.catalog.storedSize) + UInt64(rootFrame.storedSize),
            indexRawBytes: tally.rawBytes.load(ordering: .relaxed) + UInt64(root.catalog.rawSize) + UInt64(rootFrame.rawSize))
    }
}

/// A secondary index's table in a paged snapshot, which open lists
/// without reading it.
struct StoredIndexTable: Sendable {
    /// The entity's position in the snapshot's catalog, and the attribute.
    var entity: Int
    var attribute: String
    var tree: PagedTree
    var run: SnapshotRoot.Run
    /// Its leaves, once open read its branches to read it a leaf at a time.
    var leaves: [PagedBlock.Child] = []
}

/// The reads and checks of one paged snapshot's frames.
///
/// This version writes a base root of one run (a rewrite, FORMAT.md §13.7),
/// and reads exactly that: a root naming more runs, or an older root, is
/// refused as one it cannot read yet, never read in part.
struct PagedSnapshotReader {
    let file: any FileIO
    let rootOffset: UInt64
    let fileSize: UInt64
    var path: String { file.path }

    /// The most raw bytes a stored byte decompresses to (LZ4's bound).
    static let rawBytesPerStoredByte: UInt64 = 255

    /// The index blocks read, and their payloads' bytes as stored and raw.
    final class Tally: Sendable {
        let frames = Atomic<Int>(0)
        let storedBytes = Atomic<UInt64>(0)
        let rawBytes = Atomic<UInt64>(0)
    }
    let tally = Tally()

    private func damaged(_ what: String, at offset: UInt64, _ reason: String) -> LogStoreError {
        LogStoreError(.corruptSnapshot, "the \(what) at offset \(offset) of \(path) is damaged: \(reason). The store cannot be opened from it as it is; restore the file from a backup (\"logstore-tool verify \(path)\" gives details)", path: path, offset: offset)
    }

    // MARK: - Root and catalog

    /// The root and its frame's header.
    func readRoot() throws(LogStoreError) -> (SnapshotRoot, FrameHeader) {
        func damaged(_ reason: String) -> LogStoreError { self.damaged("snapshot root", at: rootOffset, reason) }
        let (raw, header) = try SnapshotFile.readPayload(of: .root, in: file, at: rootOffset, limit: fileSize, damaged: damaged)
        let root: SnapshotRoot
        do throws(DecodeFailure) {
            root = try raw.withBytes { (bytes) throws(DecodeFailure) in try SnapshotRoot(decoding: bytes) }
        } catch {
            throw damaged(error.reason)
        }
        guard root.sequence == header.sequence else { throw damaged("it covers sequence \(root.sequence) but its frame says \(header.sequence)") }
        guard root.generation == 1, root.journalOffset == rootOffset else {
            throw damaged("the file's header names it as the base root, but it is of generation \(root.generation) and starts the journal at \(root.journalOffset)")
        }
        guard root.runs.count == 1, let run = root.runs.first, run.historyFrom == run.lastSequence else {
            throw LogStoreError(.unsupportedFormatVersion, "the snapshot root at offset \(rootOffset) of \(path) lists \(root.runs.count) runs, or keeps history; this LogStore reads the base root of one run without history that its compactions write: open the file with a newer LogStore", path: path, offset: rootOffset)
        }

        guard run.extentStart >= UInt64(FileLayout.pagedFramesStart), run.extentEnd <= rootOffset, run.catalog == root.catalog else {
            throw damaged("its run lies outside \(FileLayout.pagedFramesStart) ..< \(rootOffset), or names another catalog than the root")
        }
        guard run.lastSequence == root.sequence else { throw damaged("its run ends at transaction \(run.lastSequence), not at the root's \(root.sequence)") }
        return (root, header)
    }

    func readCatalog(_ handle: FrameHandle, root: SnapshotRoot) throws(LogStoreError) -> SnapshotCatalog {
        let raw = try read(handle, kind: .catalog, what: "catalog", region: UInt64(FileLayout.pagedFramesStart)..<rootOffset)
        let catalog: SnapshotCatalog
        do throws(DecodeFailure) {
            catalog = try raw.0.withBytes { (bytes) throws(DecodeFailure) in try SnapshotCatalog(decoding: bytes) }
        } catch {
            throw damaged("catalog", at: handle.offset, error.reason)
        }
        guard catalog.sequence == raw.1.sequence, catalog.sequence <= root.sequence else {
            throw damaged("catalog", at: handle.offset, "it is of sequence \(catalog.sequence), its frame says \(raw.1.sequence) and the root \(root.sequence)")
        }
        guard catalog.entities.count == root.nextKeys.count else {
            throw damaged("snapshot root", at: rootOffset, "it gives next keys for \(root.nextKeys.count) entities where its catalog lists \(catalog.entities.count)")
        }
        return catalog
    }

    /// The frame `handle` names, within `region`: its payload, decompressed,
    /// and header, checked against the handle and `kind`.
    private func read(_ handle: FrameHandle, kind: FrameKind, what: String, region: Range<UInt64>, sequence: UInt64? = nil) throws(LogStoreError) -> ([UInt8], FrameHeader) {
        guard handle.offset >= region.lowerBound, handle.offset <= region.upperBound, handle.frameSize <= region.upperBound - handle.offset else {
            throw damaged(what, at: handle.offset, "it is named outside \(region.lowerBound) ..< \(region.upperBound), where it must lie")
        }
        return try SnapshotFile.readPayload(of: kind, in: file, at: handle.offset, limit: handle.offset + handle.frameSize, filling: true, damaged: { damaged(what, at: handle.offset, $0) }) { header in
            let named = header.storedSize == handle.storedSize && header.rawSize == handle.rawSize && header.checksum == handle.checksum
                && sequence.map({ $0 == header.sequence }) ?? true
            return named ? nil : "it is not the \(kind) frame its handle names"
        }
    }

    // MARK: - Tables

    /// A reader of `tree`, a table of `run`, each block read from the file
    /// and checked against its handle, its run and its extent.
    func tableReader(_ tree: PagedTree, run: SnapshotRoot.Run) -> PagedTreeReader {
        PagedTreeReader(tree: tree, path: path) { [self] (handle) throws(LogStoreError) in
            try indexBlock(handle, of: run) { (bytes) throws(DecodeFailure) in try PagedBlock(decoding: bytes, as: tree.type) }
        }
    }

    /// The index block `handle` names in `run`, read, checked against the
    /// handle, counted, and decoded by `decode`.
    private func indexBlock<Block>(_ handle: FrameHandle, of run: SnapshotRoot.Run,
                                   _ decode: (UnsafeRawBufferPointer) throws(DecodeFailure) -> Block) throws(LogStoreError) -> Block {
        let (raw, _) = try read(handle, kind: .indexBlock, what: "index block", region: run.extentStart..<run.extentEnd, sequence: run.number)
        tally.frames.add(1, ordering: .relaxed)
        tally.storedBytes.add(UInt64(handle.storedSize), ordering: .relaxed)
        tally.rawBytes.add(UInt64(handle.rawSize), ordering: .relaxed)
        do throws(DecodeFailure) {
            return try raw.withBytes { (bytes) throws(DecodeFailure) in try decode(bytes) }
        } catch {
            throw PagedTreeReader.damage(path: path, run: run.number, offset: handle.offset, reason: error.reason)
        }
    }

    /// The index the store's state is built from: entities and next keys
    /// from the catalog and root, the block directory and live keys from
    /// the key directory, secondary indexes and pointers from their tables.
    /// When `deferring` is given, each entity's keys are located instead
    /// of listed, and each secondary index's table goes to `deferring`
    /// instead of being read. When `pagingKeys` is given, the key directory
    /// goes to it with its leaves listed from its branches, and no leaf is
    /// read: the block directory and the entities' keys stay empty.
    func index(root: SnapshotRoot, catalog: SnapshotCatalog, keysOnly: Bool, deferring: ((StoredIndexTable) -> Void)? = nil,
               pagingKeys: ((PagedKeyDirectory) -> Void)? = nil) throws(LogStoreError) -> SnapshotIndex {
        let run = root.runs[0]
        var index = SnapshotIndex(sequence: root.sequence, blockSize: 1)
        index.schema = catalog.schema
        index.dictionary = catalog.dictionary
        index.symbols = catalog.symbols
        index.blocksHaveContext = true
        index.entities = zip(catalog.entities, root.nextKeys).map {
            SnapshotIndex.Entity(name: $0.name, slots: $0.slots, nextKey: $1, keys: [])
        }
        for (position, table) in run.tables.enumerated() {
            // The key directory names entity 0 whatever the model holds.
            guard table.type == PagedTableType.keys.rawValue || table.entity < catalog.entities.count else {
                throw damaged("snapshot root", at: rootOffset, "table \(position) of run \(run.number) names entity #\(table.entity), but the catalog lists \(catalog.entities.count)")
            }
            guard let tree = table.tree(run: run.number, position: position), !keysOnly || tree.type == .keys else { continue }
            // Its entries name records of the run's data blocks: no more than
            // the run's bytes could hold raw, at LZ4's 255 to one. A run word
            // lets a few bytes of a leaf claim many entries; this keeps what
            // a table may make a reader hold in proportion to the file.
            guard tree.entryCount / Self.rawBytesPerStoredByte <= run.extentEnd - run.extentStart else {
                throw damaged("snapshot root", at: rootOffset, "table \(position) of run \(run.number) claims \(tree.entryCount) entries, more than the run's \(run.extentEnd - run.extentStart) bytes can hold")
            }
            let reader = tableReader(tree, run: run)
            switch tree.type {
            case .keys:
                if let pagingKeys {
                    pagingKeys(try PagedKeyDirectory(leaves: reader.leaves(), tree: tree, run: run, entityNames: index.entities.map(\.name),
                                                     nextKeys: index.entities.map(\.nextKey), path: path))
                } else {
                    try readKeyDirectory(reader, run: run, locating: deferring != nil, into: &index)
                }
            case .values:
                if let deferring {
                    deferring(StoredIndexTable(entity: table.entity, attribute: table.name, tree: tree, run: run))
                } else if let values = try readValues(reader, entity: table.entity, attribute: table.name) {
                    index.indexes.append(values)
                }
            case .targets: index.pointers.append(try readTargets(reader, entity: table.entity, relationship: table.name))
            }
        }
        return index
    }

    /// Walks the key directory leaf by leaf: each data block it lists
    /// becomes a directory entry, and each live key joins its entity's
    /// list, or with `locating`, its located keys.
    ///
    /// The leaves are read as runs of keys (``KeyDirectoryLeaf``), found
    /// through the branches and checked as a cursor checks them: against
    /// their parent's entry, and each one's first entry after the last of
    /// the one before.
    private func readKeyDirectory(_ reader: PagedTreeReader, run: SnapshotRoot.Run, locating: Bool, into index: inout SnapshotIndex) throws(LogStoreError) {
        var located = locating ? Array(repeating: LocatedKeys(), count: index.entities.count) : []
        defer {
            for entity in located.indices {
                located[entity].trim()
                index.entities[entity].inSnapshot = .located(located[entity])
            }
        }
        let tree = reader.tree
        var placement = KeyPlacement(path: path, tree: tree, run: run, entityNames: index.entities.map(\.name), nextKeys: index.entities.map(\.nextKey), allowsTombstones: true)
        var previousLast: (entity: Int, key: UInt64)?
        // A table of one leaf is its own top, which the root describes; any
        // other leaf is described by its parent.
        let leaves: [(handle: FrameHandle, entryCount: UInt64, first: (group: PagedGroup, key: UInt64)?)] =
            tree.height == 0 ? [(tree.top, tree.entryCount, nil)] : try reader.leaves().map { ($0.handle, $0.entryCount, ($0.group, $0.key)) }
        for (leafNumber, child) in leaves.enumerated() {
            let leaf = try keyLeaf(child.handle, of: run)
            try placement.check(leaf, at: child.handle.offset, entryCount: child.entryCount, first: child.first)
            if leafNumber == 0 { reserveBlocks(firstLeaf: leaf, leafCount: leaves.count, run: run, located: &located, index: &index) }
            guard let first = leaf.first, let last = leaf.last else { continue }
            // An older version of the key before may go on into this leaf; it
            // is refused when placed, as damage in a run without history.
            if let previousLast, previousLast.entity > first.entity || (previousLast.entity == first.entity && previousLast.key > first.key)
                || (previousLast == first && leaf.runs[0].state != .olderVersion) {
                throw reader.damaged(child.handle.offset, "its entries do not follow those of the block before it")
            }
            previousLast = last
            try placement.place(leaf, firstNumber: index.blocks.count, addBlock: { index.blocks.append($0) }) { (entity, firstKey, count, block, firstSlot) throws(LogStoreError) in
                guard locating else {
                    index.entities[entity].keys.append(contentsOf: firstKey...(firstKey + UInt64(count - 1)))
                    return
                }
                // Keys increase within an entity (checked as the leaf was
                // decoded, and across leaves above).
                guard located[entity].append(run: firstKey, count: count, block: block, firstSlot: firstSlot) else {
                    throw PagedTreeReader.damage(path: path, run: tree.run, offset: child.handle.offset, reason: "its key directory lists \(index.entities[entity].name)/\(firstKey) out of key order")
                }
            }
        }
    }

    /// The key-directory leaf `handle` names in `run`, read and checked
    /// against its handle.
    func keyLeaf(_ handle: FrameHandle, of run: SnapshotRoot.Run) throws(LogStoreError) -> KeyDirectoryLeaf {
        try indexBlock(handle, of: run) { (bytes) throws(DecodeFailure) in try KeyDirectoryLeaf(decoding: bytes) }
    }

    /// Makes room for the data blocks of a key directory of `leafCount`
    /// leaves, guessed from its first: writers fill every leaf but the
    /// last alike, so the guess is close, and the directory and the first
    /// entity's located keys then grow without copying themselves. The
    /// leaves are not all read yet, so a crafted one could claim anything:
    /// the guess is never more blocks than the run's bytes hold frame
    /// headers, nor more than ``largestBlockReservation``; past that the
    /// arrays grow as blocks are read.
    /// The most data blocks open reserves room for before reading them:
    /// about 10^8 records of 40 bytes in blocks of the default size.
    static let largestBlockReservation = 1 << 20

    private func reserveBlocks(firstLeaf leaf: KeyDirectoryLeaf, leafCount: Int, run: SnapshotRoot.Run, located: inout [LocatedKeys], index: inout SnapshotIndex) {
        let (guess, overflow) = leaf.dataBlocks.count.multipliedReportingOverflow(by: leafCount)
        // SnapshotRoot checks that a run's extent starts before it ends.
        let fitting = Int(clamping: (run.extentEnd - run.extentStart) / UInt64(FrameLayout.headerSize))
        let blocks = min(overflow ? .max : guess, fitting, Self.largestBlockReservation)
        index.blocks.reserveCapacity(index.blocks.count + blocks)
        if let entity = leaf.runs.first?.entity, entity < located.count { located[entity].reserveCapacity(segments: blocks) }
    }

    /// A secondary index's groups, or nil when one is cut (FORMAT.md §13.5):
    /// the store then rebuilds it from the records, which hold whole values.
    func readValues(_ reader: PagedTreeReader, entity: Int, attribute: String) throws(LogStoreError) -> SnapshotIndex.Index? {
        var index = SnapshotIndex.Index(entity: entity, attribute: attribute, values: [], counts: [], keys: [])
        var cursor = try reader.first()
        // A group may go on from one leaf into the next, its value repeated;
        // `openListed` says whether its value is the last one listed.
        var open: PagedGroup?
        var openListed = false
        while let leaf = try cursor.nextLeaf() {
            var start = 0
            for (group, end) in zip(leaf.groups, leaf.groupEnds) {
                defer { start = end }
                guard case .value(let value, let cut) = group else { continue }
                if cut { return nil }
                let continues = start == 0 && open.map { PagedGroup.order($0, group) == .orderedSame } == true
                let added = try appendPresent(leaf.entries[start..<end], to: &index.keys, reader)
                open = group
                if continues && openListed {
                    index.counts[index.counts.count - 1] += added
                } else if added > 0 {
                    index.values.append(value)
                    index.counts.append(added)
                    openListed = true
                } else {
                    openListed = false
                }
            }
        }
        return index
    }

    /// The reverse of a stored relationship: sources grouped by target.
    private func readTargets(_ reader: PagedTreeReader, entity: Int, relationship: String) throws(LogStoreError) -> SnapshotIndex.Pointers {
        var pointers = SnapshotIndex.Pointers(entity: entity, relationship: relationship, targets: [], counts: [], sources: [])
        var cursor = try reader.first()
        while let leaf = try cursor.nextLeaf() {
            var start = 0
            for (group, end) in zip(leaf.groups, leaf.groupEnds) {
                defer { start = end }
                guard case .target(let target) = group else { continue }
                let added = try appendPresent(leaf.entries[start..<end], to: &pointers.sources, reader)
                guard added > 0 else { continue }
                if pointers.targets.last == target {
                    pointers.counts[pointers.counts.count - 1] += added
                } else {
                    pointers.targets.append(target)
                    pointers.counts.append(added)
                }
            }
        }
        return pointers
    }

    /// Appends the keys of the present entries among `entries` to `keys`,
    /// and returns how many: a tombstone hides nothing in the only run, and
    /// an older version is damage in a run without history.
    private func appendPresent(_ entries: ArraySlice<PagedEntry>, to keys: inout [UInt64], _ reader: PagedTreeReader) throws(LogStoreError) -> Int {
        var added = 0
        for entry in entries {
            switch entry.state {
            case .present:
                keys.append(entry.key)
                added += 1
            case .tombstone: break
            case .olderVersion: throw Self.olderVersion(reader, at: reader.tree.top.offset, path: path)
            }
        }
        return added
    }

    /// An older version in a run that keeps no history (the root says so).
    private static func olderVersion(_ reader: PagedTreeReader, at offset: UInt64, path: String) -> LogStoreError {
        PagedTreeReader.damage(path: path, run: reader.tree.run, offset: offset, reason: "its table lists an older version of a record, which a run without history does not keep")
    }

    // MARK: - Every frame of the run

    /// Checks, in one sequential read, that the run's extent holds valid
    /// frames of its kinds and number only, and that its data blocks are
    /// exactly the directory's, in order: damage to a data block is
    /// reported at open, as for an index frame's snapshot.
    func checkFrames(of run: SnapshotRoot.Run, directory: [SnapshotIndex.Block]) throws(LogStoreError) {
        var scanner = FrameScanner(file: file, limit: run.extentEnd)
        var blocks = 0
        var mismatch: (number: Int, offset: UInt64, reason: String)?
        let summary = try scanner.scan(from: run.extentStart, checksSequence: false) { (frame, _) throws(DecodeFailure) in
            let header = frame.header
            switch header.kind {
            case .snapshotBlock where header.sequence == run.number:
                let expected = blocks < directory.count ? directory[blocks] : nil
                guard let expected, expected.offset == frame.offset, expected.checksum == header.checksum, expected.storedSize == header.storedSize, expected.rawSize == header.rawSize else {
                    mismatch = (blocks + 1, frame.offset, "it is not the block the key directory lists there")
                    throw DecodeFailure("it is not the block the key directory lists there")
                }
                blocks += 1
            case .indexBlock where header.sequence == run.number, .catalog:
                break
            default:
                mismatch = (blocks + 1, frame.offset, "a \(header.kind) frame of sequence \(header.sequence) stands in run \(run.number)")
                throw DecodeFailure("a \(header.kind) frame of sequence \(header.sequence) stands in run \(run.number)")
            }
        }
        switch summary.end {
        case .clean:
            guard blocks == directory.count else {
                throw SnapshotFile.blockDamage(path: path, number: blocks + 1, offset: run.extentEnd, reason: "the key directory lists \(directory.count) data blocks, the run holds \(blocks)")
            }
        case .tornTail(let offset, _, let reason), .damage(let offset, _, let reason):
            let failed = mismatch ?? (blocks + 1, offset, reason)
            throw SnapshotFile.blockDamage(path: path, number: failed.number, offset: failed.offset, reason: failed.reason)
        }
    }
}
