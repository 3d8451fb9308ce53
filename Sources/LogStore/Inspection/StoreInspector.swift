// The read-only inspection API behind logstore-tool's info and verify.

import Foundation

/// Facts about a store file, gathered without changing it.
public struct StoreInfo: Sendable, Hashable, Codable {
    public var path: String
    public var writeVersion: Int
    public var readVersion: Int
    public var storeID: UUID
    public var createdAt: Date
    public var fileSize: UInt64
    /// Valid transaction frames.
    public var frameCount: Int
    public var firstSequence: UInt64?
    public var lastSequence: UInt64?
    public var lastCommitAt: Date?
    /// Payload bytes as stored (compressed where it helped).
    public var storedPayloadBytes: UInt64
    /// Payload bytes before compression.
    public var rawPayloadBytes: UInt64
    /// Bytes of the valid transactions after the snapshot (from the first
    /// frame in a file without one): what a compaction would fold away.
    public var journalBytes: UInt64
    /// Bytes after the last valid frame: an interrupted save (cut off at the
    /// next read-write open) or, when `damage` is set, damage.
    public var unreadableTailBytes: UInt64
    /// Zero bytes after the last valid frame: space a writer reserved for
    /// its next saves (it is open, or did not close; FORMAT.md §7). Not
    /// counted in ``unreadableTailBytes``.
    public var reservedBytes: UInt64 = 0
    /// The first damage, if the file has any.
    public var damage: String?
    /// The snapshot the file starts with, if it has one.
    public var snapshot: SnapshotInfo?
    /// Whether a compaction or a salvage renamed a new file over this one
    /// (FORMAT.md §2): the store went on there, and this file can only be
    /// read, or made a store of its own with ``StoreInspector/recover(path:to:)``.
    public var isReplaced = false

    /// Raw payload bytes per stored payload byte (1 when nothing compressed).
    public var compressionRatio: Double {
        storedPayloadBytes == 0 ? 1 : Double(rawPayloadBytes) / Double(storedPayloadBytes)
    }
}

/// Facts about a store file's snapshot (FORMAT.md §11).
public struct SnapshotInfo: Sendable, Hashable, Codable {
    /// The last transaction it includes: history before it is folded away.
    public var sequence: UInt64
    /// Live records it holds, per entity.
    public var records: [String: Int]
    /// Its blocks (LZ4-compressed frames of sorted records).
    public var blocks: Int
    /// Its size in the file, header and index included.
    public var storedBytes: UInt64
    /// Its records' raw (uncompressed) size.
    public var rawBytes: UInt64
    /// Its index's payloads as stored, and raw: the part of a snapshot
    /// that grows with the records. In format version 4 it is one frame,
    /// which must fit 256 MiB; from version 5 on, index blocks of about
    /// 16 KiB, a catalog and a root (FORMAT.md §13).
    public var indexStoredBytes: UInt64
    public var indexRawBytes: UInt64
    /// The frames holding its index: 1 in format version 4, else its index
    /// blocks, catalog and root.
    public var indexFrames: Int
}

/// One problem ``StoreInspector/verify(path:)`` found.
public struct VerificationProblem: Sendable, Hashable, Codable {
    /// Where the damaged frame starts. For a disagreement between records,
    /// relationship pointers and indexes, the snapshot index's offset (which
    /// carries pointers and indexes), or 0 in a file without a snapshot.
    public var offset: UInt64
    /// Its ordinal among the frames (1 for the first); 0 for a disagreement
    /// between records, pointers and indexes.
    public var frameNumber: Int
    /// What is wrong.
    public var message: String
}

/// The result of checking every frame of a store.
public struct VerificationReport: Sendable, Hashable, Codable {
    public var path: String
    /// Frames that passed every check.
    public var validFrames: Int
    /// Bytes checked, header included.
    public var bytesChecked: UInt64
    /// Damage found, in file order. Empty for a good file.
    public var problems: [VerificationProblem]
    /// Facts worth knowing that are not damage, such as an interrupted save at the end.
    public var notes: [String]
    /// An interrupted save at the end of the file: not damage (it was never
    /// acknowledged, and the next read-write open cuts it off), but bytes
    /// that do not read.
    public var interruptedSave: VerificationProblem?

    /// Whether the file passed.
    public var isValid: Bool { problems.isEmpty }
}

