// Rewriting a store whose snapshot has damaged blocks: every other block's
// records, the journal after the snapshot, and the keys already given out
// (FORMAT.md §11.4).

import Foundation

/// The records of one entity that a recovery lost, as ranges of keys.
public struct LostRecords: Sendable, Hashable, Codable {
    /// The entity's name.
    public var entity: String
    /// The lost keys, as increasing, disjoint ranges.
    public var keys: [ClosedRange<UInt64>]
    /// How many records the ranges hold; when not ``isExact``, at most how many.
    public var count: Int
    /// Whether every key of the ranges named a record. False when the
    /// snapshot index was damaged and rebuilt from the blocks: the ranges
    /// are then the keys between the records of the whole blocks around the
    /// damage, some of which may have been deleted before.
    public var isExact: Bool

    /// The report of `count` lost records of `entity`, whose keys are `keys`.
    public init(entity: String, keys: [ClosedRange<UInt64>], count: Int, isExact: Bool = true) {
        self.entity = entity
        self.keys = keys
        self.count = count
        self.isExact = isExact
    }

    /// Whether `key` is in the ranges.
    func contains(_ key: UInt64) -> Bool {
        var low = 0, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].upperBound < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low].contains(key)
    }

    /// The report of the records of `entity` with `keys`, increasing.
    init(entity: String, keys: [UInt64]) {
        var ranges: [ClosedRange<UInt64>] = []
        for key in keys {
            if let last = ranges.last, last.upperBound &+ 1 == key {
                ranges[ranges.count - 1] = last.lowerBound...key
            } else {
                ranges.append(key...key)
            }
        }
        self.init(entity: entity, keys: ranges, count: keys.count)
    }
}

/// The next key of each entity, by name, as FORMAT.md §5.5 counts it: the
/// largest key of a record plus one, or the largest reservation, whichever
/// is larger. A recovered store starts from it, so that no key given out
/// by the damaged store (and perhaps kept outside it) names another record.
struct KeyHighWater: Sendable, Equatable {
    private(set) var next: [String: UInt64] = [:]

    /// Counts every key of `entity` below `key` as given out.
    mutating func note(_ entity: String, below key: UInt64) {
        next[entity] = max(next[entity] ?? 0, key)
    }

    /// Counts the keys that `changes` insert or reserve; `names` says what their symbols mean.
    mutating func note(_ changes: [RecordChange], names: SymbolTable) {
        for change in changes {
            switch change {
            case .insert(let id, _):
                // A key of UInt64.max leaves no key above it: none is counted.
                if let entity = names.name(of: id.entity), id.key < .max { note(entity, below: id.key + 1) }
            case .update(let id, let fields) where names.name(of: id.entity) == Store.keyReservationEntity:
                for field in fields {
                    guard case .int64(let value) = field.value, let entity = names.name(of: field.attribute) else { continue }
                    note(entity, below: UInt64(bitPattern: value))
                }
            case .update, .delete, .deleteRun:
                break
            }
        }
    }

    /// Counts every key `other` counts.
    mutating func merge(_ other: KeyHighWater) {
        for (entity, key) in other.next { note(entity, below: key) }
    }

    /// The reservation (FORMAT.md §5.5) of every key counted, in `journal`'s symbols; nil when none is.
    func reservation(in journal: Journal) -> RecordChange? {
        let fields = next.sorted { $0.key < $1.key }.filter { $0.value > 0 }.map { entity, key in
            Field(journal.symbol(for: entity), .int64(Int64(bitPattern: key)))
        }
        guard !fields.isEmpty else { return nil }
        return .update(RecordID(entity: journal.symbol(for: Store.keyReservationEntity), key: 1), fields)
    }
}

/// The valid transactions after damage in a journal, which a salvage or
/// recovery cannot keep (what they change may rest on the damaged frames),
/// and the keys they gave out or reserved, which must never be given out
/// again: an object ID handed out by a lost save may be kept outside the store.
struct ReadableAfterDamage: Sendable {
    var count = 0
    var firstSequence: UInt64?
    var lastSequence: UInt64?
    var keys = KeyHighWater()

    init() {}

