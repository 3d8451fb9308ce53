// The journal: one store file of checksummed, LZ4-compressed transaction frames.

import Foundation

/// An append-only file of transactions, each one checksummed frame.
///
/// The journal is LogStore's lowest layer that deals in transactions: each
/// ``append(_:)`` writes one frame holding a save's inserts (all values),
/// updates (changed values only) and deletes, and returns once the
/// ``Durability`` mode says the frame is safe. Opening a journal checks every
/// frame, cuts off a transaction torn by a crash (and the frames of a flush
/// a power cut interrupted, which no later frame records as durable), and
/// refuses a file damaged in the middle (FORMAT.md §6).
///
/// ```swift
/// let journal = try Journal(path: "inventory.logstore")
/// let item = journal.symbol(for: "Item"), name = journal.symbol(for: "itemName")
/// try journal.append([.insert(RecordID(entity: item, key: 1), [Field(name, .string("Chair"))])])
/// for transaction in try journal.transactions() { print(transaction.sequence, transaction.changes) }
/// journal.close()
/// ```
///
/// A `Journal` is safe to use from any thread; appends are serialized.
/// Only one read-write `Journal` can have a file open at a time, in this
/// process or any other: a second one gets `.storeLocked`.
///
/// ## Topics
/// - ``init(path:options:)``
/// - ``append(_:)``
/// - ``transactions()``
/// - ``recovery``
/// - ``close()``
public final class Journal: Sendable {
    /// The store file's path.
    public let path: String
    /// The options it was opened with.
    public let options: JournalOptions
    /// Where the file lives: the system's, or a test's that breaks on command.
    let fileSystem: any FileSystem
    /// The file header: versions, store UUID, creation time.
    public let header: FileHeader
    /// What open found at the end of the file and did about it. Log it when
    /// ``RecoveryReport/outcome`` is not `.clean`.
    public let recovery: RecoveryReport
    /// The keys that readable frames after damage that salvage cut off gave
    /// out or reserved (FORMAT.md §5.5): the object layer reserves them
    /// again, so that no object ID given out before is given to another record.
    let keysCutOff: KeyHighWater

    private let writer: JournalWriter
    /// The snapshot the file starts with, if any; replaced by a compaction.
    private let currentSnapshot: Protected<SnapshotFile?>
    /// The decoded snapshot index, until the store takes it to build its state.
    private let openedIndex: Protected<SnapshotIndex?>

    /// Opens the store file at `path`, creating it if missing (read-write only).
    ///
    /// - Throws: `.storeLocked` when another writer has it open, or when it
    ///   kept being replaced while this open tried to lock it;
    ///   `.storeReplaced`, opening to write, when a compaction or salvage
    ///   replaced it (FORMAT.md §2); `.notAStore`,
    ///   `.corruptHeader`, `.unsupportedFormatVersion` for a file this version
    ///   cannot use; `.corruptFrame` for damage with valid frames after it
    ///   (unless ``JournalOptions/recoveryMode`` is `.salvage`); `.io` when a
    ///   system call fails.
    public convenience init(path: String, options: JournalOptions = JournalOptions()) throws(LogStoreError) {
        try self.init(path: path, options: options, fileSystem: SystemFileSystem())
    }

