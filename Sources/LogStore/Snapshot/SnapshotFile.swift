// Reads a store file's snapshot: its index at open, its blocks on demand.

import Synchronization

/// The snapshot at the start of a store file (FORMAT.md §11), opened for
/// reading blocks.
///
/// Open reads the index frame and checks every block frame's checksum
/// against the directory, decoding none: damage is reported at open, naming
/// the block. A paged snapshot's open (format version 5) reads its index
/// blocks only, unless it salvages, and of its key directory the branches
/// and the leaves where an entity ends (``PagedKeyDirectory``); each data
/// block and key-directory leaf is checked when first read, and a read that
/// needs one that fails says so (the first failure is kept, and counted). Blocks are decoded when a record in them
/// is first touched, through a bounded ``BlockCache``.
///
/// It reads through a descriptor of its own, so a compaction that renames
/// a new file over the store leaves it reading the file it was opened on,
/// for as long as a reader holds it.
final class SnapshotFile: Sendable {
    /// The store's path, for messages.
    var path: String { file.path }
    /// The last transaction the snapshot includes.
    let sequence: UInt64
    /// Where the journal's frames after the snapshot start.
    let tailStart: UInt64
    /// Per entity of the snapshot (FORMAT.md §11.3), its name and slot count.
    let entityNames: [String]
    let slotCounts: [Int]
    /// Every data block, when the key directory was read whole (an index
    /// frame's snapshot, or a paged one read eagerly); empty when
    /// ``keyDirectory`` is read a leaf at a time instead.
    let directory: [SnapshotIndex.Block]
    /// A paged snapshot's key directory read a leaf at a time: the data
    /// blocks are numbered by leaf and position (``PagedKeyDirectory``).
    let keyDirectory: PagedKeyDirectory?
    /// What every block repeats of the index (format version 4 on), and
    /// the check of each block's against it.
    let blockContext: BlockContextCheck?
    /// Whether its blocks are a paged snapshot's (format version 5).
    let isPaged: Bool
    /// The size of everything before the journal tail: header, blocks, index.
    var byteCount: UInt64 { tailStart }
    /// The blocks' raw sizes added up: the live records when the snapshot
    /// was written, counted once here because saves ask for it each time.
    let rawBlockBytes: Int

    /// A paged snapshot's secondary indexes read a leaf at a time, whose
    /// branches open read; the others are in the index open returned.
    let storedIndexes: [StoredIndexTable]
    /// A paged snapshot's root, for reading its tables.
    private let rootOffset: UInt64

    private let file: any FileIO
    private let cache: BlockCache
    private let decodedBlocks = Atomic<Int>(0)
    private let readLeaves = Atomic<Int>(0)
    private let readKeyLeaves = Atomic<Int>(0)
    /// Key-directory leaves kept once read, while they fit in an eighth of
    /// the cache's capacity: a lookup then finds its leaf without the
    /// cache's lock and hash. Beyond that, leaves are read through the
    /// cache like data blocks.
    private let pinnedKeyPages: [PinnedKeyPage]
    private let pinnedKeyBytes = Atomic<Int>(0)
    private final class PinnedKeyPage: Sendable {
        let page = AtomicLazyReference<KeyDirectoryPage>()
    }
    /// The first block that failed to read after open: an I/O error, or a
    /// paged snapshot's damaged data block. Saves refuse to go on past it.
    private let readFailure = Protected<LogStoreError?>(nil)
    private let failedReads = Atomic<Int>(0)