    /// Scans `file` up to `limit` for the valid frames after the damage at
    /// `offset` with a sequence number above `sequence`. They are decoded
    /// with `symbols` and `dictionary`, those in force before the damage: a
    /// frame that needs what the damaged frames declared counts, but its
    /// keys cannot be read.
    init(file: any FileIO, limit: UInt64, after offset: UInt64, above sequence: UInt64?, symbols: SymbolTable, dictionary: LZ4.PresetDictionary?, deleteRuns: Bool) throws(LogStoreError) {
        var scanner = FrameScanner(file: file, limit: limit)
        var position = offset
        var symbols = symbols
        var decoder = PayloadDecoder(dictionary: dictionary, deleteRuns: deleteRuns)
        var keys = KeyHighWater()
        while let next = try scanner.nextValidFrame(after: position, sequenceAbove: sequence) {
            let run = try scanner.scan(from: next) { (frame, stored) throws(DecodeFailure) in
                guard frame.header.kind == .transaction,
                      let changes = try? decoder.decodeTransaction(frame.header, stored: stored, symbols: &symbols) else { return }
                keys.note(changes, names: symbols)
            }
            count += run.frameCount
            firstSequence = firstSequence ?? run.firstSequence
            lastSequence = run.lastSequence ?? lastSequence
            guard case .damage(let offset, _, _) = run.end else { break }
            position = offset
        }
        self.keys = keys
    }
}

/// A new store written from a snapshot with damaged blocks.
///
/// The salvage rule: a damaged block costs its own records, nothing else.
/// The records of every whole block go into the new store as inserts, with
/// their keys; then every transaction after the snapshot, in order, minus
/// its changes to lost records (an update or delete of a record that is
/// gone has nothing to apply to), and a reference to a lost record becomes
/// null, as deleting it would have made it. A transaction is dropped whole
/// only when nothing of it is left. Keys are never given out again: the new
/// store starts with a reservation of every key the snapshot, or any
/// readable frame after it, counted as given out.
struct SnapshotSalvage {
    /// What the salvage kept and lost.
    struct Outcome {
        var damagedBlocks: [VerificationProblem] = []
        var damagedBytes: UInt64 = 0
        var keptRecords = 0
        var lostRecords: [LostRecords] = []
        var lostRecordCount: Int { lostRecords.reduce(0) { $0 + $1.count } }
        /// The journal after the snapshot: how its scan ended, and what it kept.
        var tail = ScanSummary()
        var keptTransactions = 0
        var droppedTransactions = 0
        var droppedChanges = 0
        var nullifiedReferences = 0
        var modelLost = false
        /// Valid transactions after damage in the journal, which cannot be kept.
        var unreadable = ReadableAfterDamage()
        var newLastSequence: UInt64 = 0
    }

    let file: any FileIO
    let header: FileHeader
    let index: SnapshotIndex
    /// Where the journal after the snapshot starts, and the file's size.
    let tailStart: UInt64
    let size: UInt64
    /// Damage found before the blocks are read (a damaged index rebuilt
    /// from the blocks), with the records it lost and its bytes.
    var knownDamage: [VerificationProblem] = []
    var knownLost: [LostRecords] = []
    var knownDamagedBytes: UInt64 = 0
    /// Whether the recorded model was lost with the index: the new store
    /// then records none, and opens only with the app's model.
    var modelLost = false

    /// Reads every block, checking each whole; returns those that read and
    /// the damage of the others.
    func readBlocks() -> (blocks: [SnapshotBlock], damage: [(number: Int, problem: VerificationProblem)]) {
        let slotCounts = index.entities.map(\.slots.count)
        let contextCheck = index.blockContext.map(BlockContextCheck.init)
        var blocks: [SnapshotBlock] = []
        var damage: [(Int, VerificationProblem)] = []
        for number in index.blocks.indices {
            do throws(LogStoreError) {
                blocks.append(try SnapshotFile.readBlock(number, of: index.blocks, slotCounts: slotCounts, context: contextCheck, paged: index.isPaged, in: file))
            } catch {
                damage.append((number, VerificationProblem(offset: index.blocks[number].offset, frameNumber: number + 1, message: error.message)))
            }
        }
        return (blocks, damage)
    }

