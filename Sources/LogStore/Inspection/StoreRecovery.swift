// Recovering a damaged store: a new file with everything before the first damage.

import Foundation

/// What ``StoreInspector/recover(path:to:)`` kept and what it lost.
public struct StoreRecovery: Sendable, Hashable, Codable {
    /// The damaged store, which recovery does not change.
    public var path: String
    /// The new store.
    public var output: String
    /// Transactions after the snapshot (after the header, without one) kept in the new store.
    public var keptTransactions: Int
    /// The last sequence number the new store holds (nil when it holds none).
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

    /// Whether the new store holds everything the old one did.
    public var isComplete: Bool { lostBytes == 0 }
}

extension StoreInspector {
    /// Writes a new store at `output` with every transaction that can be
    /// read before the first damage of the store at `path`, and reports
    /// what was left out. The damaged file is not changed.
    ///
    /// The new store keeps the old one's identity (its object IDs stay
    /// valid). It is written under a temporary name, fsynced, and linked into
    /// place only when whole, so `output` is either absent or complete.
    ///
    /// - Throws: `.invalidArgument` when `output` exists; `.corruptSnapshot`
    ///   when the snapshot itself is damaged (all records live in it, so no
    ///   usable store precedes the damage: restore a backup); `.io`,
    ///   `.notAStore`, `.corruptHeader`, `.unsupportedFormatVersion`.
    public static func recover(path: String, to output: String) throws(LogStoreError) -> StoreRecovery {
        guard !SystemFile.exists(output) else {
            throw LogStoreError(.invalidArgument, "\(output) exists; recover writes a new file: choose another name or remove it first", path: output)
        }
        return try withFile(path) { (file, header, size) throws(LogStoreError) in
            var origin = TailOrigin(file: file)
            if let indexOffset = header.snapshotIndexOffset {
                do throws(LogStoreError) {
                    // Reads the index and checks every block's checksum.
                    let (snapshot, index) = try SnapshotFile.open(file, indexOffset: indexOffset, fileSize: size, cacheCapacity: 1 << 20)
                    origin = try TailOrigin(file: file, after: snapshot, index: index)
                } catch {
                    throw LogStoreError(.corruptSnapshot, "\(path) cannot be recovered: its snapshot, which holds every record saved before its last compaction, is damaged (\(error.message)). Nothing usable comes before that damage; restore the file from a backup", path: path, offset: error.offset, frameNumber: error.frameNumber, details: [error])
                }
            }
            let kept = try origin.checkTransactions(limit: size).summary
            var recovery = StoreRecovery(
                path: path, output: output, keptTransactions: kept.frameCount, lastKeptSequence: kept.lastSequence ?? origin.sequenceBefore,
                lostBytes: size - kept.validEnd, lostTransactions: 0)
            switch kept.end {
            case .clean:
                break
            case .tornTail(let offset, let count, let reason):
                recovery.damage = VerificationProblem(offset: offset, frameNumber: kept.frameCount + 1, message: "the last \(count) bytes are an interrupted save, never acknowledged: \(reason)")
            case .damage(let offset, let number, let reason):
                recovery.damage = VerificationProblem(offset: offset, frameNumber: number, message: reason)
                var scanner = FrameScanner(file: file, limit: size)
                try countReadable(after: offset, above: recovery.lastKeptSequence, in: &scanner, into: &recovery)
            }
            try writeCopy(of: file, through: kept.validEnd, to: output)
            return recovery
        }
    }

    /// Counts the valid transactions after the damage at `offset`.
    private static func countReadable(after offset: UInt64, above sequence: UInt64?, in scanner: inout FrameScanner, into recovery: inout StoreRecovery) throws(LogStoreError) {
        var position = offset
        while let next = try scanner.nextValidFrame(after: position, sequenceAbove: sequence) {
            let run = try scanner.scan(from: next) { _, _ in }
            recovery.lostTransactions += run.frameCount
            recovery.firstLostSequence = recovery.firstLostSequence ?? run.firstSequence
            recovery.lastLostSequence = run.lastSequence ?? recovery.lastLostSequence
            guard case .damage(let offset, _, _) = run.end else { return }
            position = offset
        }
    }

    /// Copies the first `end` bytes of `file` to a new file at `output`, durably.
    private static func writeCopy(of file: SystemFile, through end: UInt64, to output: String) throws(LogStoreError) {
        let temporary = "\(output).recovering-\(getpid())"
        let copy = try SystemFile(path: temporary, mode: .createExclusive(permissions: 0o600))
        defer {
            copy.close()
            unlink(temporary)
        }
        try file.copy(0..<end, to: copy, at: 0)
        try copy.synchronize()
        // link, unlike rename, never replaces a file that appeared meanwhile.
        guard link(temporary, output) == 0 else { throw SystemFile.error(errno, "link", path: output) }
        try SystemFile.synchronizeDirectory(of: output)
    }
}
