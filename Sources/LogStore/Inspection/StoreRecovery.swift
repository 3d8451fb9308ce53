// Recovering a damaged store: a new file with everything before the first damage.

import Foundation

/// What ``StoreInspector/recover(path:to:)`` kept and what it lost.
///
/// Damage in the journal after the snapshot keeps every transaction before
/// it. Damage in a snapshot block keeps the records of the blocks before it
/// (``snapshotRecordsKept``), written as inserts into a new journal with
/// their keys and the recorded model; references to lost records are
/// dropped, and the journal after the snapshot is lost.
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
    /// When the snapshot itself was damaged: the records of the blocks
    /// before the damaged one, written into the new store as inserts (its
    /// sequence numbers start again at 1, through ``newStoreLastSequence``).
    public var snapshotRecordsKept: Int?
    /// The records of the damaged block and those after it.
    public var snapshotRecordsLost: Int?
    public var newStoreLastSequence: UInt64?

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
    ///   when the snapshot's index is damaged (it locates every record, so
    ///   no usable store precedes the damage: restore a backup); `.io`,
    ///   `.notAStore`, `.corruptHeader`, `.unsupportedFormatVersion`.
    public static func recover(path: String, to output: String) throws(LogStoreError) -> StoreRecovery {
        // lstat: a link, even one pointing nowhere, is never written through.
        var info = stat()
        if lstat(output, &info) == 0 {
            let what = info.st_mode & S_IFMT == S_IFLNK ? "is a symbolic link, which recover never writes through" : "exists"
            throw LogStoreError(.invalidArgument, "\(output) \(what); recover writes a new file: choose another name or remove it first", path: output)
        }
        return try withFile(path) { (file, header, size) throws(LogStoreError) in
            var origin = TailOrigin(file: file)
            if let indexOffset = header.snapshotIndexOffset {
                do throws(LogStoreError) {
                    // Reads the index and checks every block's checksum.
                    let (snapshot, index) = try SnapshotFile.open(file, indexOffset: indexOffset, fileSize: size, cacheCapacity: 1 << 20)
                    origin = try TailOrigin(file: file, after: snapshot, index: index)
                } catch {
                    // With its index whole, the blocks before the damaged one still read.
                    if let (index, frame) = try? SnapshotFile.readIndex(in: file, at: indexOffset, fileSize: size),
                       let recovery = try recoverSnapshotPrefix(of: file, header: header, index: index, tailStart: indexOffset + frame.frameSize, to: output) {
                        return recovery
                    }
                    throw LogStoreError(.corruptSnapshot, "\(path) cannot be recovered: the index of its snapshot, which locates every record saved before its last compaction, is damaged (\(error.message)). Nothing usable comes before that damage; restore the file from a backup", path: path, offset: error.offset, frameNumber: error.frameNumber, details: [error])
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

    /// Writes the records of the snapshot's blocks before its first damaged
    /// one into a new store at `output`: nil when every block reads (the
    /// damage is elsewhere). The records go in as inserts, with their keys
    /// and the recorded model, in transactions of 10,000; everything from the
    /// damaged block on, the journal after the snapshot included, is lost.
    private static func recoverSnapshotPrefix(of file: SystemFile, header: FileHeader, index: SnapshotIndex, tailStart: UInt64, to output: String) throws(LogStoreError) -> StoreRecovery? {
        let slotCounts = index.entities.map(\.slots.count)
        var blocks: [SnapshotBlock] = []
        var damage: VerificationProblem?
        for number in index.blocks.indices {
            do throws(LogStoreError) {
                blocks.append(try SnapshotFile.readBlock(number, of: index.blocks, slotCounts: slotCounts, in: file))
            } catch {
                damage = VerificationProblem(offset: index.blocks[number].offset, frameNumber: number + 1, message: error.message)
                break
            }
        }
        guard let damage else { return nil }
        let temporary = "\(output).recovering-\(getpid())"
        unlink(temporary)
        defer { unlink(temporary) }
        // The tool's own file, written through the system.
        try Journal.create(path: temporary, permissions: 0o600, header: FileHeader(storeID: header.storeID, createdAt: header.createdAt))
        let journal = try Journal(path: temporary, options: JournalOptions(createIfMissing: false, compaction: .manual))
        defer { journal.close() }
        if !index.schema.isEmpty {
            try journal.append([.insert(RecordID(entity: journal.symbol(for: Store.schemaEntity), key: 1), [Field(journal.symbol(for: Store.schemaAttribute), .data(Data(index.schema)))])])
        }
        // A reference names its target by key; the target's entity is the
        // relationship's destination in the recorded model. A reference to
        // a record that was lost is dropped, as a delete would have
        // nullified it, so that the new store is consistent.
        let schema = index.schema.isEmpty ? nil : try? StoredSchema.decode(Data(index.schema), path: file.path)
        let destinations: [[String?]] = index.entities.map { entity in
            let relationships = schema?.entities.first { $0.name == entity.name }?.relationships ?? []
            return entity.slots.map { slot in relationships.first { $0.name == slot }?.destination }
        }
        var keptKeys: Set<[UInt64]> = []
        for block in blocks {
            for position in 0..<block.count { keptKeys.insert([UInt64(block.entities[position]), block.keys[position]]) }
        }
        let positions = Dictionary(index.entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        func surviving(_ id: RecordID, in destination: String?) -> RecordID? {
            guard let destination, let position = positions[destination], keptKeys.contains([UInt64(position), id.key]) else { return nil }
            return RecordID(entity: journal.symbol(for: destination), key: id.key)
        }
        let entities = index.entities.map { journal.symbol(for: $0.name) }
        let slots = index.entities.map { $0.slots.map { journal.symbol(for: $0) } }
        var changes: [RecordChange] = []
        var kept = 0
        for block in blocks {
            for position in 0..<block.count {
                let entity = block.entities[position]
                let values = block.withValues(at: position) { bytes in
                    var reader = ByteReader(bytes)
                    var values: [StoredValue] = []
                    // The block decoded whole when it was read, so its values do.
                    while !reader.isAtEnd, let value = try? reader.readValue(trusted: true) { values.append(value) }
                    return values
                }
                var fields: [Field] = []
                for (slotIndex, (slot, value)) in zip(slots[entity], values).enumerated() {
                    let destination = destinations[entity][slotIndex]
                    switch value {
                    case .null: break
                    case .reference(let id): if let target = surviving(id, in: destination) { fields.append(Field(slot, .reference(target))) }
                    case .references(let ids): fields.append(Field(slot, .references(ids.compactMap { surviving($0, in: destination) })))
                    default: fields.append(Field(slot, value))
                    }
                }
                changes.append(.insert(RecordID(entity: entities[entity], key: block.keys[position]), fields))
                kept += 1
                if changes.count == 10_000 {
                    try journal.append(changes)
                    changes = []
                }
            }
        }
        if !changes.isEmpty { try journal.append(changes) }
        let lastSequence = journal.lastSequence
        journal.close()
        try publish(temporary, as: output)

        let size = try file.size()
        let lostRecords = index.blocks[(damage.frameNumber - 1)...].reduce(0) { $0 + $1.recordCount }
        var recovery = StoreRecovery(
            path: file.path, output: output, keptTransactions: 0, lastKeptSequence: nil, damage: damage,
            lostBytes: size - damage.offset, lostTransactions: 0)
        recovery.snapshotRecordsKept = kept
        recovery.snapshotRecordsLost = lostRecords
        recovery.newStoreLastSequence = lastSequence
        // The transactions after the snapshot are lost with it: count them.
        var scanner = FrameScanner(file: file, limit: size)
        let tail = try scanner.scan(from: tailStart, lastSequence: index.sequence) { _, _ in }
        recovery.lostTransactions = tail.frameCount
        recovery.firstLostSequence = tail.firstSequence
        recovery.lastLostSequence = tail.lastSequence
        return recovery
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
        try publish(temporary, as: output)
    }

    /// Gives the finished file at `temporary` its name, durably. A link,
    /// unlike a rename, never replaces a file that appeared meanwhile.
    private static func publish(_ temporary: String, as output: String) throws(LogStoreError) {
        let fileSystem = SystemFileSystem()
        guard try fileSystem.link(temporary, to: output) else {
            throw LogStoreError(.invalidArgument, "\(output) appeared while recover wrote it; nothing was replaced: choose another name", path: output)
        }
        try fileSystem.synchronizeDirectory(of: output)
    }
}