    /// Sets the replaced mark of `file` (FORMAT.md §2) to `replaced`, and
    /// fsyncs it, unless it is so already: a compaction marks the file it
    /// has just renamed a new file over (durably), so that a writer reaching
    /// it through another name is refused; a recovered copy of a marked
    /// file is a store of its own again. The header is rewritten whole, its
    /// checksum with it; nothing else changes, so readers read on.
    static func setReplacedMark(_ replaced: Bool, in file: any FileIO) throws(LogStoreError) {
        var header = try file.read(count: FileLayout.headerSize, at: 0).withBytes { (raw) throws(LogStoreError) in try FileHeader.decode(raw, path: file.path) }
        guard header.isReplaced != replaced else { return }
        header.isReplaced = replaced
        try header.encoded().withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: 0) }
        try file.synchronize()
    }

    /// How many times a read-write open tries again when the file it
    /// locked was replaced meanwhile, before it refuses: writing through a
    /// replaced file would lose every save.
    static let replacedOpenAttempts = 10

    /// Opens the store file at `path` on `fileSystem`.
    convenience init(path: String, options: JournalOptions, fileSystem: any FileSystem) throws(LogStoreError) {
        if !fileSystem.exists(path) {
            guard options.access == .readWrite, options.createIfMissing else {
                throw SystemFile.error(ENOENT, "open", path: path)
            }
            try Journal.create(path: path, permissions: mode_t(options.filePermissions), header: FileHeader(storeID: UUID(), createdAt: Date(), version: FileLayout.createdVersion), on: fileSystem)
        }
        // The store is the file a link points to: its compactions write and
        // rename next to that file, and the link stays a link.
        let path = fileSystem.resolvingSymbolicLink(path)
        var attempts = 0
        var salvaged: RecoveryReport?
        var salvagedCopy: (any FileIO)?
        while true {
            let file: any FileIO
            if let salvagedCopy { file = salvagedCopy } else { file = try fileSystem.open(path, options.access == .readOnly ? .readOnly : .readWrite) }
            do throws(LogStoreError) {
                if options.access == .readWrite {
                    try file.lockExclusively()
                    // A compaction renames a new file over the store and then
                    // lets go of the old one's lock: a lock won on the old
                    // file, opened just before the rename, guards nothing.
                    if let named = fileSystem.identity(ofPath: path), try file.identity() != named {
                        attempts += 1
                        // Thrown with the file open: the catch below closes it.
                        guard attempts < Self.replacedOpenAttempts else {
                            throw LogStoreError(.storeLocked, "\(path) was replaced by another file after each of \(attempts) opens (another process compacting it); nothing was written; close the other writer first, or open read-only", path: path)
                        }
                        file.close()
                        continue
                    }
                    TemporaryFile.removeAbandoned(beside: path, on: fileSystem)
                }
                try self.init(file: file, options: options, fileSystem: fileSystem, salvaged: salvaged)
                return
            } catch {
                // Every way out of here closes `file`: a descriptor left open
                // would hold the store's lock until the process ends.
                defer { file.close() }
                // Salvage rewrites a store with damaged snapshot blocks, then opens it again.
                // Read-only, it reads a salvaged copy instead.
                if error.kind == .corruptSnapshot, options.recoveryMode == .salvage, salvaged == nil {
                    if options.access == .readWrite, let report = try SnapshotSalvage.replaceStore(file, on: fileSystem) {
                        salvaged = report
                        continue
                    }
                    if options.access == .readOnly, let (copy, report) = try SnapshotSalvage.salvagedCopy(of: file, on: fileSystem) {
                        (salvagedCopy, salvaged) = (copy, report)
                        continue
                    }
                }
                throw error
            }
        }
    }

    /// Opens a journal on an already opened (and, for writing, locked) file.
    /// Tests pass a file that fails on command.
    /// `salvaged` is the report of a salvage that rewrote the file before.
    init(file: any FileIO, options: JournalOptions, fileSystem: any FileSystem = SystemFileSystem(), salvaged: RecoveryReport? = nil) throws(LogStoreError) {
        let path = file.path
        var fileSize = try file.size()
        let headerBytes = try file.read(count: FileLayout.headerSize, at: 0)
        let header = try headerBytes.withBytes { (raw) throws(LogStoreError) in try FileHeader.decode(raw, path: path) }
        if options.access == .readWrite && !header.isWritableByThisVersion {
            throw LogStoreError(.unsupportedFormatVersion, "\(path) was written by format version \(header.writeVersion); this LogStore (version \(FileLayout.currentVersion)) can read it but not write it: open it read-only, or with a newer LogStore", path: path, offset: 8)
        }
        if options.access == .readWrite && header.isReplaced {
            throw LogStoreError(.storeReplaced, "\(path) is a store file that a compaction or salvage replaced: the store went on in the new file renamed over its old name, and saves here would reach no reader of it; open the store by that name; open this file read-only to read it as it was, or make a store of it with logstore-tool recover FILE --output NEW", path: path, offset: UInt64(FileLayout.replacedField))
        }

        var snapshot: (file: SnapshotFile, index: SnapshotIndex)?
        var origin = TailOrigin(file: file, deleteRuns: header.holdsDeleteRuns)
        origin.start = try header.framesStart(fileSize: fileSize, path: path)
        // Salvage looks for damage: every data block is checked at open. Otherwise
        // each is checked when first read (FORMAT.md §13.6).
        if let opened = try SnapshotFile.open(file, header: header, fileSize: fileSize, cacheCapacity: options.blockCacheCapacity ?? BlockCache.defaultCapacity,
                                              checkingDataBlocks: options.recoveryMode == .salvage) {
            // Salvage also decodes every block now, so that damage only a
            // read would find is found while salvage can repair it.
            if options.recoveryMode == .salvage { try opened.0.checkEveryBlock() }
            snapshot = opened
            origin = try TailOrigin(file: file, after: opened.0, index: opened.1, deleteRuns: header.holdsDeleteRuns)
        }
        origin.recordsDurability = header.writeVersion >= FileLayout.durableClaimVersion
        var (summary, symbols, dictionary) = try Self.scanTransactions(of: origin, limit: &fileSize, readOnly: options.access == .readOnly)

        var report = RecoveryReport.clean(frames: summary.frameCount)
        report.reservedByteCount = summary.reservedByteCount
        var keysCutOff = KeyHighWater()
        switch summary.end {
        case .clean:
            break
        case .tornTail(let offset, let byteCount, let reason):
            let outcome: RecoveryReport.Outcome = summary.unsyncedFramesAfterEnd > 0 ? .unsyncedFramesDiscarded : .tornTail
            report = RecoveryReport(outcome: outcome, frameCount: summary.frameCount, droppedOffset: offset, droppedByteCount: byteCount, reason: reason)
            if options.access == .readWrite {
                try file.truncate(to: offset)
            }
        case .damage(let offset, let frameNumber, let reason):
            guard options.recoveryMode == .salvage else {
                throw LogStoreError.damage(path: path, offset: offset, frameNumber: frameNumber, reason: reason)
            }
            report = RecoveryReport(outcome: .salvaged, frameCount: summary.frameCount, droppedOffset: offset, droppedByteCount: fileSize - offset, reason: "frame \(frameNumber): \(reason)")
            keysCutOff = try ReadableAfterDamage(file: file, limit: fileSize, after: offset, above: summary.lastSequence, symbols: symbols, dictionary: dictionary, deleteRuns: origin.deleteRuns).keys
            if options.access == .readWrite {
                report.preservedDamagePath = try Journal.preserve(file, from: offset, to: fileSize, on: fileSystem)
                try file.truncate(to: offset)
            }
        }
        // The writer records every frame kept here as durable in the frames
        // it writes (FORMAT.md §6), so they must be: a writer that died
        // under .deferredToOS may have left them in the page cache only.
        if options.access == .readWrite { try file.synchronize() }
        // A reader stops where a live writer could still cut back to after
        // a failed flush (FORMAT.md §7). Tested after the scan: a writer
        // that opens later only appends after what the scan found.
        if options.access == .readOnly, summary.durableEnd < summary.validEnd, try file.isLockedByWriter() {
            let found = summary.frameCount
            (summary, symbols, dictionary) = try origin.checkTransactions(limit: summary.durableEnd)
            report.frameCount = summary.frameCount
            report.framesNotYetDurable = found - summary.frameCount
        }

        let lastSequence = summary.lastSequence ?? origin.sequenceBefore ?? 0
        // The journal counts one past its last frame: no number follows this one.
        guard lastSequence < .max else {
            throw LogStoreError(.corruptFrame, "the last frame of \(path) is numbered \(UInt64.max), the largest number there is, so no frame can follow it; LogStore never numbers a frame so, and the file was not written by it: restore it from a backup", path: path)
        }
        self.path = path
        self.options = options
        self.fileSystem = fileSystem
        self.header = header
        if var salvaged {
            salvaged.frameCount = report.frameCount
            report = salvaged
        }
        self.recovery = report
        self.keysCutOff = keysCutOff
        self.currentSnapshot = Protected(snapshot?.file)
        self.openedIndex = Protected(snapshot?.index)
        self.writer = JournalWriter(
            origin: origin, durability: options.durability, fileSystem: fileSystem, compression: options.compression, endOffset: summary.validEnd,
            reservedEnd: options.access == .readWrite ? summary.validEnd + summary.reservedByteCount : summary.validEnd,
            preallocationSize: options.access == .readWrite ? options.preallocationSize : 0, lastSequence: lastSequence, symbols: symbols, dictionary: dictionary)
    }

    /// How many times a read-only open reads the transactions again when
    /// what it found may be a writer's work under way (``scanTransactions(of:limit:readOnly:)``).
    static let rereads = 3

    /// Scans the transactions from `origin` to `limit`, the file's size.
    ///
    /// A read-only open reads again, up to ``rereads`` times, the file's
    /// size first, when what it found may be a live writer's work rather
    /// than the file: a read that came back shorter than the file was (a
    /// writer closing cut off its reserved space, FORMAT.md §7), or damage
    /// found while a writer holds the file (a frame read while it was being
    /// written, and a frame written after it into the reserved space by
    /// the time the scan looked there, which a scan that ended at the old
    /// end of the file would not have reached). Damage that stays is damage.
    static func scanTransactions(of origin: TailOrigin, limit: inout UInt64, readOnly: Bool) throws(LogStoreError) -> (summary: ScanSummary, symbols: SymbolTable, dictionary: LZ4.PresetDictionary?) {
        var attempt = 0
        while true {
            attempt += 1
            do throws(LogStoreError) {
                let scanned = try origin.checkTransactions(limit: limit)
                guard readOnly, attempt <= rereads, case .damage = scanned.summary.end, try origin.file.isLockedByWriter() else { return scanned }
            } catch where readOnly && attempt <= rereads && error.kind == .io && error.errno == EAGAIN {
                // The file changed under the read: read it again.
            }
            limit = try origin.file.size()
        }
    }

    /// Only transactions follow the snapshot (or the header).
    static func checkKind(_ header: FrameHeader) throws(DecodeFailure) {
        guard header.kind == .transaction else {
            throw DecodeFailure("a \(header.kind) frame stands among the transactions, where only a compaction's new file may hold one")
        }
    }

    /// The snapshot the file starts with, nil when it has none.
    var snapshot: SnapshotFile? { currentSnapshot.withLock { $0 } }

    /// The bytes of transactions after the snapshot (from the first frame,
    /// in a file without one): what a compaction would fold away.
    var journalBytes: UInt64 {
        let (origin, end) = writer.tail
        return end - origin.start
    }

    /// Where a snapshot taken now would stand: the last transaction written,
    /// the names and dictionary the frames after it would rely on, and the
    /// offset where those frames will start in the current file.
    var snapshotPoint: (sequence: UInt64, names: [String], dictionary: [UInt8]?, end: UInt64) { writer.snapshotPoint }

    /// Whether the current file's transactions may hold delete runs
    /// (FORMAT.md §5.1): saves deleting consecutive keys are written as runs.
    /// Takes the writer's lock: never call it while the writer holds it.
    var holdsDeleteRuns: Bool { writer.tail.origin.deleteRuns }

    /// The current file and where its transactions end.
    var currentFile: (file: any FileIO, end: UInt64) {
        let (origin, end) = writer.tail
        return (origin.file, end)
    }

    /// Moves the journal to a compaction's new file; see
    /// ``JournalWriter/replaceFile(_:)``. `snapshot` is the new file's.
    func replaceFile(with snapshot: SnapshotFile, _ body: (_ file: any FileIO, _ end: UInt64) throws(LogStoreError) -> (TailOrigin, UInt64, LogStoreError?)) throws(LogStoreError) -> any FileIO {
        let old = try writer.replaceFile(body)
        currentSnapshot.withLock { $0 = snapshot }
        return old
    }

    /// The decoded index of the snapshot found at open, until it is taken.
    var snapshotIndex: SnapshotIndex? { openedIndex.withLock { $0 } }

    /// The decoded index of the snapshot found at open, handed over once
    /// (the store builds its state from it, then it is no longer kept).
    func takeSnapshotIndex() -> SnapshotIndex? { openedIndex.withLock { index in defer { index = nil }; return index } }

    deinit { writer.close() }

    /// The store's identity, from the header.
    public var storeID: UUID { header.storeID }

    /// The sequence number of the last transaction (0 when there is none).
    public var lastSequence: UInt64 { writer.lastSequence }

    /// What this journal has written since it was opened.
    public var statistics: JournalStatistics { writer.statistics }

    /// The capacity of the writer's buffers kept for the next write.
    var heldBufferBytes: Int { writer.heldBufferBytes }

    /// The symbol for an entity or attribute name, assigning a new one if the
    /// name has none yet. The name is written to the file with the first
    /// transaction appended after this call.
    public func symbol(for name: String) -> Symbol { writer.symbol(for: name) }

    /// The name behind a symbol, or nil if no such symbol exists.
    public func name(of symbol: Symbol) -> String? { writer.name(of: symbol) }

    /// Appends one transaction and returns its sequence number.
    ///
    /// Returns only when the durability mode's promise holds for this
    /// transaction. A write that finds the disk full fails this call only,
    /// with `.diskFull`, and leaves the file as it was. If another write or
    /// an fsync fails, this call throws it and every later call throws
    /// `.writeFailed`: the journal never acknowledges a transaction it has
    /// not written. Reopen the store to write again. So too when the
    /// store's path no longer names the file (FORMAT.md §7): this call and
    /// every later one throw `.storeReplaced`.
    ///
    /// Consecutive deletes of one entity's consecutive keys are written as
    /// one delete run in a file of format version 7 or later; a
    /// ``RecordChange/deleteRun(_:count:)`` may be appended to such a file
    /// only.
    ///
    /// - Throws: `.readOnly`, `.closed`, `.transactionTooLarge`, `.diskFull`
    ///   (nothing written), `.io` (the failing call), `.writeFailed` (later
    ///   calls), `.storeReplaced` (the file lost its name);
    ///   `.invalidArgument` for a delete run of fewer than 2 keys or past
    ///   the key limit, `.unsupportedFormatVersion` for one in an older file
    ///   or a decimal in a version 1 or 2 file (nothing written).
    @discardableResult
    public func append(_ changes: [RecordChange]) throws(LogStoreError) -> UInt64 {
        for case .deleteRun(let first, let count) in changes where count < 2 || first.key >= RecordID.keyLimit || count > RecordID.keyLimit - first.key {
            throw LogStoreError(.invalidArgument, "a delete run of \(count) keys from key \(first.key) is not one a reader accepts (FORMAT.md §5.1: at least 2 keys, the last below 2^62); nothing was written", path: path)
        }
        if !holdsDeleteRuns, changes.contains(where: { if case .deleteRun = $0 { true } else { false } }) {
            throw LogStoreError(.unsupportedFormatVersion, "\(path) is a format version \(header.readVersion) file, whose readers would take a delete run for damage; append the run's keys as deletes, or compact it first (logstore-tool compact), which rewrites it as version \(FileLayout.pagedWriteVersion)", path: path, offset: 10)
        }
        if header.readVersion < FileLayout.decimalVersion, changes.contains(where: \.holdsDecimal) {
            throw LogStoreError(.unsupportedFormatVersion, "\(path) is a format version \(header.readVersion) file, which has no decimal values and whose readers would misread one; compact it first (logstore-tool compact), which rewrites it as version \(FileLayout.createdVersion) or later", path: path, offset: 10)
        }
        return try append(changes, at: Date())
    }

    /// Appends with a given commit time; tests use it to make byte-exact files.
    @discardableResult
    func append(_ changes: some PayloadChanges, at time: Date) throws(LogStoreError) -> UInt64 {
        guard options.access == .readWrite else {
            throw LogStoreError(.readOnly, "\(path) was opened read-only; open it with access .readWrite to save", path: path)
        }
        return try writer.append(changes, at: time)
    }

    /// Writes a transaction without waiting for it to be durable; pair with
    /// ``waitUntilDurable(_:)``. The store uses it under group commit so that
    /// its own lock is not held while saves wait for a shared flush.
    ///
    /// `announced`: the caller called ``announceWrite()`` first.
    func write(_ changes: some PayloadChanges, announced: Bool = false) throws(LogStoreError) -> UInt64 {
        guard options.access == .readWrite else {
            if announced { writer.withdrawWrite() }
            throw LogStoreError(.readOnly, "\(path) was opened read-only; open it with access .readWrite to save", path: path)
        }
        return try writer.write(changes, at: Date(), announced: announced)
    }

    /// Tells a flush being gathered under group commit that a write is on
    /// its way (the caller is waiting for a lock of its own first). Follow
    /// it with `write(_:announced: true)` or ``withdrawWrite()``.
    func announceWrite() { writer.announceWrite() }

    /// Takes back an ``announceWrite()`` that no write follows.
    func withdrawWrite() { writer.withdrawWrite() }

    /// Returns once transaction `sequence` is as durable as the mode promises.
    func waitUntilDurable(_ sequence: UInt64) throws(LogStoreError) { try writer.waitUntilDurable(sequence) }

    /// Every transaction in the file, in order.
    ///
    /// Reads and decodes the file from the start; a read-only journal reads
    /// the frames that were complete when it was opened.
    public func transactions() throws(LogStoreError) -> [CommittedTransaction] {
        var all: [CommittedTransaction] = []
        try forEachTransaction { all.append($0) }
        return all
    }

    /// Calls `body` with each transaction in the file, in order, decoding one
    /// at a time.
    ///
    /// - Throws: `.closed` once the journal is closed; `.corruptFrame` when
    ///   the file changed under it; `.io` when a read fails.
    public func forEachTransaction(_ body: (CommittedTransaction) -> Void) throws(LogStoreError) {
        let (origin, end) = try writer.readableTail()
        var symbols = origin.symbols
        var decoder = PayloadDecoder(dictionary: origin.dictionary, deleteRuns: origin.deleteRuns)
        var scanner = FrameScanner(file: origin.file, limit: end)
        let summary = try scanner.scan(from: origin.start, lastSequence: origin.sequenceBefore) { (frame, stored) throws(DecodeFailure) in
            try Journal.checkKind(frame.header)
            let changes = try decoder.decodeTransaction(frame.header, stored: stored, symbols: &symbols)
            body(CommittedTransaction(sequence: frame.header.sequence, timestamp: frame.header.timestamp, changes: changes))
        }
        switch summary.end {
        case .clean: break
        case .tornTail(let offset, _, let reason), .damage(let offset, _, let reason):
            let number = summary.frameCount + 1
            throw LogStoreError.damage(path: path, offset: offset, frameNumber: number, reason: reason + " (the file changed after it was opened)")
        }
    }

    /// Closes the file and releases the lock. Further appends fail with
    /// `.closed`. Called automatically when the journal is deallocated.
    public func close() { writer.close() }

    // MARK: - Creating and salvaging

    /// Creates a store file with its header, atomically: the header goes to a
    /// temporary file that is fsynced and then linked into place, so a crash
    /// never leaves an empty or half-written file at `path`. The temporary
    /// name is removed before the directory is fsynced, so that a power cut
    /// cannot bring it back as a second name of the store.
    /// Tests call it with a fixed UUID and time to make byte-exact files.
    static func create(path: String, permissions: mode_t, header: FileHeader, on fileSystem: any FileSystem = SystemFileSystem()) throws(LogStoreError) {
        // The temporary name is this process's: two threads creating the
        // same store at once would remove and link each other's file.
        try creations.withLock { () throws(LogStoreError) in
            let temporary = TemporaryFile.creating.path(beside: path)
            // Left by an earlier process that had this ID (the open below
            // would fail on it); this process frees the name before returning.
            fileSystem.remove(temporary)
            let file = try fileSystem.open(temporary, .createExclusive(permissions: permissions))
            do throws(LogStoreError) {
                try header.encoded().withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: 0) }
                // A version 5 or later file starts its frames after the
                // anchor pages, zeros until a compaction writes one (§13.2).
                if header.framesStart > UInt64(FileLayout.headerSize) { try file.truncate(to: header.framesStart) }
                try file.synchronize()
                // false: another opener created it first; open theirs. Either way
                // the name is made durable before the file is used: the other
                // creator may not have fsynced the directory yet.
                _ = try fileSystem.link(temporary, to: path)
            } catch {
                file.close()
                fileSystem.remove(temporary)
                throw error
            }
            file.close()
            fileSystem.remove(temporary)
            try fileSystem.synchronizeDirectory(of: path)
        }
    }

    /// Creates an empty store file of format `version` (4 up to the current
    /// one) at `path`, as this code created them at that version: frames
    /// from 64 in version 4, from 0x3000 from version 5 (FORMAT.md §13.2).
    /// For the fuzz targets, which change files of every layout a store
    /// may have; a store opened on it then appends to it as to any file of
    /// that version.
    ///
    /// - Throws: `.invalidArgument` for another version; as
    ///   ``create(path:permissions:header:on:)`` otherwise.
    @_spi(Fuzzing)
    public static func createEmptyFile(at path: String, formatVersion version: UInt16) throws(LogStoreError) {
        guard (FileLayout.durableClaimVersion...FileLayout.currentVersion).contains(version) else {
            throw LogStoreError(.invalidArgument, "no empty file of format version \(version) can be created: versions \(FileLayout.durableClaimVersion) to \(FileLayout.currentVersion) can", path: path)
        }
        try create(path: path, permissions: 0o600, header: FileHeader(storeID: UUID(), createdAt: Date(), version: version))
    }

    /// Held by ``create(path:permissions:header:on:)``: one creation at a
    /// time in this process.
    private static let creations = Monitor()

    /// Copies the bytes from `offset` on to `PATH.damaged-OFFSET` (or
    /// `PATH.damaged-OFFSET-N` when an earlier salvage left that name) before
    /// salvage cuts them off, so nothing is destroyed by a repair.
    private static func preserve(_ file: any FileIO, from offset: UInt64, to end: UInt64, on fileSystem: any FileSystem) throws(LogStoreError) -> String {
        var copyPath = "\(file.path).damaged-\(offset)"
        var attempt = 1
        while fileSystem.exists(copyPath) {
            attempt += 1
            copyPath = "\(file.path).damaged-\(offset)-\(attempt)"
        }
        let copy = try fileSystem.open(copyPath, .createExclusive(permissions: 0o600))
        defer { copy.close() }
        try file.copy(offset..<end, to: copy, at: 0)
        try copy.synchronize()
        try fileSystem.synchronizeDirectory(of: copyPath)
        return copyPath
    }
}

extension LogStoreError {
    /// A damaged frame that is not an interrupted save.
    static func damage(path: String, offset: UInt64, frameNumber: Int, reason: String) -> LogStoreError {
        LogStoreError(
            .corruptFrame,
            "frame \(frameNumber) at offset \(offset) of \(path) is damaged: \(reason). This is damage, not an interrupted save; run \"logstore-tool verify \(path)\" to see it, or open with recoveryMode .salvage to keep the transactions before it (the damaged bytes are copied aside, not destroyed)",
            path: path, offset: offset, frameNumber: frameNumber)
    }
}
