// Compaction: the journal folded into a new snapshot, written next to the
// store while it keeps working, then renamed over it.

import Foundation
import Synchronization

/// What a finished compaction did.
public struct CompactionReport: Sendable, Hashable {
    /// The last transaction the new snapshot includes.
    public var sequence: UInt64
    /// Live records written into it.
    public var records: Int
    /// Their raw size, in bytes.
    public var rawBytes: UInt64
    /// The file's size before the compaction.
    public var bytesBefore: UInt64
    /// The new file's size when it replaced the old one.
    public var bytesAfter: UInt64
    /// Transactions saved while the snapshot was written, copied after it.
    public var transactionsCopied: Int
    /// How long it took in all.
    public var duration: Duration
    /// How long saves waited while the store switched to the new file.
    public var pauseDuration: Duration
}

/// Encodes the durations as seconds (`seconds`, `pauseSeconds`), the form
/// `logstore-tool compact --json` prints and scripts read.
extension CompactionReport: Encodable {
    private enum CodingKeys: String, CodingKey {
        case sequence, records, rawBytes, bytesBefore, bytesAfter, transactionsCopied, seconds, pauseSeconds
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(records, forKey: .records)
        try container.encode(rawBytes, forKey: .rawBytes)
        try container.encode(bytesBefore, forKey: .bytesBefore)
        try container.encode(bytesAfter, forKey: .bytesAfter)
        try container.encode(transactionsCopied, forKey: .transactionsCopied)
        try container.encode(Self.seconds(duration), forKey: .seconds)
        try container.encode(Self.seconds(pauseDuration), forKey: .pauseSeconds)
    }

    /// `duration` in seconds.
    public static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The stages of a compaction, in order, as its progress reports them.
public enum CompactionStage: Sendable, Hashable {
    /// Writing the snapshot of the live records into the new file.
    case writingSnapshot
    /// Copying transactions saved meanwhile, with saves still going on.
    case copyingJournal
    /// Saves are paused: copying the last transactions, then fsyncing the new file.
    case synchronizing
    /// The new file is durable and about to be renamed over the store.
    case renaming
    /// Renamed and switched: the store runs on the new file.
    case finished
}

/// One compaction at a time per store, the automatic policy's state, and
/// the way `close` stops a compaction under way.
final class CompactionCoordinator: Sendable {
    /// Held for a whole compaction.
    let gate = Monitor()
    let isClosing = Atomic<Bool>(false)
    /// A background compaction was started and has not finished.
    let isScheduled = Atomic<Bool>(false)
    /// After an automatic compaction failed part way, the journal size to
    /// wait for before trying again (so a failing disk is not hit on every save).
    let retryAbove = Atomic<UInt64>(0)
    let lastError = Protected<LogStoreError?>(nil)