    /// Writes the new store at `path` (which must not exist), durably; nil
    /// when every block is whole (the damage, if any, is elsewhere).
    func write(to path: String) throws(LogStoreError) -> Outcome? {
        let (blocks, damage) = readBlocks()
        guard !damage.isEmpty || !knownDamage.isEmpty else { return nil }
        var outcome = Outcome()
        outcome.damagedBlocks = knownDamage + damage.map(\.problem)
        outcome.damagedBytes = damage.reduce(knownDamagedBytes) { $0 + index.blocks[$1.number].frameSize }

        // The index places every key in a block (SnapshotIndex checks that
        // the directory's counts add up), so the lost keys are exact.
        let damagedNumbers = Set(damage.map(\.number))
        outcome.lostRecords = knownLost
        outcome.modelLost = modelLost
        var cursor = BlockCursor(index.blocks)
        var keys = KeyHighWater()
        for entity in index.entities {
            keys.note(entity.name, below: entity.nextKey)
            let lostKeys = entity.keys.filter { _ in damagedNumbers.contains(cursor.next().block) }
            guard !lostKeys.isEmpty else { continue }
            outcome.lostRecords.append(LostRecords(entity: entity.name, keys: lostKeys))
        }
        let lost = Dictionary(grouping: outcome.lostRecords, by: \.entity)

        let origin = try TailOrigin(file: file, start: tailStart, index: index, deleteRuns: header.holdsDeleteRuns)
        // A new file's version holds delete runs: the new store keeps the
        // old one's runs as runs.
        try Journal.create(path: path, permissions: 0o600, header: FileHeader(storeID: header.storeID, createdAt: header.createdAt, version: FileLayout.createdVersion))
        let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS, createIfMissing: false, compaction: .manual))
        defer { journal.close() }
        // A reference in a block names its target by key; the target's
        // entity is the relationship's destination in the recorded model.
        let schema = index.schema.isEmpty ? nil : try? StoredSchema.decode(Data(index.schema), path: file.path)
        var destinations: [String: [String: String]] = [:]
        for entity in schema?.entities ?? [] {
            destinations[entity.name] = Dictionary(entity.relationships.map { ($0.name, $0.destination) }, uniquingKeysWith: { first, _ in first })
        }
        // Without a recorded model, blocks of format version 4 say it.
        if schema == nil, let context = blocks.first?.context {
            for entity in context.entities {
                destinations[entity.name] = Dictionary(zip(entity.slots, entity.destinations).compactMap { slot, destination in
                    destination.flatMap { context.entities.indices.contains($0) ? (slot, context.entities[$0].name) : nil }
                }, uniquingKeysWith: { first, _ in first })
            }
        }
        var rewriter = Rewriter(journal: journal, lost: lost, destinations: destinations)
        if !index.schema.isEmpty {
            rewriter.pending.append(.insert(RecordID(entity: journal.symbol(for: Store.schemaEntity), key: 1), [Field(journal.symbol(for: Store.schemaAttribute), .data(Data(index.schema)))]))
        }
        for block in blocks {
            let skipped = Set(index.blocks[block.number].skipped)
            for position in 0..<block.count where !skipped.contains(position) {
                let entity = index.entities[block.entity(at: position)]
                let values = block.withValues(at: position) { bytes in
                    var reader = ByteReader(bytes)
                    var values: [StoredValue] = []
                    // The block decoded whole when it was read, so its values do.
                    while !reader.isAtEnd, let value = try? reader.readValue(trusted: true) { values.append(value) }
                    return values
                }
                try rewriter.addRecord(entity: entity.name, key: block.key(at: position), slots: entity.slots, values: values, names: origin.symbols)
                outcome.keptRecords += 1
            }
        }
        try rewriter.flush()

        // The journal after the snapshot, each transaction as one, minus its changes to lost records.
        var symbols = origin.symbols
        var decoder = PayloadDecoder(dictionary: origin.dictionary, deleteRuns: origin.deleteRuns)
        var scanner = FrameScanner(file: file, limit: size, allowsReservedSpace: true)
        var failure: LogStoreError?
        outcome.tail = try scanner.scan(from: tailStart, lastSequence: index.sequence) { (frame, stored) throws(DecodeFailure) in
            try Journal.checkKind(frame.header)
            let changes = try decoder.decodeTransaction(frame.header, stored: stored, symbols: &symbols)
            keys.note(changes, names: symbols)
            do throws(LogStoreError) {
                for change in changes { rewriter.add(change, names: symbols) }
                if rewriter.pending.isEmpty { outcome.droppedTransactions += 1 } else { outcome.keptTransactions += 1 }
                try rewriter.flush()
            } catch {
                failure = error
                throw DecodeFailure("the new store could not be written")
            }
        }
        if let failure { throw failure }
        if case .damage(let offset, _, _) = outcome.tail.end {
            let readable = try ReadableAfterDamage(file: file, limit: size, after: offset, above: outcome.tail.lastSequence, symbols: symbols, dictionary: decoder.dictionary, deleteRuns: origin.deleteRuns)
            keys.merge(readable.keys)
            outcome.unreadable = readable
        }
        if let reservation = keys.reservation(in: journal) { try journal.append([reservation]) }
        outcome.droppedChanges = rewriter.droppedChanges
        outcome.nullifiedReferences = rewriter.nullifiedReferences
        outcome.newLastSequence = journal.lastSequence
        journal.close()
        // Appended without waiting for the disk: made durable once, here.
        let written = try SystemFile(path: path, mode: .readOnly)
        defer { written.close() }
        try written.synchronize()
        return outcome
    }

    /// Translates changes into the new journal's symbols, leaving out those
    /// to lost records and references to them, and appends them.
    private struct Rewriter {
        let journal: Journal
        let lost: [String: [LostRecords]]
        /// Per entity, per relationship, its destination entity.
        let destinations: [String: [String: String]]
        var pending: [RecordChange] = []
        var droppedChanges = 0
        var nullifiedReferences = 0

        /// Adds a snapshot record of `entity` (lost ones are never read);
        /// its references are in the symbols of `names`.
        mutating func addRecord(entity: String, key: UInt64, slots: [String], values: [StoredValue], names: SymbolTable) throws(LogStoreError) {
            // Nulls are what an insert leaves out anyway.
            let fields = zip(slots, values).compactMap { slot, value -> Field? in
                let value = translate(value, to: destinations[entity]?[slot], names: names)
                return value == .null ? nil : Field(journal.symbol(for: slot), value)
            }
            pending.append(.insert(RecordID(entity: journal.symbol(for: entity), key: key), fields))
            // Snapshot records go in transactions of 10,000, to bound memory.
            if pending.count == 10_000 { try flush() }
        }

        /// Adds a change of the journal after the snapshot, in the symbols of
        /// `names`, unless it changes a lost record.
        mutating func add(_ change: RecordChange, names: SymbolTable) {
            // A run is kept whole, in the new store's symbols: its keys of
            // lost records are nothing to delete there, and the new store
            // holds runs as the old one did.
            if case .deleteRun(let first, let count) = change {
                guard let entity = names.name(of: first.entity) else { return }
                pending.append(.deleteRun(RecordID(entity: journal.symbol(for: entity), key: first.key), count: count))
                return
            }
            guard let id = translate(change.recordID, names: names) else {
                droppedChanges += 1
                return
            }
            let entity = names.name(of: change.recordID.entity) ?? ""
            func translated(_ fields: [Field]) -> [Field] {
                fields.compactMap { field in
                    names.name(of: field.attribute).map { Field(journal.symbol(for: $0), translate(field.value, to: destinations[entity]?[$0], names: names)) }
                }
            }
            switch change {
            case .insert(_, let fields): pending.append(.insert(id, translated(fields)))
            case .update(_, let fields): pending.append(.update(id, translated(fields)))
            case .delete: pending.append(.delete(id))
            case .deleteRun: break
            }
        }

        mutating func flush() throws(LogStoreError) {
            guard !pending.isEmpty else { return }
            _ = try journal.append(pending)
            pending = []
        }

        /// `id` in the new journal's symbols, of entity `entity` if given, else
        /// the one its symbol names: nil when it names a lost record, or a
        /// symbol the old name table lacks (which decoding rules out; kept
        /// as a refusal rather than a trap).
        private func translate(_ id: RecordID, entity: String? = nil, names: SymbolTable) -> RecordID? {
            guard let entity = entity ?? names.name(of: id.entity), lost[entity]?.contains(where: { $0.contains(id.key) }) != true else { return nil }
            return RecordID(entity: journal.symbol(for: entity), key: id.key)
        }

        /// `value` with a reference to a lost record of `destination` made
        /// null, or left out of a to-many list.
        private mutating func translate(_ value: StoredValue, to destination: String?, names: SymbolTable) -> StoredValue {
            switch value {
            case .reference(let target):
                guard let target = translate(target, entity: destination, names: names) else {
                    nullifiedReferences += 1
                    return .null
                }
                return .reference(target)
            case .references(let targets):
                let kept = targets.compactMap { translate($0, entity: destination, names: names) }
                nullifiedReferences += targets.count - kept.count
                return .references(kept)
            default:
                return value
            }
        }
    }
}