/// Reads a store file without locking or changing it, for tools.
///
/// Safe to run on a store another process is writing: it sees the frames
/// complete when it read them, and a frame still being appended shows as
/// an unreadable tail.
public enum StoreInspector {
    /// The header, frame counts, sizes and compression of the file at `path`.
    ///
    /// - Throws: `.io`, `.notAStore`, `.corruptHeader`, `.unsupportedFormatVersion`.
    public static func info(path: String) throws(LogStoreError) -> StoreInfo {
        try withFile(path, rereadingIf: { $0.damage != nil }) { (file, header, size) throws(LogStoreError) in
            var start = try header.framesStart(fileSize: size, path: path)
            var snapshot: SnapshotInfo?
            var snapshotSequence: UInt64?
            var snapshotDamage: String?
            do throws(LogStoreError) {
                if let extent = try SnapshotFile.read(in: file, header: header, fileSize: size) {
                    let index = extent.index
                    start = extent.tailStart
                    snapshotSequence = index.sequence
                    snapshot = SnapshotInfo(
                        sequence: index.sequence, records: Dictionary(uniqueKeysWithValues: index.entities.map { ($0.name, $0.keys.count) }),
                        blocks: index.blocks.count, storedBytes: start, rawBytes: index.blocks.reduce(0) { $0 + UInt64($1.rawSize) },
                        indexStoredBytes: extent.indexStoredBytes, indexRawBytes: extent.indexRawBytes, indexFrames: extent.indexFrames)
                }
            } catch {
                snapshotDamage = error.message
                start = size
            }
            var scanner = FrameScanner(file: file, limit: size, allowsReservedSpace: true)
            let summary = try scanner.scan(from: start, lastSequence: snapshotSequence) { _, _ in }
            var info = StoreInfo(
                path: path, writeVersion: Int(header.writeVersion), readVersion: Int(header.readVersion),
                storeID: header.storeID, createdAt: header.createdAt, fileSize: size,
                frameCount: summary.frameCount, firstSequence: summary.firstSequence, lastSequence: summary.lastSequence,
                lastCommitAt: summary.lastTimestampMicroseconds.map { Date(timeIntervalSince1970: TimeInterval($0) / 1_000_000) },
                storedPayloadBytes: summary.storedPayloadBytes, rawPayloadBytes: summary.rawPayloadBytes,
                journalBytes: summary.validEnd - start, unreadableTailBytes: summary.unreadableBytes(fileSize: size))
            info.reservedBytes = summary.reservedByteCount
            info.isReplaced = header.isReplaced
            if case .damage(let offset, let number, let reason) = summary.end {
                info.damage = "frame \(number) at offset \(offset): \(reason)"
            }
            info.snapshot = snapshot
            info.damage = snapshotDamage ?? info.damage
            return info
        }
    }

    /// Checks every frame: checksum, sizes, sequence order, and that each
    /// payload decompresses and decodes. Continues past damage to list every
    /// problem, resuming at the next valid frame. In an undamaged file with a
    /// recorded model, also checks the cross-references: every stored
    /// relationship points at a record that exists, and the relationship
    /// pointers and secondary indexes agree with the records.
    ///
    /// - Throws: `.io`, `.notAStore`, `.corruptHeader`, `.unsupportedFormatVersion`
    ///   (a file too damaged to have frames at all).
    public static func verify(path: String) throws(LogStoreError) -> VerificationReport {
        try withFile(path, rereadingIf: { !$0.isValid }) { (file, header, size) throws(LogStoreError) in
            var report = VerificationReport(path: path, validFrames: 0, bytesChecked: size, problems: [], notes: [])
            // Only the transactions are scanned; the snapshot is read through its handles.
            var scanner = FrameScanner(file: file, limit: size, allowsReservedSpace: true)
            var origin = TailOrigin(file: file, deleteRuns: header.holdsDeleteRuns)
            origin.start = try header.framesStart(fileSize: size, path: path)
            // Frames are numbered through the file: the snapshot's blocks,
            // its other frames, then transactions.
            var number = 1
            if header.readVersion >= FileLayout.pagedSnapshotVersion {
                // Versions 5 to 7 write no anchor slot, with a snapshot or
                // without: the base root, if any, and the journal are the
                // whole store whatever a slot says.
                for slot in AnchorSlot.offsets where (try? file.read(count: AnchorSlot.size, at: slot))?.allSatisfy({ $0 == 0 }) == false {
                    report.notes.append("the anchor slot at offset \(slot) is not empty, though format versions 5 to 7 write none; it is not read")
                }
            }
            if let offset = header.snapshotIndexOffset ?? header.snapshotRootOffset {
                // Every block is read and decoded in full: verify is where
                // damage that open's checksums cannot see would show.
                var read: SnapshotExtent?
                do throws(LogStoreError) {
                    read = try SnapshotFile.read(in: file, header: header, fileSize: size, keysOnly: true)
                    if let read { origin = try TailOrigin(file: file, start: read.tailStart, index: read.index, deleteRuns: header.holdsDeleteRuns) }
                } catch {
                    report.problems.append(VerificationProblem(offset: error.offset ?? offset, frameNumber: 0, message: error.message))
                }
                guard var extent = read else {
                    report.notes.append("without its snapshot's index, neither the snapshot's blocks nor the transactions after it can be checked")
                    return report
                }
                // A paged snapshot's other tables, each block checked against its parent.
                if header.snapshotRootOffset != nil {
                    do throws(LogStoreError) {
                        extent = try SnapshotFile.read(in: file, header: header, fileSize: size) ?? extent
                    } catch {
                        report.problems.append(VerificationProblem(offset: error.offset ?? offset, frameNumber: 0, message: error.message))
                    }
                }
                let index = extent.index
                let slotCounts = index.entities.map(\.slots.count)
                let contextCheck = index.blockContext.map(BlockContextCheck.init)
                for number in index.blocks.indices {
                    do throws(LogStoreError) {
                        _ = try SnapshotFile.readBlock(number, of: index.blocks, slotCounts: slotCounts, context: contextCheck, paged: index.isPaged, in: file)
                        report.validFrames += 1
                    } catch {
                        report.problems.append(VerificationProblem(offset: index.blocks[number].offset, frameNumber: number + 1, message: error.message))
                    }
                }
                report.validFrames += extent.indexFrames
                number = index.blocks.count + extent.indexFrames + 1
            }
            var symbols = origin.symbols
            var decoder = PayloadDecoder(dictionary: origin.dictionary, deleteRuns: origin.deleteRuns)
            var start = origin.start
            var lastSequence = origin.sequenceBefore
            while true {
                let summary = try scanner.scan(from: start, lastSequence: lastSequence, firstNumber: number) { (frame, stored) throws(DecodeFailure) in
                    try Journal.checkKind(frame.header)
                    try decoder.checkTransaction(frame.header, stored: stored, symbols: &symbols)
                }
                report.validFrames += summary.frameCount
                number += summary.frameCount
                switch summary.end {
                case .clean:
                    if summary.reservedByteCount > 0 {
                        report.notes.append("the last \(summary.reservedByteCount) bytes, from offset \(summary.validEnd), are zeros: space a writer reserved for its next saves and did not cut off (it is open, or did not close); not data, and the next read-write open writes into them")
                    }
                    checkCrossReferences(path: path, at: header.snapshotIndexOffset ?? header.snapshotRootOffset ?? 0, into: &report)
                    return report
                case .tornTail(let offset, let count, let reason):
                    report.interruptedSave = VerificationProblem(offset: offset, frameNumber: number, message: "the last \(count) bytes are an interrupted save (\(reason))")
                    report.notes.append("the last \(count) bytes, from offset \(offset), are an interrupted save (\(reason)); the next read-write open cuts them off, losing only that unacknowledged transaction")
                    checkCrossReferences(path: path, at: header.snapshotIndexOffset ?? header.snapshotRootOffset ?? 0, into: &report)
                    return report
                case .damage(let offset, let frameNumber, let reason):
                    report.problems.append(VerificationProblem(offset: offset, frameNumber: frameNumber, message: reason))
                    guard let next = try scanner.nextValidFrame(after: offset, sequenceAbove: nil) else { return report }
                    // Names declared in lost frames are unknown from here on,
                    // so later frames may report undeclared names as well.
                    start = next
                    lastSequence = nil
                    number = frameNumber + 1
                }
            }
        }
    }