    /// Stops compactions: the one under way gives up at its next step, and
    /// none starts after. Returns once none runs.
    func close() {
        isClosing.store(true, ordering: .relaxed)
        gate.withLock {}
    }
}

/// What a compaction needs before it starts.
enum Compaction {
    /// The free space a compaction asks for before it starts, for a store
    /// whose live records take `liveBytes` raw: room for the new file, and
    /// 1 MiB for the transactions saved while it is written (which also
    /// leaves saves some room once it is done). The new file holds the
    /// records in blocks compressed one by one (LZ4 grows none by more than
    /// a few bytes in a thousand) and, in its index, every indexed value
    /// again: measured, from half the raw size (no index, text that
    /// compresses) to twice it (small records that are mostly an indexed
    /// string), so the estimate is 2.25 times the raw size. Records with
    /// several indexed attributes can need more; a compaction that finds
    /// the disk full while writing still stops and leaves the store as it was.
    static func requiredFreeSpace(liveBytes: Int) -> UInt64 {
        let live = UInt64(max(0, liveBytes))
        return live * 9 / 4 + (1 << 20)
    }
}

extension Store {
    /// Folds the journal into a new snapshot of the live records, so that
    /// opening the store reads the snapshot instead of replaying history.
    ///
    /// Saves and fetches go on while the snapshot is written into a new file
    /// next to the store; transactions saved meanwhile are copied after it,
    /// and saves pause only while the last few are copied, the new file is
    /// fsynced, renamed over the store and the directory fsynced. A crash at
    /// any point leaves the old file or the new one, each whole, holding
    /// every acknowledged save (FORMAT.md §11.5). Fetches that started before
    /// keep reading what they started with.
    ///
    /// Memory stays bounded: records are streamed, one block at a time.
    /// Only one compaction runs at a time; a second call waits for it.
    ///
    /// Before it starts, it checks that the disk has room for the new file
    /// (2.25 times the raw size of the live records, plus 1 MiB for saves
    /// made meanwhile): a compaction that would fill the disk, and leave
    /// saves failing, does not start.
    ///
    /// - Parameter progress: called from the compacting thread as it goes.
    /// - Throws: `.readOnly`; `.diskFull` when the disk has too little free
    ///   space (nothing was written; the message says how much it needs),
    ///   or fills up while the new file is written (it is removed);
    ///   `.closed` when the store closes meanwhile; `.storeReplaced` when
    ///   the store's path no longer names its file (nothing is renamed);
    ///   `.io` when writing the new file fails (it is removed, and the store
    ///   goes on in the old one). After the rename, a failed directory fsync
    ///   is thrown and stops writes (`.writeFailed` from then on), as a
    ///   failed save's fsync does; a failure to mark the old file as
    ///   replaced (FORMAT.md §11.5) is thrown as `.io`, the compaction done.
    @discardableResult
    public func compact(progress: ((CompactionStage, CompactionProgress) -> Void)? = nil) throws(LogStoreError) -> CompactionReport {
        do {
            return try compactOnce(progress: progress)
        } catch where error.isOutOfSpace && error.path == TemporaryFile.compacting.path(beside: path) {
            // Only the new file's writes name it; the store is untouched then.
            throw LogStoreError(.diskFull, "the disk holding \(path) filled up while its compaction wrote the new file; the compaction stopped, removed that file, and the store goes on as it was. Free some space, then compact again", path: path, errno: error.errno, details: [error])
        }
    }