    /// A snapshot of `index`, whose blocks `index.blocks` lists, or
    /// `keyDirectory` when it is read a leaf at a time. For the latter, the
    /// raw bytes of the blocks are not known without reading every leaf:
    /// `dataBytes`, the bytes of its data frames as its root gives them,
    /// stands for them (compressed, they are fewer).
    init(index: SnapshotIndex, tailStart: UInt64, file: any FileIO, cacheCapacity: Int, storedIndexes: [StoredIndexTable] = [], rootOffset: UInt64 = 0,
         keyDirectory: PagedKeyDirectory? = nil, dataBytes: UInt64 = 0) {
        self.storedIndexes = storedIndexes
        self.rootOffset = rootOffset
        sequence = index.sequence
        self.tailStart = tailStart
        entityNames = index.entities.map(\.name)
        slotCounts = index.entities.map(\.slots.count)
        directory = index.blocks
        self.keyDirectory = keyDirectory
        pinnedKeyPages = (keyDirectory?.leaves.indices ?? 0..<0).map { _ in PinnedKeyPage() }
        rawBlockBytes = keyDirectory == nil ? index.blocks.reduce(0) { $0 + Int($1.rawSize) } : Int(clamping: dataBytes)
        blockContext = index.blockContext.map(BlockContextCheck.init)
        isPaged = index.isPaged
        self.file = file
        cache = BlockCache(capacity: cacheCapacity)
    }

    deinit { file.close() }

    /// The store file is now named `path` (see ``FileIO/didMove(to:)``).
    func didMove(to path: String) { file.didMove(to: path) }

    /// Reads the snapshot `header` names in `file` for the tools, without
    /// checking its data blocks: an index frame's (format versions 2 to 4)
    /// or a paged one's (version 5); nil when the file holds none. With
    /// `keysOnly`, a paged snapshot's tables other than its key directory
    /// are not read (``readPaged(in:rootOffset:fileSize:checkingFrames:keysOnly:opening:)``).
    static func read(in file: any FileIO, header: FileHeader, fileSize: UInt64, keysOnly: Bool = false) throws(LogStoreError) -> SnapshotExtent? {
        if let rootOffset = header.snapshotRootOffset {
            return try readPaged(in: file, rootOffset: rootOffset, fileSize: fileSize, checkingFrames: false, keysOnly: keysOnly)
        }
        guard let indexOffset = header.snapshotIndexOffset else { return nil }
        let (index, frame) = try readIndex(in: file, at: indexOffset, fileSize: fileSize)
        return SnapshotExtent(
            index: index, start: UInt64(FileLayout.headerSize), offset: indexOffset, tailStart: indexOffset + frame.frameSize,
            indexFrames: 1, indexStoredBytes: UInt64(frame.storedSize), indexRawBytes: UInt64(frame.rawSize))
    }

    /// Opens the snapshot `header` names in `journalFile`: an index frame's
    /// (format versions 2 to 4) or a paged one's (version 5); nil when the
    /// file holds none. Without `readingWholeIndexes`, a paged snapshot's
    /// indexes that are not read a leaf at a time are left unread (a
    /// compaction's read-back, which has them in memory).
    static func open(_ journalFile: any FileIO, header: FileHeader, fileSize: UInt64, cacheCapacity: Int, checkingDataBlocks: Bool = true, readingWholeIndexes: Bool = true) throws(LogStoreError) -> (SnapshotFile, SnapshotIndex)? {
        if let rootOffset = header.snapshotRootOffset {
            return try openPaged(journalFile, rootOffset: rootOffset, fileSize: fileSize, cacheCapacity: cacheCapacity, checkingDataBlocks: checkingDataBlocks, readingWholeIndexes: readingWholeIndexes)
        }
        if let indexOffset = header.snapshotIndexOffset {
            return try open(journalFile, indexOffset: indexOffset, fileSize: fileSize, cacheCapacity: cacheCapacity)
        }
        return nil
    }

    /// Opens the snapshot whose index frame is at `indexOffset` of `journalFile`,
    /// checking the index and every block's checksum.
    ///
    /// - Returns: the snapshot, and its decoded index for the store to build
    ///   its state from.
    /// - Throws: `.corruptSnapshot` naming the index or the block that is
    ///   damaged; `.io` when reading fails.
    static func open(_ journalFile: any FileIO, indexOffset: UInt64, fileSize: UInt64, cacheCapacity: Int) throws(LogStoreError) -> (SnapshotFile, SnapshotIndex) {
        let (index, header) = try readIndex(in: journalFile, at: indexOffset, fileSize: fileSize)
        try verifyBlocks(of: index, in: journalFile, end: indexOffset)
        let file = try journalFile.reopenForReading()
        let snapshot = SnapshotFile(index: index, tailStart: indexOffset + header.frameSize, file: file, cacheCapacity: cacheCapacity)
        return (snapshot, index)
    }

