// The store: one file, its model, and the committed state every context reads.

import Foundation
import Synchronization

/// A pending save as the store receives it from a context.
struct PendingSave: Sendable {
    var changes: [SlotChange]
    /// The version each updated or deleted record had when the context
    /// loaded it; a different version in the store is a conflict.
    var expectedVersions: [RecordKey: UInt64]
    /// For each record the save deletes, its stored links as the deleting
    /// context left them (it may have unlinked some first): what its delete
    /// rules apply to, rather than the links the store holds.
    var deletedLinks: [RecordKey: [(Int, StoredValue)]] = [:]
}

/// What a commit did: the changes every context is told of, and the
/// records the saving context did not change as it will find them
/// (``CommitPlan/adjusted``).
struct CommitResult: Sendable {
    var changes: StoreChanges
    var adjusted: [RecordKey]
}

/// What a save changed, as every context of the store is told: the IDs
/// of the records it inserted, updated and deleted, each once, in the order
/// of the save.
///
/// The IDs are made when asked for, from the changes the save applied: a
/// bulk insert of a million records would otherwise make a million IDs
/// (56 MB) that nobody may read.
public struct StoreChanges: Sendable, Hashable {
    /// The journal sequence number of the save.
    public let sequence: UInt64
    private let storeID: UUID
    let changes: [SlotChange]
    /// The records whose derived side of a relationship the save changed
    /// (``CommittedState/appendRelinkedRecords(by:to:)``): what a merging
    /// context reloads besides the records the save wrote.
    let relinked: [RecordKey]

    init(_ changes: [SlotChange], sequence: UInt64, storeID: UUID, relinked: [RecordKey] = []) {
        self.changes = changes
        self.sequence = sequence
        self.storeID = storeID
        self.relinked = relinked
    }

    /// The records the save inserted.
    public var inserted: [ObjectID] { ids { if case .insert = $0 { true } else { false } } }
    /// The records the save updated.
    public var updated: [ObjectID] { ids { if case .update = $0 { true } else { false } } }
    /// The records the save deleted.
    public var deleted: [ObjectID] { ids { if case .delete = $0 { true } else { false } } }

    private func ids(of kind: (SlotChange) -> Bool) -> [ObjectID] {
        changes.lazy.filter(kind).map { ObjectID(storeID: storeID, entity: $0.entity, key: $0.key) }
    }

    public static func == (lhs: StoreChanges, rhs: StoreChanges) -> Bool {
        lhs.sequence == rhs.sequence && lhs.storeID == rhs.storeID
            && lhs.inserted == rhs.inserted && lhs.updated == rhs.updated && lhs.deleted == rhs.deleted
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeID)
        hasher.combine(sequence)
    }
}

/// Saves between their write to the journal and their apply to the
/// committed state (``Store/applyWrittenSaves(through:)``).
struct WrittenSaves: Sendable {
    /// The changes of each save written and not yet applied.
    var unapplied: [UInt64: [SlotChange]] = [:]
    /// The changes of saves applied by another save's thread, for their
    /// own thread to collect.
    var results: [UInt64: StoreChanges] = [:]
}

/// Records another save changed or deleted since a context loaded them
/// (``CommitPlan``): nothing was written.
struct SaveConflict: Error {
    var conflicts: [CommitConflict]
}

/// A LogStore store: Core Data's persistent container and coordinator in one.
///
/// It opens one file, checks it against the model (recording a lightweight
/// migration), rebuilds the committed state from the journal, and serializes
/// saves: each save is one journal transaction, applied to the committed state
/// only once it is durable, so no reader ever sees half a save.
///
/// ```swift
/// let store = try Store(path: "inventory.logstore", model: model)
/// let context = store.newContext()
/// let item = try context.insert(Item.self)
/// item.itemName = "Chair"
/// try context.save()
/// ```
public final class Store: Sendable {
    public let path: String
    public let model: Model
    public var storeID: UUID { cachedStoreID }
    /// What opening the file found at its end (see ``Journal/recovery``).
    public var recovery: RecoveryReport { journal.recovery }