    private func compactOnce(progress: ((CompactionStage, CompactionProgress) -> Void)?) throws(LogStoreError) -> CompactionReport {
        guard journal.options.access == .readWrite else {
            throw LogStoreError(.readOnly, "\(path) was opened read-only; open it read-write to compact it", path: path)
        }
        compactions.gate.lock()
        defer { compactions.gate.unlock() }
        let started = ContinuousClock.now
        func checkOpen() throws(LogStoreError) {
            if compactions.isClosing.load(ordering: .relaxed) {
                throw LogStoreError(.closed, "\(path) was closed during its compaction, which stopped; the store is as it was", path: path)
            }
        }
        try checkOpen()
        try journal.fileSystem.checkStillNamed(journal.currentFile.file)
        try checkFreeSpaceForCompaction(liveBytes: state.withLock { $0.liveBytesEstimate })
        let bytesBefore = journal.currentFile.end

        // 1. The state at the last transaction, and what the frames after it
        //    rely on. Saves wait only for this copy-on-write snapshot.
        let (written, point) = writeLock.withLock {
            waitUntilEveryWrittenSaveApplied()
            return (state.withLock { $0 }, journal.snapshotPoint)
        }

        // 2. The new file, locked before its rename can make it visible.
        let fileSystem = journal.fileSystem
        let temporary = TemporaryFile.compacting.path(beside: path)
        fileSystem.remove(temporary)
        // Owner-only until it takes the store's own mode, owner, group and
        // extended attributes: the file that replaces the store is open to
        // whoever the store was, whichever user compacts it.
        let file = try fileSystem.open(temporary, .createExclusive(permissions: 0o600))
        var renamed = false
        defer {
            if !renamed {
                file.close()
                fileSystem.remove(temporary)
            }
        }
        try fileSystem.copyOwnership(from: journal.currentFile.file, to: file)
        try file.lockExclusively()

        let format = journal.options.snapshotFormat
        let context = written.blockContext(sequence: point.sequence, symbols: point.names)
        var writer = SnapshotWriter(file: file, format: format, compression: journal.options.compression, context: context, blockSize: SnapshotWriter.dataBlockSize(journal.options.snapshotBlockSize, repeating: context),
                                    indexBlockSize: journal.options.snapshotIndexBlockSize, time: Date(), totalRecords: written.tables.reduce(0) { $0 + $1.count })
        progress?(.writingSnapshot, writer.progress)
        var stopped: LogStoreError?
        try written.write(to: &writer) { current in
            if stopped == nil, compactions.isClosing.load(ordering: .relaxed) { stopped = LogStoreError(.closed, "\(path) was closed during its compaction, which stopped; the store is as it was", path: path) }
            progress?(.writingSnapshot, current)
        }
        if let stopped { throw stopped }
        let schema = [UInt8](storedSchema.encoded()), indexes = written.indexSections(), pointers = written.pointerSections()
        // The indexes are read from the snapshot's leaves: one that failed
        // to read would leave its entries out of the new snapshot.
        try written.tables.first?.snapshot?.checkReadable()
        let (snapshotOffset, tailStart) = switch format {
        case .indexFrame: try writer.finish(header: journal.header, schema: schema, dictionary: point.dictionary, symbols: point.names, indexes: indexes, pointers: pointers)
        case .paged, .pagedVersion5: try writer.finishPaged(header: journal.header, schema: schema, dictionary: point.dictionary, symbols: point.names, indexes: indexes, pointers: pointers)
        }
        // Read back what was written, checksums and all, before trusting it:
        // the header (a rename of a file whose header did not land whole
        // would leave a store that cannot be opened), then the snapshot.
        let headerBack = try file.read(count: FileLayout.headerSize, at: 0)
        let newHeader = try headerBack.withBytes { (raw) throws(LogStoreError) in try FileHeader.decode(raw, path: temporary) }
        guard (newHeader.snapshotIndexOffset ?? newHeader.snapshotRootOffset) == snapshotOffset, newHeader.storeID == journal.header.storeID,
              let (snapshot, index) = try SnapshotFile.open(file, header: newHeader, fileSize: tailStart, cacheCapacity: journal.options.blockCacheCapacity ?? BlockCache.defaultCapacity,
                                                            readingWholeIndexes: false) else {
            throw LogStoreError(.io, "the header of \(temporary) does not read back as written; the compaction stopped and the store goes on in \(path)", path: temporary)
        }
        let origin = try TailOrigin(file: file, after: snapshot, index: index, deleteRuns: newHeader.holdsDeleteRuns)
        // The read-back located each entity's records (a paged snapshot's),
        // or listed them (an index frame's): exactly the keys written, in
        // order, which the store reads them by once it switches. Compared
        // by a digest of each side's keys in order, so as not to hold them.
        let failedBefore = written.tables.first?.snapshot?.failedReadCount ?? 0
        for entity in model.entities {
            let section = index.entities[entity.index]
            var writtenKeys = KeySequenceDigest(), readBack = KeySequenceDigest()
            written.tables[entity.index].forEachKey { writtenKeys.add($0) }
            if let keys = section.inSnapshot {
                keys.forEachRun(in: snapshot) { _, _, run in for position in 0..<run.count { readBack.add(run[position]) } }
            } else {
                for key in section.keys { readBack.add(key) }
            }
            guard writtenKeys == readBack else {
                throw LogStoreError(.io, "the snapshot \(temporary) was written with \(writtenKeys.count) records of \(entity.name) but reads back with \(readBack.count), or other keys; the compaction stopped and the store goes on in \(path)", path: temporary, entity: entity.name)
            }
        }
        try written.tables.first?.snapshot?.checkNoReadFailed(since: failedBefore)
        try checkOpen()

        // 3. Transactions saved meanwhile, copied while saves go on.
        var copiedFrom = point.end, copiedTo = tailStart
        func copyFrames(from old: any FileIO, to end: UInt64) throws(LogStoreError) {
            // A failed flush cuts the journal back to its last fsync, which
            // may drop frames already copied: the new file must not keep them.
            guard end >= copiedFrom else {
                throw LogStoreError(.io, "\(path) was cut back to \(end) bytes after a failed write while its compaction had copied it up to \(copiedFrom); the compaction stopped and the store goes on in \(path)", path: path)
            }
            while copiedFrom < end {
                let chunk = try old.read(count: Int(min(end - copiedFrom, 4 << 20)), at: copiedFrom)
                guard !chunk.isEmpty else { throw LogStoreError(.io, "\(path) ended at \(copiedFrom) while its compaction copied it up to \(end)", path: path) }
                try chunk.withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: copiedTo) }
                copiedFrom += UInt64(chunk.count)
                copiedTo += UInt64(chunk.count)
            }
        }
        progress?(.copyingJournal, writer.progress)
        for _ in 0..<4 {
            let (old, end) = journal.currentFile
            guard end > copiedFrom, end - copiedFrom > 256 << 10 else { break }
            try copyFrames(from: old, to: end)
        }
        try checkOpen()