    /// Reads and decodes the index frame at `indexOffset`.
    static func readIndex(in file: any FileIO, at indexOffset: UInt64, fileSize: UInt64) throws(LogStoreError) -> (SnapshotIndex, FrameHeader) {
        let path = file.path
        func damaged(_ reason: String) -> LogStoreError {
            LogStoreError(.corruptSnapshot, "the snapshot index at offset \(indexOffset) of \(path) is damaged: \(reason). The store cannot be opened from it as it is. From format version 4 on, its blocks repeat what it says: open the store read-write with recoveryMode .salvage, or run \"logstore-tool recover \(path) --output NEW\", to rebuild it from them; an older file must be restored from a backup (\"logstore-tool verify \(path)\" gives details)", path: path, offset: indexOffset)
        }
        let fileHeader = try file.read(count: FileLayout.headerSize, at: 0).withBytes { (raw) throws(LogStoreError) in try FileHeader.decode(raw, path: path) }
        let (raw, header) = try readPayload(of: .snapshotIndex, in: file, at: indexOffset, limit: fileSize, damaged: damaged)
        var index: SnapshotIndex
        do throws(DecodeFailure) {
            index = try raw.withBytes { (bytes) throws(DecodeFailure) in try SnapshotIndex(decoding: bytes) }
        } catch {
            throw damaged(error.reason)
        }
        index.blocksHaveContext = fileHeader.readVersion >= FileLayout.selfDescribingBlockVersion
        guard index.sequence == header.sequence else {
            throw damaged("it covers sequence \(index.sequence) but its frame says \(header.sequence)")
        }
        // Compared without adding, so that no offset overflows.
        guard index.blocks.allSatisfy({ $0.offset >= UInt64(FileLayout.headerSize) && $0.offset <= indexOffset && $0.frameSize <= indexOffset - $0.offset }) else {
            throw damaged("its directory places a block outside the snapshot")
        }
        return (index, header)
    }

    /// Checks that the frames from the header to the index are exactly the
    /// directory's blocks, in order, each whole: one sequential read, no
    /// decompression.
    private static func verifyBlocks(of index: SnapshotIndex, in file: any FileIO, end: UInt64) throws(LogStoreError) {
        var scanner = FrameScanner(file: file, limit: end)
        var mismatch: String?
        let summary = try scanner.scan { (frame, _) throws(DecodeFailure) in
            let position = frame.number - 1
            guard position < index.blocks.count else { throw DecodeFailure("a frame follows the last block of the directory") }
            let entry = index.blocks[position]
            guard frame.header.kind == .snapshotBlock, frame.offset == entry.offset, frame.header.checksum == entry.checksum,
                  frame.header.storedSize == entry.storedSize, frame.header.rawSize == entry.rawSize, frame.header.sequence == UInt64(frame.number) else {
                mismatch = "it is not the block the directory lists there"
                throw DecodeFailure("it is not the block the directory lists there")
            }
        }
        let failedBlock: (number: Int, offset: UInt64, reason: String)?
        switch summary.end {
        case .clean:
            failedBlock = summary.frameCount == index.blocks.count ? nil
                : (summary.frameCount + 1, summary.validEnd, "the directory lists \(index.blocks.count) blocks, the file holds \(summary.frameCount)")
        case .tornTail(let offset, _, let reason): failedBlock = (summary.frameCount + 1, offset, reason)
        case .damage(let offset, let number, let reason): failedBlock = (number, offset, mismatch ?? reason)
        }
        if let failedBlock {
            throw blockDamage(path: file.path, number: failedBlock.number, offset: failedBlock.offset, reason: failedBlock.reason)
        }
    }