extension SnapshotSalvage {
    /// Salvage mode's repair of a store whose snapshot has damaged blocks,
    /// opened read-write and locked as `file`: writes the salvaged store next
    /// to it, keeps the damaged file itself under `PATH.damaged-0` (a second
    /// name for it, not a copy), and renames the salvaged one over the store.
    /// Once the rename is durable, the damaged file gets the replaced mark
    /// (FORMAT.md §2), as a compaction's old file does: a writer reaching it
    /// through another name is refused. The caller then opens the store
    /// again; the report says what was lost.
    ///
    /// - Returns: nil when there is nothing to salvage from (see
    ///   ``init(file:header:size:)``) or no block is damaged: the damage is
    ///   reported as it was.
    static func replaceStore(_ file: any FileIO, on fileSystem: any FileSystem) throws(LogStoreError) -> RecoveryReport? {
        let path = file.path
        let size = try file.size()
        let header = try file.read(count: FileLayout.headerSize, at: 0).withBytes { (raw) throws(LogStoreError) in try FileHeader.decode(raw, path: path) }
        guard let salvage = try SnapshotSalvage(file: file, header: header, size: size) else { return nil }
        // Files of ended processes were removed when the lock was taken.
        let temporary = TemporaryFile.salvaging.path(beside: path)
        fileSystem.remove(temporary)
        defer { fileSystem.remove(temporary) }
        guard let outcome = try salvage.write(to: temporary) else { return nil }
        // The store stays open to whoever it was, as after a compaction.
        let written = try fileSystem.open(temporary, .readWrite)
        defer { written.close() }
        try fileSystem.copyOwnership(from: file, to: written)

        var aside = "\(path).damaged-0"
        var attempt = 1
        while try !fileSystem.link(path, to: aside) {
            attempt += 1
            aside = "\(path).damaged-0-\(attempt)"
        }
        do throws(LogStoreError) {
            try fileSystem.rename(temporary, to: path)
        } catch {
            // The store is as it was; the second name would only mislead.
            fileSystem.remove(aside)
            throw error
        }
        // Not marked before the rename is durable: a power cut could undo
        // it and make the damaged file the store again.
        try fileSystem.synchronizeDirectory(of: path)
        var report = outcome.report(size: size)
        report.preservedDamagePath = aside
        do throws(LogStoreError) {
            try Journal.setReplacedMark(true, in: file)
        } catch {
            // The salvage is done; its report must not be lost to this.
            report.reason = (report.reason ?? "") + "; \(aside) could not be marked as replaced (\(error.message)), so a writer reaching it through another name of it would not be refused: remove other names of it"
        }
        return report
    }