        // 4. Saves pause: the last frames, fsync, rename, directory fsync.
        let pauseStarted = ContinuousClock.now
        var directoryFailure: LogStoreError?
        // Asked before the writer's lock is taken: the file's version, fixed while it is the store.
        let oldHoldsDeleteRuns = journal.holdsDeleteRuns
        let oldFile = try journal.replaceFile(with: snapshot) { (old, end) throws(LogStoreError) -> (TailOrigin, UInt64, LogStoreError?) in
            progress?(.synchronizing, writer.progress)
            try copyFrames(from: old, to: end)
            // The saves made meanwhile are copied as they are: into a file
            // of a version without delete runs (tests write older versions),
            // one holding a run would be damage, so they are read first.
            if oldHoldsDeleteRuns, !origin.deleteRuns, case .damage(_, _, let reason) = try origin.checkTransactions(limit: copiedTo).summary.end {
                throw LogStoreError(.unsupportedFormatVersion, "a save made during the compaction of \(path) does not fit the format version \(format.fileVersion) file it was writing (\(reason)): a delete run needs version \(FileLayout.deleteRunVersion); the compaction stopped and the store goes on as it was", path: path)
            }
            try file.synchronize()
            // A rename over a name the store lost would make a second store.
            try fileSystem.checkStillNamed(old)
            progress?(.renaming, writer.progress)
            try fileSystem.rename(temporary, to: path)
            renamed = true
            file.didMove(to: path)
            snapshot.didMove(to: path)
            // From here on the store is the new file, whatever happens: the
            // old one is gone from the directory. If the rename cannot be
            // made durable, neither can any save: the journal refuses them.
            do throws(LogStoreError) { try fileSystem.synchronizeDirectory(of: path) } catch { directoryFailure = error }
            return (origin, copiedTo, directoryFailure)
        }
        let pause = ContinuousClock.now - pauseStarted
        // Once the rename is durable, the old file is marked before its lock
        // goes, so a writer reaching it through a hard link is refused rather
        // than saving where no reader of the store looks. Only then: should
        // the rename be lost to a power cut, the old file is the store again.
        var markFailure: LogStoreError?
        if directoryFailure == nil {
            do throws(LogStoreError) { try Journal.setReplacedMark(true, in: oldFile) } catch { markFailure = error }
        }
        oldFile.close()