    /// The damage of data block `number` (as this snapshot numbers its
    /// blocks, 0-based), for `reason`: named by its place in the directory
    /// when that was read whole, else by its offset alone.
    func blockDamage(_ number: Int, reason: String) -> LogStoreError {
        if keyDirectory != nil {
            let (leaf, position) = PagedKeyDirectory.leafAndPosition(of: number)
            let offset = (try? entry(number))?.offset
            return LogStoreError(.corruptSnapshot, "data block \(position + 1) of key-directory leaf \(leaf + 1)\(offset.map { " at offset \($0)" } ?? "") of \(path) is damaged: \(reason). Its records cannot be read. To keep the records of every other block and the saves after the snapshot, open the store read-write with recoveryMode .salvage (the damaged file is kept as \(path).damaged-0) or run \"logstore-tool recover \(path) --output NEW\"; \"logstore-tool verify \(path)\" lists every damaged block", path: path, offset: offset)
        }
        return Self.blockDamage(path: path, number: number + 1, offset: number < directory.count ? directory[number].offset : 0, reason: reason)
    }

    static func blockDamage(path: String, number: Int, offset: UInt64, reason: String) -> LogStoreError {
        LogStoreError(.corruptSnapshot, "snapshot block \(number) at offset \(offset) of \(path) is damaged: \(reason). Its records cannot be read. To keep the records of every other block and the saves after the snapshot, open the store read-write with recoveryMode .salvage (the damaged file is kept as \(path).damaged-0) or run \"logstore-tool recover \(path) --output NEW\"; \"logstore-tool verify \(path)\" lists every damaged block", path: path, offset: offset, frameNumber: number)
    }

    /// The payload of the frame at `offset`, which must end by `limit` (at
    /// it, `filling`, when a handle gives the frame's size), be
    /// valid (§3), of `kind`, and pass `check` (a reason to refuse it, or
    /// nil), decompressed, with its header. Whatever is wrong is thrown as
    /// `damaged(reason)`, which names the frame as its reader knows it.
    static func readPayload(of kind: FrameKind, in file: any FileIO, at offset: UInt64, limit: UInt64, filling: Bool = false, damaged: (String) -> LogStoreError, check: (FrameHeader) -> String? = { _ in nil }) throws(LogStoreError) -> ([UInt8], FrameHeader) {
        let (header, stored): (FrameHeader, ArraySlice<UInt8>)
        switch try FrameScanner.readFrame(in: file, at: offset, limit: limit, filling: filling) {
        case .success(let frame): (header, stored) = frame
        case .failure(let failure): throw damaged(failure.reason)
        }
        guard header.kind == kind else { throw damaged("the frame there is a \(header.kind) frame") }
        if let reason = check(header) { throw damaged(reason) }
        do throws(DecodeFailure) {
            return (try decompress(header, stored), header)
        } catch {
            throw damaged(error.reason)
        }
    }

    /// A frame's payload as stored, decompressed to the raw size its header gives.
    static func decompress(_ header: FrameHeader, _ stored: ArraySlice<UInt8>) throws(DecodeFailure) -> [UInt8] {
        try stored.withBytes { (source) throws(DecodeFailure) in try decompress(header, source) }
    }