    let journal: Journal
    // Not private: Store+Compaction.swift uses the state and the locks too.
    let state: Protected<CommittedState>
    /// Held for a whole save, so version checks and appends never interleave.
    /// A bare mutex, not a `Protected<Void>`: ThreadSanitizer reported the
    /// zero-sized value's exclusive accesses under the lock as a race.
    let writeLock = Monitor()
    private let observers = Protected<[UInt64: @Sendable (StoreChanges) -> Void]>([:])
    private let nextObserver = Atomic<UInt64>(1)
    /// Each entity's symbols, interned once at open: saves look them up by
    /// slot instead of hashing names.
    /// Per entity, in the model's order, its names as journal symbols.
    /// The journal's symbols of each entity's names, by entity index.
    let entitySymbols: [EntitySymbols]
    private let cachedStoreID: UUID
    private let mainContextBox = MainContextBox()
    /// Records written or linked to by saves that wait for their flush
    /// (group commit): a save touching one waits for that save to apply.
    private let inFlight = Protected<InFlightRecords>(InFlightRecords())
    /// The last sequence number whose save is applied to `state`.
    let appliedThrough: Protected<UInt64>
    /// Saves written to the journal and not yet applied, by sequence number,
    /// and the results of those applied for another save's thread.
    let written = Protected<WrittenSaves>(WrittenSaves())
    /// Held while saves are applied, so they apply in sequence order.
    let applyOrder = Monitor()
    /// Signalled when saves are applied or dropped: a compaction waits here.
    let applied: Monitor.Condition
    /// One compaction at a time, and the automatic policy's bookkeeping.
    let compactions = CompactionCoordinator()
    /// Transactions read at open: the journal after the snapshot.
    let transactionsReplayed: Int

    static let schemaEntity = "__Schema"
    /// The record whose fields reserve keys, one field per entity (FORMAT.md §5.5).
    static let keyReservationEntity = "__Keys"
    static let schemaAttribute = "definition"

    /// Opens (creating if needed) the store at `path` for `model`.
    ///
    /// - Throws: `.modelMismatch` listing every difference when the file was
    ///   written with a model this one cannot migrate to; `.transformerFailed`
    ///   when a transformable attribute names no registered transformer; any
    ///   error of ``Journal/init(path:options:)``.
    public convenience init(path: String, model: Model, options: JournalOptions = JournalOptions()) throws(LogStoreError) {
        for entity in model.entities {
            for attribute in entity.attributes {
                if case .transformable(let name) = attribute.type, !ValueTransformers.isRegistered(name) {
                    throw LogStoreError(.transformerFailed, "\(entity.name).\(attribute.name) names the value transformer \"\(name)\", which is not registered; call ValueTransformers.register(_:named:) before opening \(path)", path: path, entity: entity.name, attribute: attribute.name)
                }
            }
        }
        try self.init(journal: Journal(path: path, options: options), model: model)
    }