        // 5. Readers move: records unchanged since the snapshot are read from
        //    it from now on, and their copies in memory are freed.
        state.withLock { $0.relocate(into: snapshot, index: index, from: written, sections: indexes) }
        if let directoryFailure { throw directoryFailure }
        if let markFailure {
            throw LogStoreError(.io, "\(path) was compacted and the store goes on in the new file, but the old file could not be marked as replaced (\(markFailure.message)): a writer reaching the old file through another name of it (a hard link) would not be refused. Remove other names of the store file", path: path, errno: markFailure.errno, details: [markFailure])
        }
        progress?(.finished, writer.progress)
        return CompactionReport(
            sequence: point.sequence, records: writer.progress.records, rawBytes: writer.progress.rawBytes,
            bytesBefore: bytesBefore, bytesAfter: copiedTo, transactionsCopied: Int(journal.lastSequence - point.sequence),
            duration: ContinuousClock.now - started, pauseDuration: pause)
    }

    /// Throws `.diskFull` when the disk holding the store has less free
    /// space than ``Compaction/requiredFreeSpace(liveBytes:)`` asks for. A
    /// file system that cannot tell its free space is not refused: a full
    /// disk met while writing still stops the compaction cleanly.
    private func checkFreeSpaceForCompaction(liveBytes: Int) throws(LogStoreError) {
        let needed = Compaction.requiredFreeSpace(liveBytes: liveBytes)
        guard let free = journal.fileSystem.freeSpace(at: path), free < needed else { return }
        throw LogStoreError(.diskFull, "compacting \(path) needs about \(needed) bytes free on its disk for the new file, and \(free) are free; the compaction did not start and the store goes on as it is. Free some space, then compact again", path: path)
    }

    /// The error of the last automatic compaction that failed or did not
    /// start, if any: `.diskFull` when the disk had too little free space
    /// for it (see ``compact(progress:)``). Nil again once one succeeds.
    public var lastCompactionError: LogStoreError? { compactions.lastError.withLock { $0 } }

    /// Whether the store's ``CompactionPolicy`` would compact it now; always
    /// false under `.manual`.
    public var isCompactionDue: Bool {
        journal.options.compaction.isDue(journalBytes: journal.journalBytes, liveBytes: state.withLock { $0.liveBytesEstimate })
    }

    /// Starts a compaction on a background thread when the policy says the
    /// journal has grown enough; called after each save.
    ///
    /// One that would not fit in the free space does not start, and says so
    /// in ``lastCompactionError``; each later save checks again (a
    /// `statvfs`, no thread), so it starts once space is free. One that
    /// failed after it started is tried again once the journal doubled, so
    /// that a failing disk is not hit on every save.
    func compactInBackgroundIfDue() {
        let policy = journal.options.compaction
        guard policy != .manual, journal.options.access == .readWrite, !compactions.isScheduled.load(ordering: .relaxed) else { return }
        let journalBytes = journal.journalBytes
        let liveBytes = state.withLock { $0.liveBytesEstimate }
        guard journalBytes > compactions.retryAbove.load(ordering: .relaxed), policy.isDue(journalBytes: journalBytes, liveBytes: liveBytes) else { return }
        do throws(LogStoreError) {
            try checkFreeSpaceForCompaction(liveBytes: liveBytes)
        } catch {
            compactions.lastError.withLock { $0 = error }
            return
        }
        guard compactions.isScheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        Thread.detachNewThread { [self] in
            defer { compactions.isScheduled.store(false, ordering: .relaxed) }
            do throws(LogStoreError) {
                try compact()
                compactions.lastError.withLock { $0 = nil }
                compactions.retryAbove.store(0, ordering: .relaxed)
            } catch {
                guard error.kind != .closed else { return }
                compactions.lastError.withLock { $0 = error }
                compactions.retryAbove.store(journalBytes * 2, ordering: .relaxed)
            }
        }
    }
}