    /// Salvage mode's reading of a store whose snapshot has damaged blocks,
    /// opened read-only as `file`, which it does not change: the salvaged
    /// store is written to the temporary directory and opened, its name
    /// removed at once, reporting itself under `file`'s path.
    ///
    /// - Returns: nil as ``replaceStore(_:on:)``.
    static func salvagedCopy(of file: any FileIO, on fileSystem: any FileSystem) throws(LogStoreError) -> (copy: any FileIO, report: RecoveryReport)? {
        let size = try file.size()
        let header = try file.read(count: FileLayout.headerSize, at: 0).withBytes { (raw) throws(LogStoreError) in try FileHeader.decode(raw, path: file.path) }
        guard let salvage = try SnapshotSalvage(file: file, header: header, size: size) else { return nil }
        let temporary = NSTemporaryDirectory() + "/logstore-salvage-\(UUID().uuidString)"
        defer { unlink(temporary) }
        guard let outcome = try salvage.write(to: temporary) else { return nil }
        return (try SystemFileSystem().open(temporary, .readOnly, reportingAs: file.path), outcome.report(size: size))
    }
}

extension SnapshotSalvage.Outcome {
    /// What salvage mode reports of this salvage of a file of `size` bytes.
    func report(size: UInt64) -> RecoveryReport {
        let first = damagedBlocks[0]
        var lost = "\(lostRecordCount) records lost"
        if droppedChanges > 0 { lost += ", and \(droppedChanges) later changes to them" }
        if unreadable.count > 0 { lost += ", and \(unreadable.count) transactions after damage in the journal" }
        var report = RecoveryReport(
            outcome: .salvaged, frameCount: Int(newLastSequence), droppedOffset: first.offset,
            droppedByteCount: damagedBytes + tail.unreadableBytes(fileSize: size),
            reason: "\(damagedBlocks.count) damaged snapshot block(s), the first: \(first.message); \(lost)")
        report.lostRecords = lostRecords
        return report
    }
}