    /// ``decompress(_:_:)-(_,ArraySlice<UInt8>)`` from borrowed bytes.
    static func decompress(_ header: FrameHeader, _ stored: UnsafeRawBufferPointer) throws(DecodeFailure) -> [UInt8] {
        switch header.codec {
        case .raw:
            return Array(stored)
        case .lz4Block:
            // Not zeroed first: LZ4.decompress fails unless it writes every byte.
            var failure: DecodeFailure?
            let raw = [UInt8](unsafeUninitializedCapacity: Int(header.rawSize)) { destination, initialized in
                initialized = destination.count
                do throws(DecodeFailure) {
                    try LZ4.decompress(stored, into: UnsafeMutableRawBufferPointer(destination))
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { throw failure }
            return raw
        case .lz4BlockWithDictionary:
            throw DecodeFailure("a snapshot frame is compressed against a store dictionary, which only transactions may use")
        }
    }

    // MARK: - Blocks

    /// Blocks decoded since open (cache misses), for tests and statistics.
    var blocksDecoded: Int { decodedBlocks.load(ordering: .relaxed) }

    /// Leaves of secondary indexes read since open (cache misses), for
    /// tests and statistics.
    var indexLeavesRead: Int { readLeaves.load(ordering: .relaxed) }

    /// Leaves of a key directory read a leaf at a time read since it was
    /// opened (cache misses, those open reads included), for tests and
    /// statistics.
    var keyLeavesRead: Int { readKeyLeaves.load(ordering: .relaxed) }

    /// The bytes of decoded blocks in memory now.
    var cachedBytes: Int { cache.byteCount }

    /// The block at `number` (0-based), from the cache or decoded now; nil
    /// when it cannot be read, the failure kept for ``checkReadable()``.
    /// Its records' values are checked as they are read
    /// (``checkedValues(of:at:)``), not here: a lookup reads one record of
    /// the block.
    func block(_ number: Int) -> SnapshotBlock? {
        if let cached = cache.block(.data(number)) as? SnapshotBlock { return cached }
        do throws(LogStoreError) {
            let block = try readBlock(number, checkingValues: false)
            cache.insert(block, as: .data(number))
            return block
        } catch {
            keep(error)
            return nil
        }
    }

    /// Whether the values of the record at `slot` of `block` (of every
    /// record, when nil) are well formed; when not, the failure is kept as
    /// the block's, for ``checkReadable()``.
    func checkedValues(of block: SnapshotBlock, at slot: Int? = nil) -> Bool {
        do throws(DecodeFailure) {
            if let slot { try block.checkValues(at: slot) } else { try block.checkValues() }
            return true
        } catch {
            keep(blockDamage(block.number, reason: error.reason))
            return false
        }
    }

    /// Keeps `error`, a read's failure: the first is what ``checkReadable()``
    /// throws, and each counts (``failedReadCount``).
    private func keep(_ error: LogStoreError) {
        readFailure.withLock { if $0 == nil { $0 = error } }
        failedReads.add(1, ordering: .relaxed)
    }

    /// Reads and decodes block `number` (0-based), bypassing the cache;
    /// with `checkingValues`, checks every record's values too.
    func readBlock(_ number: Int, checkingValues: Bool = true) throws(LogStoreError) -> SnapshotBlock {
        let entry = try entry(number)
        let block = try Self.readBlock(number, entry, slotCounts: slotCounts, context: blockContext, paged: isPaged, checkingValues: checkingValues, in: file) { reason in
            blockDamage(number, reason: reason)
        }
        decodedBlocks.add(1, ordering: .relaxed)
        return block
    }

    /// The directory's entry for data block `number` (0-based): from the
    /// directory, or from the key-directory leaf that lists it.
    ///
    /// - Throws: the leaf's failure when it cannot be read.
    func entry(_ number: Int) throws(LogStoreError) -> SnapshotIndex.Block {
        guard let keyDirectory else { return directory[number] }
        let (leaf, position) = PagedKeyDirectory.leafAndPosition(of: number)
        let page = try readKeyPage(leaf, of: keyDirectory)
        return page.blocks[position]
    }

    /// Reads block `number` (0-based) of `directory` from `file` and checks
    /// all of it (``readBlock(_:_:slotCounts:context:paged:checkingValues:in:damaged:)``).
    static func readBlock(_ number: Int, of directory: [SnapshotIndex.Block], slotCounts: [Int], context: BlockContextCheck?, paged: Bool = false, checkingValues: Bool = true, in file: any FileIO) throws(LogStoreError) -> SnapshotBlock {
        let entry = directory[number]
        return try readBlock(number, entry, slotCounts: slotCounts, context: context, paged: paged, checkingValues: checkingValues, in: file) { reason in
            blockDamage(path: file.path, number: number + 1, offset: entry.offset, reason: reason)
        }
    }

    /// Reads block `number`, whose directory entry is `entry`, from `file`
    /// and checks all of it: the frame, every record against the entry and,
    /// with `checkingValues`, the entities' slot counts, and the context the
    /// block starts with, if `context` says it has one, by it. A paged
    /// snapshot's block (`paged`) numbers its records' lengths from one
    /// (FORMAT.md §13.5). What is wrong is thrown as `damaged(reason)`.
    static func readBlock(_ number: Int, _ entry: SnapshotIndex.Block, slotCounts: [Int], context: BlockContextCheck?, paged: Bool, checkingValues: Bool, in file: any FileIO,
                          damaged: (String) -> LogStoreError) throws(LogStoreError) -> SnapshotBlock {
        let (end, overflow) = entry.offset.addingReportingOverflow(entry.frameSize)
        guard !overflow else { throw damaged("it is said to lie past the largest offset a file can have") }
        let frame: (FrameHeader, ArraySlice<UInt8>)
        switch try FrameScanner.readFrame(in: file, at: entry.offset, limit: end, filling: true) {
        case .success(let read): frame = read
        case .failure(let failure): throw damaged(failure.reason)
        }
        guard frame.0.checksum == entry.checksum, frame.0.kind == .snapshotBlock else {
            throw damaged("it is not the block the directory lists there")
        }
        do throws(DecodeFailure) {
            let block = try SnapshotBlock(number: number, raw: try decompress(frame.0, frame.1), slotCounts: slotCounts, hasContext: context != nil, contextCheck: context, paged: paged, expectedCount: entry.recordCount, checkingValues: checkingValues)
            // Tombstones exactly where the key directory lists them (a run
            // without history skips nothing else): a tombstone read as a
            // record, or a record left out as one, would change the store.
            if paged {
                var skipped = entry.skipped.makeIterator(), nextSkipped = skipped.next()
                for slot in 0..<block.count {
                    let listed = nextSkipped == slot
                    if listed { nextSkipped = skipped.next() }
                    guard listed == block.isTombstone(slot) else {
                        throw DecodeFailure("its record \(slot + 1) is \(listed ? "a record" : "a tombstone") where the key directory lists \(listed ? "a tombstone" : "a live record")")
                    }
                }
            }
            guard block.count == entry.recordCount, block.count > 0, block.entity(at: 0) == entry.firstEntity, block.key(at: 0) == entry.firstKey,
                  block.entity(at: block.count - 1) == entry.lastEntity, block.key(at: block.count - 1) == entry.lastKey else {
                throw DecodeFailure("its records are not the ones the directory lists")
            }
            return block
        } catch {
            throw damaged(error.reason)
        }
    }

    /// The leaf at `offset` of index table `table`, from the cache or made
    /// by `read` now; nil when it cannot be read, the failure kept as a
    /// block's is.
    func indexLeaf(of table: Int, at offset: UInt64, read: () throws(LogStoreError) -> IndexPage) -> IndexPage? {
        let key = BlockCache.Key.indexLeaf(table: table, offset: offset)
        if let cached = cache.block(key) as? IndexPage { return cached }
        do throws(LogStoreError) {
            let page = try read()
            readLeaves.add(1, ordering: .relaxed)
            cache.insert(page, as: key)
            return page
        } catch {
            keep(error)
            return nil
        }
    }

    // MARK: - A key directory read a leaf at a time

    /// Leaf `number` of ``keyDirectory``, placed, from the cache or read
    /// now; nil when it cannot be read, the failure kept as a block's is.
    func keyPage(_ number: Int) -> KeyDirectoryPage? {
        guard let keyDirectory else { return nil }
        if let pinned = pinnedKeyPages[number].page.load() { return pinned }
        do throws(LogStoreError) {
            let page = try readKeyPage(number, of: keyDirectory)
            // Counted before it is kept, so that threads pinning at once
            // never keep more than the share between them.
            let fits = pinnedKeyBytes.add(page.byteCount, ordering: .relaxed).newValue <= cache.capacity / 8
            if !fits || pinnedKeyPages[number].page.storeIfNil(page) !== page {
                pinnedKeyBytes.subtract(page.byteCount, ordering: .relaxed)
            }
            return page
        } catch {
            keep(error)
            return nil
        }
    }

    /// Leaf `number` of `directory`, placed, from the cache or read now.
    private func readKeyPage(_ number: Int, of directory: PagedKeyDirectory) throws(LogStoreError) -> KeyDirectoryPage {
        let key = BlockCache.Key.indexLeaf(table: directory.placement.tree.table, offset: directory.leaves[number].handle.offset)
        if let cached = cache.block(key) as? KeyDirectoryPage { return cached }
        let page = try directory.page(number, reader: PagedSnapshotReader(file: file, rootOffset: rootOffset, fileSize: tailStart))
        readKeyLeaves.add(1, ordering: .relaxed)
        cache.insert(page, as: key)
        return page
    }

    /// How many data blocks it has. A key directory read a leaf at a time
    /// is read whole for it, through the cache (a leaf that cannot be read
    /// counts none): for tests and statistics.
    var dataBlockCount: Int {
        guard let keyDirectory else { return directory.count }
        return keyDirectory.leaves.indices.reduce(0) { $0 + (keyPage($1)?.blocks.count ?? 0) }
    }

    /// Each entity's records, found from the key directory's branches and
    /// the leaves where an entity ends, read now.
    ///
    /// - Throws: `.corruptSnapshot` when one of those leaves is damaged.
    func pagedEntityKeys() throws(LogStoreError) -> [PagedEntityKeys] {
        guard let keyDirectory else { return [] }
        return try PagedEntityKeys.all(in: keyDirectory, entityCount: entityNames.count) { (number) throws(LogStoreError) in
            try readKeyPage(number, of: keyDirectory)
        }
    }

    // MARK: - Secondary indexes of a paged snapshot

    /// `stored`'s table, read a leaf at a time through the cache.
    func pagedIndex(_ stored: StoredIndexTable) -> PagedIndexTable {
        let reader = PagedSnapshotReader(file: file, rootOffset: rootOffset, fileSize: tailStart).tableReader(stored.tree, run: stored.run)
        return PagedIndexTable(reader, leaves: stored.leaves, of: self)
    }

    /// Reads and checks every data block, and every leaf of the indexes
    /// read a leaf at a time, bypassing the cache: what a salvage's open
    /// does, so that damage a checksum cannot show (a block that does not
    /// decode, or disagrees with the index) is found while salvage can
    /// still repair it.
    func checkEveryBlock() throws(LogStoreError) {
        if let keyDirectory {
            for leaf in keyDirectory.leaves.indices {
                for position in try readKeyPage(leaf, of: keyDirectory).blocks.indices {
                    _ = try readBlock(PagedKeyDirectory.number(leaf: leaf, position: position))
                }
            }
        }
        for number in directory.indices { _ = try readBlock(number) }
        for stored in storedIndexes { try pagedIndex(stored).checkEveryLeaf() }
    }

    /// Throws the first failure to read a block since open, if any.
    func checkReadable() throws(LogStoreError) {
        if let failure = readFailure.withLock({ $0 }) { throw failure }
    }

    /// Records that block `number` (0-based) does not hold at `slot` the
    /// record with `key`, where the index places it: damage its checksums
    /// cannot show (a block is checked against the directory's first and
    /// last keys), kept and counted as a failed read.
    func reportMisplaced(key: UInt64, block number: Int, slot: Int) {
        keep(blockDamage(number, reason: "the index places the record with key \(key) at its record \(slot + 1), which holds another record, or none"))
    }

    /// How many block reads failed since open: a reader that sees it grow
    /// while it read may have missed records, and says so.
    var failedReadCount: Int { failedReads.load(ordering: .relaxed) }

    /// Throws the first failure to read a block when a block read failed
    /// since the count was `before`.
    func checkNoReadFailed(since before: Int) throws(LogStoreError) {
        guard failedReadCount != before else { return }
        try checkReadable()
    }
}

/// Where a snapshot lies in its file and what it holds, as the tools read it.
struct SnapshotExtent {
    var index: SnapshotIndex
    /// A paged snapshot's secondary indexes, listed and not read, when its
    /// reader was asked to defer them.
    var deferredIndexes: [StoredIndexTable] = []
    /// A paged snapshot's key directory, its leaves listed and not read,
    /// when its reader was asked to read it a leaf at a time; and its data
    /// frames' bytes, as the root gives them (no more than its run's).
    var keyDirectory: PagedKeyDirectory? = nil
    var dataBytes: UInt64 = 0
    /// Its first frame.
    var start: UInt64
    /// Its index frame (format versions 2 to 4) or root (version 5).
    var offset: UInt64
    /// Where the journal after it starts.
    var tailStart: UInt64
    /// The frames besides data blocks: the index frame; or the index
    /// blocks, the catalog and the root.
    var indexFrames: Int
    /// Those frames' payloads, as stored and raw.
    var indexStoredBytes: UInt64
    var indexRawBytes: UInt64
}
