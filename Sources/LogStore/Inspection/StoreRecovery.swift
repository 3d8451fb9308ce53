// Recovering a damaged store: a new file with everything before the first damage.

import Foundation

/// What ``StoreInspector/recover(path:to:)`` kept and what it lost.
///
/// Damage in the journal after the snapshot keeps every transaction before
/// it. Damage in snapshot blocks costs only those blocks' records
/// (``lostRecords``): the records of every other block are written as
/// inserts into a new journal, with their keys and the recorded model,
/// followed by every transaction after the snapshot minus its changes to
/// lost records (``droppedChanges``); references to lost records become
/// null (``nullifiedReferences``). Either way the new store never gives out
/// a key the damaged one had given out or reserved, in frames it kept or in
/// readable frames after the damage.
public struct StoreRecovery: Sendable, Hashable, Codable {
    /// The damaged store, which recovery does not change.
    public var path: String
    /// The new store.
    public var output: String
    /// Transactions after the snapshot (from the first frame, without one) kept in the new store.
    public var keptTransactions: Int
    /// The sequence number, in the damaged store, of the last transaction
    /// kept (nil when none is). A recovery of a damaged snapshot block
    /// renumbers them in the new store (``newStoreLastSequence``).
    public var lastKeptSequence: UInt64?
    /// The first damage (or interrupted save), nil when the file was whole.
    public var damage: VerificationProblem?
    /// Bytes from the damage to the end of the file, left out.
    public var lostBytes: UInt64
    /// Transactions after the damage that were still readable, but cannot be
    /// kept: what they change may rest on the damaged ones.
    public var lostTransactions: Int
    /// Their first and last sequence numbers.
    public var firstLostSequence: UInt64?
    public var lastLostSequence: UInt64?
    /// When snapshot blocks were damaged: the records of the other blocks,
    /// written into the new store as inserts (its sequence numbers start
    /// again at 1, through ``newStoreLastSequence``).
    public var snapshotRecordsKept: Int?
    /// The records of the damaged blocks (listed in ``lostRecords``).
    public var snapshotRecordsLost: Int?
    /// The last sequence number of the new store, when it was rewritten
    /// rather than copied (snapshot damage).
    public var newStoreLastSequence: UInt64?
    /// Every damaged snapshot block, first to last (``damage`` is the first).
    public var damagedBlocks: [VerificationProblem] = []
    /// The records lost with damaged snapshot blocks, by entity.
    public var lostRecords: [LostRecords] = []
    /// Changes of kept transactions that updated or deleted a lost record,
    /// left out (the rest of their transaction is kept).
    public var droppedChanges = 0
    /// Transactions after the snapshot left out because all they changed
    /// was lost records.
    public var droppedTransactions = 0
    /// References to lost records, made null (or left out of a to-many list).
    public var nullifiedReferences = 0
    /// Whether the recorded model was lost with the snapshot's index: the
    /// new store keeps every record it could read, but records no model,
    /// so it opens with the app's model (`Store(path:model:)`), not with
    /// `Store(recordedModelAt:)`.
    public var recordedModelLost = false

    /// Whether the new store holds everything the old one did.
    public var isComplete: Bool { lostBytes == 0 }
}

extension StoreInspector {
    /// Writes a new store at `output` with everything of the store at `path`
    /// that can be read, and reports what was left out. The damaged file is
    /// not changed.
    ///
    /// Damage in the journal keeps every transaction before it (those after
    /// it may rest on it). Damaged snapshot blocks lose their own records,
    /// and changes to those records after the snapshot: see ``StoreRecovery``.
    /// A damaged snapshot index is rebuilt from the blocks (format version 4).
    ///
    /// The new store keeps the old one's identity (its object IDs stay
    /// valid). It is written under a temporary name, fsynced, and linked into
    /// place only when whole, so `output` is either absent or complete.
    ///
    /// - Throws: `.invalidArgument` when `output` exists; `.corruptSnapshot`
    ///   when the snapshot's index is damaged and cannot be rebuilt from the
    ///   blocks (format versions 2 and 3, whose blocks do not repeat it, or
    ///   no whole block: restore a backup); `.io`,
    ///   `.notAStore`, `.corruptHeader`, `.unsupportedFormatVersion`.
    public static func recover(path: String, to output: String) throws(LogStoreError) -> StoreRecovery {
        // lstat: a link, even one pointing nowhere, is never written through.
        var info = stat()
        if lstat(output, &info) == 0 {
            let what = info.st_mode & S_IFMT == S_IFLNK ? "is a symbolic link, which recover never writes through" : "exists"
            throw LogStoreError(.invalidArgument, "\(output) \(what); recover writes a new file: choose another name or remove it first", path: output)
        }
        return try withFile(path) { (file, header, size) throws(LogStoreError) in
            var origin = TailOrigin(file: file, deleteRuns: header.holdsDeleteRuns)
            origin.start = try header.framesStart(fileSize: size, path: path)
            if header.snapshotIndexOffset != nil || header.snapshotRootOffset != nil {
                do throws(LogStoreError) {
                    // Reads the index, checks every block's checksum and decodes
                    // every block: damage found here is rebuilt below.
                    if let (snapshot, index) = try SnapshotFile.open(file, header: header, fileSize: size, cacheCapacity: 1 << 20) {
                        try snapshot.checkEveryBlock()
                        origin = try TailOrigin(file: file, after: snapshot, index: index, deleteRuns: header.holdsDeleteRuns)
                    }
                } catch {
                    // Every block that is whole still reads, from the index or what the blocks repeat of it.
                    if let salvage = try SnapshotSalvage(file: file, header: header, size: size), let recovery = try recoverSnapshot(salvage, to: output) {
                        return recovery
                    }
                    let why = header.readVersion < FileLayout.selfDescribingBlockVersion
                        ? "its blocks (format version \(header.readVersion)) do not repeat what it says"
                        : "no block is whole to rebuild it from"
                    throw LogStoreError(.corruptSnapshot, "\(path) cannot be recovered: the index of its snapshot, which names the entity and slots of every record saved before its last compaction, is damaged (\(error.message)), and \(why); restore the file from a backup", path: path, offset: error.offset, frameNumber: error.frameNumber, details: [error])
                }
            }
            let checked = try origin.checkTransactions(limit: size)
            let kept = checked.summary
            var reservation: KeyHighWater?
            var recovery = StoreRecovery(
                path: path, output: output, keptTransactions: kept.frameCount, lastKeptSequence: kept.lastSequence ?? origin.sequenceBefore,
                lostBytes: kept.unreadableBytes(fileSize: size), lostTransactions: 0)
            switch kept.end {
            case .clean:
                break
            case .tornTail(let offset, let count, let reason):
                recovery.damage = VerificationProblem(offset: offset, frameNumber: kept.frameCount + 1, message: "the last \(count) bytes are an interrupted save, never acknowledged: \(reason)")
            case .damage(let offset, let number, let reason):
                recovery.damage = VerificationProblem(offset: offset, frameNumber: number, message: reason)
                let readable = try ReadableAfterDamage(file: file, limit: size, after: offset, above: recovery.lastKeptSequence, symbols: checked.symbols, dictionary: checked.dictionary, deleteRuns: origin.deleteRuns)
                recovery.lostTransactions = readable.count
                recovery.firstLostSequence = readable.firstSequence
                recovery.lastLostSequence = readable.lastSequence
                reservation = readable.keys
            }
            try writeCopy(of: file, through: kept.validEnd, to: output, reserving: reservation)
            return recovery
        }
    }