extension SnapshotSalvage {
    /// The salvage of the snapshot of `file`: from its index when that
    /// reads, else from its blocks (``rebuildingIndex(of:header:size:damage:)``).
    /// Nil when the file has no snapshot, or its index is damaged and its
    /// blocks (format versions 2 and 3) do not say what the index did.
    init?(file: any FileIO, header: FileHeader, size: UInt64) throws(LogStoreError) {
        do throws(LogStoreError) {
            var tableDamage: [VerificationProblem] = []
            do throws(LogStoreError) {
                guard try SnapshotFile.read(in: file, header: header, fileSize: size) != nil else { return nil }
            } catch where header.snapshotRootOffset != nil {
                // A paged snapshot's damaged index or pointer table loses
                // nothing: the records, rewritten as inserts, rebuild it.
                tableDamage.append(VerificationProblem(offset: error.offset ?? 0, frameNumber: error.frameNumber ?? 0, message: "\(error.message). The records are whole; the store's tables are rebuilt from them"))
            }
            guard let extent = try SnapshotFile.read(in: file, header: header, fileSize: size, keysOnly: true) else { return nil }
            self.init(file: file, header: header, index: extent.index, tailStart: extent.tailStart, size: size, knownDamage: tableDamage)
        } catch {
            guard let rebuilt = try Self.rebuildingIndex(of: file, header: header, size: size, damage: error) else { return nil }
            self = rebuilt
        }
    }