    /// Opens the store on an opened journal, which it closes on failure.
    init(journal: Journal, model: Model) throws(LogStoreError) {
        let path = journal.path
        let options = journal.options
        var state = CommittedState(model: model)
        var storedSchema: StoredSchema?
        var replayed = 0
        do throws(LogStoreError) {
            if let snapshot = journal.snapshot, let index = journal.takeSnapshotIndex() {
                try state.load(index, from: snapshot)
                if !index.schema.isEmpty {
                    do throws(LogStoreError) {
                        storedSchema = try StoredSchema.decode(Data(index.schema), path: path)
                    } catch {
                        throw LogStoreError(.corruptSnapshot, "the model stored in the snapshot index of \(path) does not decode: \(error.message)", path: path, details: [error])
                    }
                }
            }
            // What delete runs may visit: every record the snapshot and the
            // replayed inserts hold, and room for a writer's slips.
            var runKeysAllowed = state.liveRecordCount + (1 << 20)
            var runsFailure: LogStoreError?
            try journal.forEachTransaction { transaction in
                guard runsFailure == nil else { return }
                replayed += 1
                for change in transaction.changes {
                    let entityName = journal.name(of: change.recordID.entity)
                    if entityName == Store.schemaEntity {
                        storedSchema = (try? Store.recordedSchema(in: change, path: path)) ?? storedSchema
                        continue
                    }
                    if entityName == Store.keyReservationEntity {
                        Store.replayReservation(change, into: &state, model: model, journal: journal)
                        continue
                    }
                    if case .deleteRun(let first, let count) = change {
                        if let name = entityName, let entity = model.entitiesByName[name] {
                            runKeysAllowed -= state.applyDeleteRun(entity, keys: first.key..<(first.key + count), version: transaction.sequence)
                            // A writer's runs name records that are live, each deleted once.
                            guard runKeysAllowed >= 0 else {
                                runsFailure = LogStoreError(.corruptFrame, "the delete runs of transaction \(transaction.sequence) and those before it in \(path) name more keys than the store ever held records, which no writer does: the file was damaged or crafted; restore it from a backup", path: path)
                                return
                            }
                        }
                    } else if let slotChange = Store.resolve(change, model: model, journal: journal) {
                        if case .insert = slotChange { runKeysAllowed += 1 }
                        state.apply(slotChange, version: transaction.sequence)
                    }
                }
                state.settleIndexes()
            }
            if let runsFailure { throw runsFailure }
            // Keys that frames cut off by salvage gave out stay given out.
            if let reservation = journal.keysCutOff.reservation(in: journal) {
                Store.replayReservation(reservation, into: &state, model: model, journal: journal)
                if options.access == .readWrite { _ = try journal.append([reservation]) }
            }
            // Replaying an update reads its record's snapshot block; a block
            // that failed to read leaves that record incomplete, so the open
            // fails rather than hand out a store that would refuse saves.
            try journal.snapshot?.checkReadable()
            if journal.header.readVersion < FileLayout.decimalVersion { state.convertLegacyDecimals() }
            if journal.snapshot != nil, journal.header.writeVersion < FileLayout.destinationReferenceVersion {
                state.legacyReferenceDestinations = model.entities.map { EntitySymbols($0, journal: journal).destinations }
            }
            try state.checkServing()
        } catch {
            journal.close()
            throw error
        }
        self.path = path
        self.model = model
        self.journal = journal
        self.state = Protected(state)
        self.cachedStoreID = journal.storeID
        self.entitySymbols = model.entities.map { EntitySymbols($0, journal: journal) }
        self.applied = Monitor.Condition(applyOrder)
        self.appliedThrough = Protected(journal.lastSequence)
        self.transactionsReplayed = replayed

        let schema = self.storedSchema
        if let storedSchema {
            let differences = storedSchema.differences(to: schema)
            guard differences.isEmpty else {
                journal.close()
                let list = differences.map { "- \($0)" }.joined(separator: "\n")
                throw LogStoreError(.modelMismatch, "\(path) was written with a model this one cannot open without losing data (\(differences.count) difference\(differences.count == 1 ? "" : "s")):\n\(list)\nOpen it with the model it was written with, or migrate it by hand.", path: path)
            }
        }
        if storedSchema != schema, options.access == .readWrite {
            // A new store, or a lightweight migration: record the model.
            let id = RecordID(entity: journal.symbol(for: Store.schemaEntity), key: 1)
            let field = Field(journal.symbol(for: Store.schemaAttribute), .data(schema.encoded()))
            do throws(LogStoreError) {
                try journal.append([storedSchema == nil ? .insert(id, [field]) : .update(id, [field])])
                appliedThrough.withLock { $0 = journal.lastSequence }
            } catch {
                journal.close()
                throw error
            }
        }
        if journal.header.readVersion < FileLayout.decimalVersion, options.access == .readWrite, model.hasDecimalAttributes {
            // Its decimals are text in the file; saves would write decimal
            // values, which readers of its version misread. A compaction
            // rewrites it, values converted, as the current version.
            do throws(LogStoreError) {
                _ = try compact()
            } catch {
                journal.close()
                throw LogStoreError(error.kind, "\(path) is a format version \(journal.header.readVersion) file whose Decimal values must be rewritten as format version \(FileLayout.createdVersion) before it can be written, and rewriting it failed: \(error.message)", path: path, details: [error])
            }
        }
    }

    deinit { journal.close() }