    /// Writes the new store for `salvage`, and reports it; nil when every
    /// block of the snapshot is whole.
    private static func recoverSnapshot(_ salvage: SnapshotSalvage, to output: String) throws(LogStoreError) -> StoreRecovery? {
        let temporary = TemporaryFile.recovering.path(beside: output)
        SystemFileSystem().remove(temporary)
        defer { SystemFileSystem().remove(temporary) }
        guard let outcome = try salvage.write(to: temporary) else { return nil }
        try publish(temporary, as: output)
        var recovery = StoreRecovery(
            path: salvage.file.path, output: output, keptTransactions: outcome.keptTransactions,
            lastKeptSequence: outcome.keptTransactions > 0 ? outcome.tail.lastSequence : nil, damage: outcome.damagedBlocks.first,
            lostBytes: outcome.damagedBytes + outcome.tail.unreadableBytes(fileSize: salvage.size), lostTransactions: outcome.unreadable.count)
        recovery.firstLostSequence = outcome.unreadable.firstSequence
        recovery.lastLostSequence = outcome.unreadable.lastSequence
        recovery.snapshotRecordsKept = outcome.keptRecords
        recovery.snapshotRecordsLost = outcome.lostRecordCount
        recovery.newStoreLastSequence = outcome.newLastSequence
        recovery.damagedBlocks = outcome.damagedBlocks
        recovery.lostRecords = outcome.lostRecords
        recovery.droppedChanges = outcome.droppedChanges
        recovery.droppedTransactions = outcome.droppedTransactions
        recovery.nullifiedReferences = outcome.nullifiedReferences
        recovery.recordedModelLost = outcome.modelLost
        return recovery
    }

    /// Copies the first `end` bytes of `file` to a new file at `output`,
    /// durably, followed by a reservation of the keys `reserving` counts
    /// (given out by frames after the damage, which are not copied).
    private static func writeCopy(of file: SystemFile, through end: UInt64, to output: String, reserving keys: KeyHighWater?) throws(LogStoreError) {
        let temporary = TemporaryFile.recovering.path(beside: output)
        let copy = try SystemFile(path: temporary, mode: .createExclusive(permissions: 0o600))
        defer {
            copy.close()
            SystemFileSystem().remove(temporary)
        }
        try file.copy(0..<end, to: copy, at: 0)
        // A copy of a file a compaction replaced is a store of its own.
        try Journal.setReplacedMark(false, in: copy)
        try copy.synchronize()
        if let keys {
            let journal = try Journal(path: temporary, options: JournalOptions(createIfMissing: false, compaction: .manual))
            defer { journal.close() }
            if let reservation = keys.reservation(in: journal) { _ = try journal.append([reservation]) }
        }
        try publish(temporary, as: output)
    }

    /// Gives the finished file at `temporary` its name, durably. A link,
    /// unlike a rename, never replaces a file that appeared meanwhile. The
    /// temporary name goes before the directory fsync, as at store
    /// creation, so that no crash leaves it as a second name of the store.
    private static func publish(_ temporary: String, as output: String) throws(LogStoreError) {
        let fileSystem = SystemFileSystem()
        guard try fileSystem.link(temporary, to: output) else {
            throw LogStoreError(.invalidArgument, "\(output) appeared while recover wrote it; nothing was replaced: choose another name", path: output)
        }
        fileSystem.remove(temporary)
        try fileSystem.synchronizeDirectory(of: output)
    }
}