    /// The salvage of a snapshot whose index is damaged (its index frame; or
    /// a paged snapshot's root, catalog or key directory), from what its
    /// blocks repeat of it (format version 4 on, FORMAT.md §11.4, §13.8): the entities,
    /// names and next keys from any whole block, the key lists and the
    /// directory from the whole blocks' records. The records between the
    /// whole blocks around damage are reported lost, as ranges of keys that
    /// may include keys deleted before. The recorded model and the store
    /// dictionary, which only the index holds, are lost.
    static func rebuildingIndex(of file: any FileIO, header: FileHeader, size: UInt64, damage: LogStoreError) throws(LogStoreError) -> SnapshotSalvage? {
        guard header.readVersion >= FileLayout.selfDescribingBlockVersion, let indexOffset = header.snapshotIndexOffset ?? header.snapshotRootOffset, indexOffset <= size else { return nil }
        let paged = header.snapshotRootOffset != nil
        let start = header.framesStart
        var found: [(header: FrameHeader, offset: UInt64, block: SnapshotBlock)] = []
        // Before which of the found blocks blocks are missing (found.count: after the last).
        var gaps: [Int] = []
        var context: BlockContext?
        // A paged run's catalog holds the model and dictionary an index frame held.
        var catalog: SnapshotCatalog?
        var scanner = FrameScanner(file: file, limit: indexOffset)
        var position = start
        // A paged run numbers all its frames alike, and holds index blocks and a catalog.
        var lastNumber: UInt64? = paged ? nil : 0
        scanning: while true {
            let summary = try scanner.scan(from: position, lastSequence: lastNumber, checksSequence: !paged) { (frame, stored) throws(DecodeFailure) in
                if paged, frame.header.kind == .indexBlock { return }
                if paged, frame.header.kind == .catalog {
                    let raw = try SnapshotFile.decompress(frame.header, stored)
                    catalog = try raw.withBytes { (bytes) throws(DecodeFailure) in try SnapshotCatalog(decoding: bytes) }
                    return
                }
                guard frame.header.kind == .snapshotBlock else { throw DecodeFailure("a \(frame.header.kind) frame stands among the blocks") }
                let block = try SnapshotBlock(number: found.count, raw: try SnapshotFile.decompress(frame.header, stored), slotCounts: nil, hasContext: true, paged: paged)
                guard let own = block.context, block.count > 0, context.map(own.agrees) ?? true,
                      found.last.map({ ($0.block.entity(at: $0.block.count - 1), $0.block.key(at: $0.block.count - 1)) < (block.entity(at: 0), block.key(at: 0)) }) ?? true else {
                    throw DecodeFailure("its context or its records disagree with the blocks before it")
                }
                context = context ?? own
                found.append((frame.header, frame.offset, block))
            }
            switch summary.end {
            case .clean:
                break scanning
            case .tornTail:
                gaps.append(found.count)
                break scanning
            case .damage(let offset, _, _):
                gaps.append(found.count)
                guard let next = try scanner.nextValidFrame(after: offset, sequenceAbove: paged ? nil : found.last?.header.sequence) else { break scanning }
                position = next
                lastNumber = nil
            }
        }
        guard let context, !found.isEmpty else { return nil }

        var index = SnapshotIndex(sequence: context.sequence, blockSize: 0)
        index.symbols = context.symbols
        let keptCatalog = catalog.flatMap { $0.sequence == context.sequence && $0.symbols == context.symbols ? $0 : nil }
        if let keptCatalog {
            index.schema = keptCatalog.schema
            index.dictionary = keptCatalog.dictionary
        }
        index.blocksHaveContext = true
        index.isPaged = paged
        index.entities = context.entities.map { SnapshotIndex.Entity(name: $0.name, slots: $0.slots, nextKey: $0.nextKey, keys: []) }
        for (frame, offset, block) in found {
            var entry = SnapshotIndex.Block(
                offset: offset, storedSize: frame.storedSize, rawSize: frame.rawSize, checksum: frame.checksum, recordCount: block.count,
                firstEntity: block.entity(at: 0), firstKey: block.key(at: 0), lastEntity: block.entity(at: block.count - 1), lastKey: block.key(at: block.count - 1))
            for position in 0..<block.count {
                // A tombstone, or an older version of the record before it, is not live.
                if block.isTombstone(position) || (position > 0 && block.key(at: position) == block.key(at: position - 1) && block.entity(at: position) == block.entity(at: position - 1)) {
                    entry.skipped.append(position)
                } else {
                    index.entities[block.entity(at: position)].keys.append(block.key(at: position))
                }
            }
            index.blocks.append(entry)
        }

        // Each gap loses the keys between the record before it and the one after it.
        var ranges = Array(repeating: [ClosedRange<UInt64>](), count: context.entities.count)
        for gap in gaps {
            let before = gap == 0 ? nil : found[gap - 1].block
            let after = gap == found.count ? nil : found[gap].block
            let lower = before.map { ($0.entity(at: $0.count - 1), $0.key(at: $0.count - 1)) }
            let upper = after.map { ($0.entity(at: 0), $0.key(at: 0)) }
            let first = lower?.0 ?? 0, last = upper?.0 ?? context.entities.count - 1
            guard first <= last else { continue }
            for entity in first...last {
                var low: UInt64 = 0
                if let lower, lower.0 == entity {
                    guard lower.1 < .max else { continue }
                    low = lower.1 + 1
                }
                let below = upper.map { $0.0 == entity ? $0.1 : nil } ?? nil
                let end = below ?? context.entities[entity].nextKey
                guard end > low else { continue }
                ranges[entity].append(low...(end - 1))
            }
        }
        let lost = zip(context.entities, ranges).compactMap { entity, ranges -> LostRecords? in
            guard !ranges.isEmpty else { return nil }
            // Saturating: a crafted context may give a range of 2^64 keys.
            let count = ranges.reduce(0) { total, range in
                let size = range.upperBound - range.lowerBound
                let keys = size >= UInt64(Int.max) ? Int.max : Int(size) + 1
                return total > Int.max - keys ? Int.max : total + keys
            }
            return LostRecords(entity: entity.name, keys: ranges, count: count, isExact: false)
        }

        var tail = FrameScanner(file: file, limit: size)
        let tailStart = try tail.nextValidFrame(after: indexOffset, sequenceAbove: context.sequence) ?? size
        let blockBytes = found.reduce(UInt64(0)) { $0 + $1.header.frameSize }
        let problem = VerificationProblem(
            offset: indexOffset, frameNumber: damage.frameNumber ?? 0,
            message: keptCatalog != nil ? "\(damage.message). The index was rebuilt from the blocks and the catalog"
                : "\(damage.message). The index was rebuilt from the blocks; the recorded model and the store dictionary, which only the index holds, are lost")
        return SnapshotSalvage(
            file: file, header: header, index: index, tailStart: tailStart, size: size, knownDamage: [problem], knownLost: lost,
            knownDamagedBytes: (indexOffset - start - min(blockBytes, indexOffset - start)) + (tailStart - indexOffset),
            modelLost: keptCatalog == nil)
    }
}