    /// Closes the file, after a compaction under way stops (its new file is
    /// removed; the store stays as it was). Saves after this fail with `.closed`.
    /// Under group commit, saves that wrote their transaction and wait for
    /// a flush are flushed first, and succeed; close returns once that
    /// flush has.
    /// The store also lets go of its ``mainContext`` (which holds the store),
    /// so both are freed once the app lets go of them.
    public func close() {
        compactions.close()
        journal.close()
        mainContextBox.release()
    }

    // MARK: - Contexts

    /// The context for the main actor: use it for the UI, and turn IDs from
    /// background contexts into its objects.
    @MainActor public var mainContext: ObjectContext { mainContextBox.context(for: self) }

    /// A new context confined to the caller's isolation domain: Swift 6 keeps
    /// it, and its objects, from crossing to another thread.
    public func newContext() -> ObjectContext { ObjectContext(store: self) }

    /// A new context with its own serial queue, used through `perform`.
    public func newBackgroundContext() -> BackgroundContext { BackgroundContext(store: self) }

    /// Calls `handler` after every save that wrote a transaction, with what
    /// it changed, on the saving thread (a save whose merge policy gave up
    /// every change writes none, and calls no handler). Contexts merge such changes when asked (``ObjectContext/mergeChanges(from:)-(StoreChanges)``).
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (StoreChanges) -> Void) -> UInt64 {
        let token = nextObserver.wrappingAdd(1, ordering: .relaxed).oldValue
        observers.withLock { $0[token] = handler }
        return token
    }

    /// Stops calling the handler registered under `token`.
    public func removeObserver(_ token: UInt64) { _ = observers.withLock { $0.removeValue(forKey: token) } }

    // MARK: - Reading committed state

    /// The entity of `id`, found by its index when it has one.
    func entity(of id: ObjectID) throws(LogStoreError) -> EntityDescription {
        if id.entityIndex >= 0, id.entityIndex < model.entities.count, case let entity = model.entities[id.entityIndex], entity.name == id.entityName {
            return entity
        }
        return try model.entity(named: id.entityName)
    }

    /// The committed state as it is now, for a fetch to read without
    /// holding the lock (saves meanwhile copy what they change).
    func snapshot() throws(LogStoreError) -> StateSnapshot {
        let state = self.state.withLock { $0 }
        try state.checkServing()
        return StateSnapshot(state: state, model: model)
    }

    /// Throws once a save could not be applied in memory
    /// (``CommittedState/failure``): the store then serves nothing.
    func checkServing() throws(LogStoreError) {
        try state.withLock { state throws(LogStoreError) in try state.checkServing() }
    }

    /// The record with `id`; nil when there is none, when its block cannot
    /// be read, or when the store no longer serves records
    /// (``checkServing()``). ``lookup(_:)`` tells these apart.
    func record(_ id: ObjectID) -> Record? {
        if case .found(let record) = lookup(id) { return record }
        return nil
    }

    /// What looking a record up found.
    enum RecordLookup {
        case found(Record)
        /// No live record has the ID.
        case absent
        /// The record exists, but its block could not be read (the failure
        /// of the snapshot it was found in), or the store no longer serves
        /// records.
        case unreadable(LogStoreError)
    }

    /// The record with `id`, found under the state lock and read after it:
    /// reading its block may wait for the disk, and a save, or another
    /// thread's read, must not wait for that. A failed read is reported by
    /// the snapshot the record was found in, which a compaction finishing
    /// meanwhile does not change.
    func lookup(_ id: ObjectID) -> RecordLookup {
        let index = id.entityIndex >= 0 && id.entityIndex < model.entities.count && model.entities[id.entityIndex].name == id.entityName
            ? id.entityIndex : model.entities.firstIndex { $0.name == id.entityName }
        guard let index else { return .absent }
        let found = state.withLock { state -> Result<EntityTable.FoundRecord?, LogStoreError> in
            if let failure = state.failure { return .failure(failure) }
            return .success(state.withTable(index) { $0.find(id.key) })
        }
        switch found {
        case .failure(let failure): return .unreadable(failure)
        case .success(nil): return .absent
        case .success(let found?): return found.read()
        }
    }
    /// Starts loading where the record of `id` is into the cache: a context
    /// making a fault calls it, so that the miss overlaps making the object.
    func prefetchRecord(_ id: ObjectID) {
        guard id.entityIndex >= 0, id.entityIndex < model.entities.count else { return }
        state.withLock { $0.withTable(id.entityIndex) { $0.prefetch(id.key) } }
    }

    /// Starts loading the values of `id`'s record into the cache, once
    /// ``prefetchRecord(_:)`` brought its table entry in.
    func prefetchValues(_ id: ObjectID) {
        guard id.entityIndex >= 0, id.entityIndex < model.entities.count else { return }
        state.withLock { $0.withTable(id.entityIndex) { $0.prefetchValues(id.key) } }
    }

    /// The keys of `entity`'s live records, in increasing order.
    ///
    /// The table is taken under the lock and listed after it: listing may
    /// read key-directory leaves, and a save must not wait for the disk.
    func keys(of entity: String) throws(LogStoreError) -> [UInt64] {
        guard let index = model.entitiesByName[entity]?.index else { return [] }
        let table = state.withLock { $0.tables[index] }
        return try table.keys()
    }

    func count(of entity: String) -> Int { state.withLock { $0.count(of: entity) } }

    func pointers(from source: String, slot: Int, to target: UInt64) -> Set<UInt64> {
        state.withLock { $0.pointers(from: source, slot: slot, to: target) }
    }

    /// A key for a new object of `entity`, never handed out before and
    /// never to be: keys are reserved in the journal, durably, before they
    /// are handed out, so an ID of an object that was never saved (the
    /// process crashed first) never names another object later.
    func allocateKey(for entity: EntityDescription) throws(LogStoreError) -> UInt64 {
        while true {
            if let key = try state.withLock({ state throws(LogStoreError) in try state.allocateReservedKey(for: entity, path: path) }) { return key }
            try reserveKeys(for: entity)
        }
    }

    /// Writes a reservation of the next keys of `entity` (the record
    /// `__Keys`, FORMAT.md §5.5), as durable as a save. Reservations grow
    /// from 64 keys to 65,536 as an entity takes more, so a bulk insert
    /// writes few of them; a crash skips at most one reservation's keys.
    private func reserveKeys(for entity: EntityDescription) throws(LogStoreError) {
        guard journal.options.access == .readWrite else {
            // Nothing from a read-only store is ever saved: keys need no reservation.
            state.withLock { $0.reserveKeys(of: entity.index, below: $0.nextReservation(for: entity), handedOut: false) }
            return
        }
        try writeLock.withLock { () throws(LogStoreError) in
            let end = state.withLock { state -> UInt64? in
                state.nextKeys[entity.index] < state.reservedKeys[entity.index] ? nil : state.nextReservation(for: entity)
            }
            guard let end else { return }  // another thread reserved meanwhile
            let id = RecordID(entity: journal.symbol(for: Store.keyReservationEntity), key: 1)
            let field = Field(journal.symbol(for: entity.name), .int64(Int64(bitPattern: end)))
            try journal.append([.update(id, [field])])
            state.withLock { $0.reserveKeys(of: entity.index, below: end, handedOut: false) }
        }
    }

    func id(_ entity: String, _ key: UInt64) -> ObjectID {
        let description = model.entitiesByName[entity]
        return ObjectID(storeID: cachedStoreID, entityName: entity, key: key, entityHash: description?.nameHash, entityIndex: description?.index ?? -1)
    }

    func id(_ entity: EntityDescription, _ key: UInt64) -> ObjectID {
        ObjectID(storeID: cachedStoreID, entity: entity, key: key)
    }

    // MARK: - Saving

    /// Checks `save` against the committed state, completes it with the
    /// delete rules (``CommitPlan``), writes it as one journal transaction
    /// and applies it. Throws ``SaveConflict`` (nothing written) when a
    /// record it writes or links to changed or went since the context
    /// loaded it (versions only when `checkingVersions`), and
    /// `.validationFailed` when a `deny` rule refuses a delete.
    ///
    /// The committed state changes only once the save is durable, so no
    /// reader sees a save that a power cut could still take back. Under
    /// group commit the store's write lock is released while the save waits
    /// for its flush, so that concurrent saves share one; saves then apply
    /// in sequence order, and a save that touches a record of a save still
    /// waiting for its flush waits for that save to apply and checks again,
    /// so that every check sees the records as they will be.
    func commit(_ save: PendingSave, checkingVersions: Bool) throws -> CommitResult {
        try commit(checkingVersions: checkingVersions, preparedAlone: false) { save }
    }

    /// Commits the save `prepare` makes, called under the store's write
    /// lock. With `preparedAlone`, `prepare` runs only once every save
    /// written has applied (waited for with the lock held, so no other save
    /// can keep one in flight), so the committed state it reads is exactly
    /// what the save will change: a batch request chooses its records
    /// there, as an SQL statement does inside its transaction.
    ///
    /// With `resolve` (only with `preparedAlone`), conflicts are handed to
    /// it under the lock and the save is prepared again, until it commits
    /// or `resolve` throws: no other save can change the records between
    /// the resolution and the commit, so a save whose merge policy resolves
    /// conflicts cannot keep losing races to other saves.
    func commit(checkingVersions: Bool, preparedAlone: Bool, prepare: () throws -> PendingSave, resolve: ((SaveConflict) throws -> Void)? = nil) throws -> CommitResult {
        precondition(resolve == nil || preparedAlone, "conflicts are resolved under the lock only when nothing else is in flight")
        let groupCommit = if case .groupCommit = journal.options.durability { true } else { false }
        // A snapshot block that failed to read after open may have hidden a
        // record from this save's checks: refuse rather than build on it.
        try state.withLock { $0.tables.first?.snapshot }?.checkReadable()
        try checkServing()
        while true {
            // Under group commit, count this save in with the journal before
            // queueing for the store's lock, so that a flush being gathered
            // waits for it rather than going out with fewer saves.
            var announced = false
            if groupCommit {
                journal.announceWrite()
                announced = true
            }
            defer { if announced { journal.withdrawWrite() } }
            let step = try writeLock.withLock { () throws -> CommitStep in
                if preparedAlone {
                    // Waited for under the lock, so that no other save is
                    // written meanwhile: under steady saves one might always
                    // be in flight otherwise. Applying needs no write lock;
                    // a flush being gathered stops waiting for this save.
                    if announced {
                        journal.withdrawWrite()
                        announced = false
                    }
                    waitUntilEveryWrittenSaveApplied()
                }
                func plan(_ save: PendingSave) -> CommitPlan.Outcome {
                    inFlight.withLock { inFlight in
                        state.withLock { CommitPlan.make(save, state: $0, inFlight: inFlight, checkingVersions: checkingVersions) }
                    }
                }
                var outcome = plan(try prepare())
                while case .conflicts(let conflicts) = outcome, let resolve {
                    try resolve(SaveConflict(conflicts: conflicts))
                    outcome = plan(try prepare())
                }
                // The plan reads the records it changes, from their blocks:
                // one that failed to read leaves the plan unfounded.
                try state.withLock { $0.tables.first?.snapshot }?.checkReadable()
                let plan: CommitPlan
                switch outcome {
                case .commit(let made): plan = made
                case .waitFor(let sequence): return .waitFor(sequence)
                case .conflicts(let conflicts): throw SaveConflict(conflicts: conflicts)
                case .denied(let denials): throw denialError(denials)
                }
                // Nothing left to write (a merge policy gave up every change,
                // or a batch chose no record): no transaction, whose frame
                // would record nothing and take a sequence number.
                if plan.changes.isEmpty {
                    let unchanged = StoreChanges([], sequence: appliedThrough.withLock { $0 }, storeID: cachedStoreID)
                    return .applied(CommitResult(changes: unchanged, adjusted: plan.adjusted))
                }
                let payload = SavePayload(changes: plan.changes, symbols: entitySymbols)
                guard groupCommit else {
                    // Durable once appended: applied before the lock goes, so
                    // the next save's checks see it.
                    let sequence = try journal.append(payload, at: Date())
                    written.withLock { $0.unapplied[sequence] = plan.changes }
                    return .applied(CommitResult(changes: applyWrittenSaves(through: sequence), adjusted: plan.adjusted))
                }
                let wasAnnounced = announced
                announced = false  // the write takes it over, also when it fails
                let sequence = try journal.write(payload, announced: wasAnnounced)
                inFlight.withLock { inFlight in
                    for change in plan.changes { change.forEachRecord { inFlight.records[$0] = sequence } }
                }
                // Queued in sequence order: each save is queued before the next
                // can be written.
                written.withLock { $0.unapplied[sequence] = plan.changes }
                return .written(sequence, plan.adjusted)
            }
            let result: CommitResult
            switch step {
            case .waitFor(let sequence):
                if announced { journal.withdrawWrite() }
                announced = false
                waitUntilApplied(sequence)
                continue
            case .applied(let applied):
                result = applied
            case .written(let sequence, let adjusted):
                do throws(LogStoreError) {
                    try journal.waitUntilDurable(sequence)
                } catch {
                    dropUnapplied(sequence)
                    throw error
                }
                result = CommitResult(changes: applyWrittenSaves(through: sequence), adjusted: adjusted)
            }
            if !result.changes.changes.isEmpty {
                for handler in observers.withLock({ Array($0.values) }) { handler(result.changes) }
                compactInBackgroundIfDue()
            }
            return result
        }
    }

    private enum CommitStep {
        case waitFor(UInt64)
        case applied(CommitResult)
        case written(UInt64, [RecordKey])
    }

    /// Returns once every save written is applied, or dropped after a
    /// failed flush. Called under the write lock, no save is written
    /// meanwhile, so then none is in flight.
    func waitUntilEveryWrittenSaveApplied() {
        applyOrder.lock()
        defer { applyOrder.unlock() }
        while !written.withLock({ $0.unapplied.isEmpty }) { applied.wait() }
    }

    /// Returns once the written save `sequence` is applied, or dropped.
    private func waitUntilApplied(_ sequence: UInt64) {
        applyOrder.lock()
        defer { applyOrder.unlock() }
        while written.withLock({ $0.unapplied[sequence] != nil }) { applied.wait() }
    }

    /// The error for deletes that `deny` rules refuse, one detail each.
    private func denialError(_ denials: [DeleteDenial]) -> LogStoreError {
        .saveRefused(denials.map { denial in
            let relationship = model.entities[denial.record.entity].relationships[denial.relationship]
            return .deleteDenied(id(denial.record), relationship: relationship.name, referrers: denial.referrers.map { id(relationship.destination, $0) })
        })
    }

    /// The ID of `record`.
    func id(_ record: RecordKey) -> ObjectID { id(model.entities[record.entity], record.key) }

    /// Applies to the committed state, in sequence order, every written
    /// save up to `sequence`, which is durable (and so is every save before
    /// it: a flush covers all frames written before it), and returns the
    /// changes of save `sequence`.
    ///
    /// The first of a flush's savers to get here applies the saves of the
    /// others before it too, and the others find theirs done. Each waiting
    /// for its turn instead woke every saver after each apply, and under
    /// group commit those wakeups cost more than the flush they shared.
    private func applyWrittenSaves(through sequence: UInt64) -> StoreChanges {
        applyOrder.lock()
        defer { applyOrder.unlock() }
        let first = appliedThrough.withLock { $0 } + 1
        if first <= sequence {
            let saves = written.withLock { written in
                (first...sequence).map { written.unapplied.removeValue(forKey: $0) ?? [] }
            }
            let results = state.withLock { state in
                let results = zip(first...sequence, saves).map { sequence, changes in
                    StoreChanges(changes, sequence: sequence, storeID: cachedStoreID, relinked: state.apply(changes, version: sequence))
                }
                state.settleIndexes()
                return results
            }
            forgetInFlight(zip(first...sequence, saves))
            // Results for the other saves' threads to collect; a sequence
            // with no save (a key reservation) has no thread waiting.
            written.withLock { written in
                for (result, changes) in zip(results, saves).dropLast() where !changes.isEmpty { written.results[result.sequence] = result }
            }
            appliedThrough.withLock { $0 = sequence }
            applied.broadcast()
            return results.last!
        }
        return written.withLock { $0.results.removeValue(forKey: sequence) } ?? StoreChanges([], sequence: sequence, storeID: cachedStoreID)
    }

    /// Forgets a save whose flush failed: it is never applied.
    private func dropUnapplied(_ sequence: UInt64) {
        applyOrder.lock()
        defer { applyOrder.unlock() }
        guard let changes = written.withLock({ $0.unapplied.removeValue(forKey: sequence) }) else { return }
        forgetInFlight([(sequence, changes)])
        applied.broadcast()
    }

    /// Saves no longer in flight (group commit): applied, or failed.
    private func forgetInFlight(_ saves: some Sequence<(UInt64, [SlotChange])>) {
        guard case .groupCommit = journal.options.durability else { return }
        inFlight.withLock { inFlight in
            for (sequence, changes) in saves {
                for change in changes {
                    change.forEachRecord { record in
                        if inFlight.records[record] == sequence { inFlight.records[record] = nil }
                    }
                }
            }
        }
    }

    /// Takes in a key reservation read from the journal: its keys count as
    /// handed out, since objects with them may exist outside the store.
    private static func replayReservation(_ change: RecordChange, into state: inout CommittedState, model: Model, journal: Journal) {
        guard case .update(_, let fields) = change else { return }
        for field in fields {
            guard let name = journal.name(of: field.attribute), let entity = model.entitiesByName[name],
                  case .int64(let end) = field.value, end > 0 else { continue }
            state.reserveKeys(of: entity.index, below: UInt64(end), handedOut: true)
        }
    }

    /// A journal record change with names resolved against `model`; nil for
    /// an entity the model does not have, and for a delete run, which
    /// ``CommittedState/applyDeleteRun(_:keys:version:)`` applies.
    private static func resolve(_ change: RecordChange, model: Model, journal: Journal) -> SlotChange? {
        guard let name = journal.name(of: change.recordID.entity), let entity = model.entitiesByName[name] else { return nil }
        func slots(_ fields: [Field]) -> [(Int, StoredValue)] {
            fields.compactMap { field -> (Int, StoredValue)? in
                guard let attribute = journal.name(of: field.attribute) else { return nil }
                switch entity.property(named: attribute) {
                case .attribute(let index): return (index, field.value)
                case .relationship(let index): return (entity.attributes.count + index, field.value)
                default: return nil
                }
            }
        }
        switch change {
        case .insert(let id, let fields):
            var values = entity.defaults + Array(repeating: StoredValue.null, count: entity.relationships.count)
            for attribute in entity.attributes.indices where entity.attributes[attribute].isTransient { values[attribute] = .null }
            // Attributes added by a migration since this record was written keep their defaults.
            for (slot, value) in slots(fields) { values[slot] = value }
            return .insert(entity: entity, key: id.key, values: values)
        case .update(let id, let fields):
            return .update(entity: entity, key: id.key, slots: slots(fields))
        case .delete(let id):
            return .delete(entity: entity, key: id.key)
        case .deleteRun:
            return nil
        }
    }
}