    /// Opens the store with its recorded model and checks that records,
    /// relationship pointers and indexes agree; problems are reported at
    /// `offset` (the snapshot index, which carries pointers and indexes).
    private static func checkCrossReferences(path: String, at offset: UInt64, into report: inout VerificationReport) {
        guard report.problems.isEmpty else { return }
        let store: Store
        do throws(LogStoreError) {
            store = try Store(recordedModelAt: path, options: JournalOptions(access: .readOnly, createIfMissing: false, compaction: .manual))
        } catch {
            if error.kind == .modelMismatch {
                report.notes.append("the file records no model (it was written with the Journal API, or a Store's first save never completed), so relationships and indexes were not checked")
            } else {
                report.problems.append(VerificationProblem(offset: error.offset ?? offset, frameNumber: error.frameNumber ?? 0, message: error.message))
            }
            return
        }
        defer { store.close() }
        if store.state.withLock({ $0.legacyReferenceDestinations != nil }) {
            report.notes.append("the snapshot was written before format version 4, whose compactions could name the source entity in a reference; those entity fields were not checked (LogStore takes the destination from the model, and the next compaction writes it)")
        }
        for problem in store.crossReferenceProblems {
            report.problems.append(VerificationProblem(offset: offset, frameNumber: 0, message: problem))
        }
    }

    /// Calls `body` with the file at `path`, its header and its size.
    ///
    /// As a read-only open does (``Journal/scanTransactions(of:limit:readOnly:)``),
    /// reads again, up to ``Journal/rereads`` times, when what `body` found
    /// may be a live writer's work under way: a read that found the file
    /// shorter than its size (`EAGAIN`), or a result `suspect` (damage)
    /// while a writer holds the file.
    static func withFile<T>(_ path: String, rereadingIf suspect: (T) -> Bool = { _ in false }, _ body: (SystemFile, FileHeader, UInt64) throws(LogStoreError) -> T) throws(LogStoreError) -> T {
        let file = try SystemFile(path: path, mode: .readOnly)
        defer { file.close() }
        var attempt = 0
        while true {
            attempt += 1
            do throws(LogStoreError) {
                let size = try file.size()
                let headerBytes = try file.read(count: FileLayout.headerSize, at: 0)
                let header = try headerBytes.withBytes { (raw) throws(LogStoreError) in try FileHeader.decode(raw, path: path) }
                let result = try body(file, header, size)
                guard attempt <= Journal.rereads, suspect(result), try file.isLockedByWriter() else { return result }
            } catch where attempt <= Journal.rereads && error.kind == .io && error.errno == EAGAIN {
                // The file changed under the read: read it again.
            }
        }
    }
}