/// A value handed to another thread on purpose, where the receiver only
/// lets go of it.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Holds the main actor's context, made on first use, until the store closes.
///
/// The context holds its store, so holding the context here is a cycle:
/// ``Store/close()`` lets go of it, or neither would ever be freed.
/// `@unchecked Sendable`: the context is made and used on the main actor
/// only; `close()`, from any thread, only drops the reference, under the lock.
final class MainContextBox: @unchecked Sendable {
    private let lock = NSLock()
    private var context: ObjectContext?
    private var isReleased = false

    init() {}

    @MainActor func context(for store: Store) -> ObjectContext {
        lock.withLock {
            if let context { return context }
            let made = ObjectContext(store: store)
            made.confinement = .mainThread
            // After close, a context is still handed out (its saves fail
            // with .closed), but not kept, so no cycle forms again.
            if !isReleased { context = made }
            return made
        }
    }

    /// Lets go of the main context. The last reference may free it, which
    /// must happen on the main thread, where its objects may be in use: from
    /// another thread, the main queue lets go of it.
    func release() {
        // Held as a retain taken under the lock, not as a reference, so that
        // no strong reference is left here to be the last one off the main queue.
        let dropped: Unmanaged<ObjectContext>? = lock.withLock {
            defer { context = nil; isReleased = true }
            return context.map { Unmanaged.passRetained($0) }
        }
        guard let dropped else { return }
        guard !ObjectContext.isOnMainActor else { return dropped.release() }
        let handOver = UncheckedSendable(dropped)
        DispatchQueue.main.async { handOver.value.release() }
    }
}

