// What a save does to the committed state, decided under the store's write
// lock: the context's changes checked against the records as they are now,
// and completed by the delete rules over every referrer the store has.

/// A record named by its entity's position in the model and its key: how
/// the commit names records without making 56-byte IDs.
struct RecordKey: Hashable, Comparable, Sendable {
    var entity: Int
    var key: UInt64

    static func < (lhs: RecordKey, rhs: RecordKey) -> Bool { (lhs.entity, lhs.key) < (rhs.entity, rhs.key) }
}

extension SlotChange {
    /// Calls `body` with the record this change writes, then with each
    /// record its stored links point to.
    func forEachRecord(_ body: (RecordKey) -> Void) {
        body(RecordKey(entity: entity.index, key: key))
        forEachLinkTarget { body($0) }
    }

    /// Calls `body` with each record the stored links this change writes point to.
    func forEachLinkTarget(_ body: (RecordKey) -> Void) {
        let entity = entity
        switch self {
        case .insert(_, _, let values):
            for (position, relationship) in entity.relationships.enumerated() where relationship.isStored {
                let slot = entity.attributes.count + position
                guard slot < values.count else { continue }
                for key in CommittedState.targets(values[slot]) { body(RecordKey(entity: relationship.destinationIndex, key: key)) }
            }
        case .update(_, _, let slots):
            for (slot, value) in slots where slot >= entity.attributes.count {
                let relationship = entity.relationships[slot - entity.attributes.count]
                guard relationship.isStored else { continue }
                for key in CommittedState.targets(value) { body(RecordKey(entity: relationship.destinationIndex, key: key)) }
            }
        case .delete:
            break
        }
    }
}

extension CommittedState {
    /// Applies the changes of one save, in order, and returns the records
    /// whose derived side of a relationship they alter. A mutating method
    /// of its own, so that each change applies to the state in place, never
    /// to a copy of it.
    mutating func apply(_ changes: [SlotChange], version: UInt64) -> [RecordKey] {
        var relinked: [RecordKey] = []
        for change in changes {
            appendRelinkedRecords(by: change, to: &relinked)
            apply(change, version: version)
        }
        return relinked
    }

    /// Appends to `records` the records whose derived side of a relationship
    /// `change` alters: what its stored links point to before (read here,
    /// so call it before applying `change`) and after.
    func appendRelinkedRecords(by change: SlotChange, to records: inout [RecordKey]) {
        let entity = change.entity
        guard entity.relationships.contains(where: \.isStored) else { return }
        change.forEachLinkTarget { records.append($0) }
        let oldSlots: [Int]
        switch change {
        case .insert: return
        case .update(_, _, let slots): oldSlots = slots.map(\.0).filter { $0 >= entity.attributes.count }
        case .delete: oldSlots = entity.relationships.indices.map { entity.attributes.count + $0 }
        }
        guard !oldSlots.isEmpty, let old = record(entity, change.key) else { return }
        for slot in oldSlots where slot < old.values.count {
            let relationship = entity.relationships[slot - entity.attributes.count]
            guard relationship.isStored else { continue }
            for key in Self.targets(old.values[slot]) { records.append(RecordKey(entity: relationship.destinationIndex, key: key)) }
        }
    }
}

/// One record a save cannot write as its context computed it.
struct CommitConflict: Sendable, Hashable {
    enum Reason: Sendable, Hashable {
        /// Another save changed the record after the context loaded it.
        case changed(expected: UInt64, stored: UInt64)
        /// Another save deleted the record; the save updates or deletes it.
        case deleted
        /// Another save deleted the record; the save links `source` to it.
        case linkTarget(source: RecordKey)
    }

    var record: RecordKey
    var reason: Reason
}

/// A delete that the `deny` rule refuses: `relationship` of `record` still
/// holds `referrers` in the committed state.
struct DeleteDenial: Sendable, Hashable {
    var record: RecordKey
    var relationship: Int
    var referrers: [UInt64]
}

/// The records of unapplied saves (group commit): written to the journal,
/// waiting for their flush, not yet in the committed state.
struct InFlightRecords: Sendable {
    /// Each record such a save writes or links to, with the save's sequence.
    var records: [RecordKey: UInt64] = [:]

    var isEmpty: Bool { records.isEmpty }
}

/// A save as the store writes it.
///
/// ``make(_:state:inFlight:checkingVersions:)`` is where the rules of a
/// commit live, checked against the committed state (never against the
/// saving context's picture of it, which may be partial or stale):
///
/// - every record the save updates or deletes still exists, at the version
///   the context loaded (unless versions are not checked: `.objectWins`);
/// - every record the save links to still exists (or is inserted by it);
/// - every delete applies its relationships' delete rules to every
///   referrer in the committed state, as this save leaves it: `nullify`
///   removes the deleted record from the referrers' stored links,
///   `cascade` deletes the referrers (and so on), `deny` refuses the save
///   while any referrer remains, `noAction` leaves them.
struct CommitPlan: Sendable {
    /// What the plan decided.
    enum Outcome: Sendable {
        case commit(CommitPlan)
        case conflicts([CommitConflict])
        case denied([DeleteDenial])
        /// The save touches records of the unapplied save with this
        /// sequence: check again once it is applied (or dropped).
        case waitFor(UInt64)
    }

    /// The changes to write: the context's, completed by the delete rules.
    var changes: [SlotChange]
    /// Records the context did not change as it will find them: changes the
    /// delete rules added or altered, and the records those link to; and,
    /// when versions are not checked, records another save changed since
    /// the context loaded them. The saving context reloads these.
    var adjusted: [RecordKey]

    static func make(_ save: PendingSave, state: CommittedState, inFlight: InFlightRecords, checkingVersions: Bool) -> Outcome {
        var planner = Planner(save: save, state: state, inFlight: inFlight)
        planner.checkWrittenRecords(checkingVersions: checkingVersions)
        planner.checkLinkTargets()
        if let sequence = planner.blockingSequence { return .waitFor(sequence) }
        guard planner.conflicts.isEmpty else { return .conflicts(planner.conflicts) }
        planner.applyDeleteRules()
        if let sequence = planner.blockingSequence { return .waitFor(sequence) }
        guard planner.denials.isEmpty else { return .denied(planner.denials) }
        return .commit(planner.plan)
    }
}

/// The working state of ``CommitPlan/make(_:state:inFlight:checkingVersions:)``.
private struct Planner {
    let state: CommittedState
    let inFlight: InFlightRecords
    let expectedVersions: [RecordKey: UInt64]
    let deletedLinks: [RecordKey: [(Int, StoredValue)]]
    var changes: [SlotChange]
    var conflicts: [CommitConflict] = []
    var denials: [DeleteDenial] = []
    var adjusted: [RecordKey] = []
    /// The highest sequence of an unapplied save whose records this save touches.
    var blockingSequence: UInt64?
    /// The records this save inserts, made on first need.
    private var insertedRecords: Set<RecordKey>?
    /// The position of each record's change in `changes`, made on first need.
    private var positions: [RecordKey: Int]?
    /// Inserts the delete rules removed (a cascade reached them).
    private var dropped: Set<Int> = []
    /// What this save writes into each relationship slot, by slot, made on first need.
    private var writtenLinks: [SlotPlace: WrittenLinks] = [:]

    init(save: PendingSave, state: CommittedState, inFlight: InFlightRecords) {
        self.state = state
        self.inFlight = inFlight
        expectedVersions = save.expectedVersions
        deletedLinks = save.deletedLinks
        changes = save.changes
    }

    var plan: CommitPlan {
        let kept = dropped.isEmpty ? changes : changes.indices.filter { !dropped.contains($0) }.map { changes[$0] }
        return CommitPlan(changes: kept, adjusted: adjusted)
    }

    private var model: Model { state.model }

    /// Notes that the save touches `record`, which an unapplied save may hold.
    private mutating func touch(_ record: RecordKey) {
        guard !inFlight.isEmpty, let sequence = inFlight.records[record] else { return }
        blockingSequence = max(blockingSequence ?? 0, sequence)
    }

    private func isLive(_ record: RecordKey) -> Bool {
        state.tables[record.entity].contains(record.key)
    }

    // MARK: - Checks

    /// Every updated or deleted record exists, at the expected version.
    mutating func checkWrittenRecords(checkingVersions: Bool) {
        for change in changes {
            if case .insert = change { continue }
            let record = RecordKey(entity: change.entity.index, key: change.key)
            touch(record)
            guard isLive(record) else {
                conflicts.append(CommitConflict(record: record, reason: .deleted))
                continue
            }
            // A record is read here only when its version is checked or
            // applying the change reads it: then a block that fails to read
            // fails here, before anything is written. A batch delete of
            // records in the snapshot reads none of their blocks.
            let expected = expectedVersions[record]
            guard expected != nil || change.readsOldRecord else { continue }
            // Nil only when the record's snapshot block failed to read: the
            // store refuses the save once the plan is made (Store.commit).
            guard let version = state.tables[record.entity].version(record.key) else { continue }
            if let expected, expected != version {
                if checkingVersions {
                    conflicts.append(CommitConflict(record: record, reason: .changed(expected: expected, stored: version)))
                } else {
                    // Written over without a check: the context reloads what it did not write.
                    adjusted.append(record)
                }
            }
        }
    }

    /// Every link the save writes points at a live record or one it inserts.
    mutating func checkLinkTargets() {
        for change in changes {
            let source = RecordKey(entity: change.entity.index, key: change.key)
            change.forEachLinkTarget { target in checkTarget(target, from: source) }
        }
    }

    private mutating func checkTarget(_ target: RecordKey, from source: RecordKey) {
        touch(target)
        if isLive(target) { return }
        if insertedRecords == nil {
            insertedRecords = Set(changes.compactMap { change in
                if case .insert = change { RecordKey(entity: change.entity.index, key: change.key) } else { nil }
            })
        }
        if insertedRecords!.contains(target) { return }
        conflicts.append(CommitConflict(record: target, reason: .linkTarget(source: source)))
    }

    // MARK: - Delete rules

    /// Applies each deleted record's delete rules to its referrers in the
    /// committed state as this save leaves it, deleting in cascade until
    /// nothing more is reached.
    mutating func applyDeleteRules() {
        // Only deletes of entities with a rule to apply: most deletes (of
        // entities without relationships) cost nothing here.
        var queue: [RecordKey] = changes.compactMap { change in
            guard case .delete = change, change.entity.hasDeleteRules else { return nil }
            return RecordKey(entity: change.entity.index, key: change.key)
        }
        guard !queue.isEmpty else { return }
        var deleted = Set(changes.compactMap { change in
            if case .delete = change { RecordKey(entity: change.entity.index, key: change.key) } else { nil }
        })
        var next = 0
        while next < queue.count {
            let record = queue[next]
            next += 1
            let entity = model.entities[record.entity]
            guard entity.hasDeleteRules else { continue }
            let values = currentValues(of: record)
            for (position, relationship) in entity.relationships.enumerated() {
                let rule = relationship.definition.deleteRule
                if rule == .noAction { continue }
                // For nullify, only referrers that store a link need a write:
                // when this side is stored, the link goes with the record.
                // A relationship that is its own inverse is stored on both
                // ends: the referrers are found through the pointers.
                let isOwnInverse = relationship.destinationIndex == entity.index && relationship.inverseIndex == position
                if rule == .nullify && relationship.isStored && !isOwnInverse { continue }
                let slot = entity.attributes.count + position
                var targets = relationship.isStored && !isOwnInverse
                    ? CommittedState.targets(values.flatMap { slot < $0.count ? $0[slot] : nil } ?? .null)
                    : referrers(of: record, through: relationship)
                targets.removeAll { deleted.contains(RecordKey(entity: relationship.destinationIndex, key: $0)) }
                guard !targets.isEmpty else { continue }
                for key in targets { touch(RecordKey(entity: relationship.destinationIndex, key: key)) }
                switch rule {
                case .deny:
                    // Judged once the cascades are done: they may delete these too.
                    denials.append(DeleteDenial(record: record, relationship: position, referrers: targets.sorted()))
                case .cascade:
                    for key in targets {
                        let target = RecordKey(entity: relationship.destinationIndex, key: key)
                        guard deleted.insert(target).inserted else { continue }
                        cascadeDelete(target)
                        queue.append(target)
                    }
                case .nullify:
                    let destination = model.entities[relationship.destinationIndex]
                    let inverseSlot = destination.attributes.count + relationship.inverseIndex
                    for key in targets {
                        unlink(record.key, from: RecordKey(entity: destination.index, key: key), slot: inverseSlot)
                    }
                case .noAction:
                    break
                }
            }
        }
        // A referrer that a cascade deleted afterwards no longer denies.
        denials = denials.compactMap { denial in
            let destination = model.entities[denial.record.entity].relationships[denial.relationship].destinationIndex
            let remaining = denial.referrers.filter { !deleted.contains(RecordKey(entity: destination, key: $0)) }
            return remaining.isEmpty ? nil : DeleteDenial(record: denial.record, relationship: denial.relationship, referrers: remaining)
        }
    }

    /// The values `record` has as this save leaves it: the save's insert,
    /// or the committed record with the save's update applied.
    private mutating func currentValues(of record: RecordKey) -> [StoredValue]? {
        if let position = position(of: record) {
            switch changes[position] {
            case .insert(_, _, let values): return values
            case .update(_, _, let slots):
                guard var values = state.tables[record.entity].record(record.key)?.values else { return nil }
                for (slot, value) in slots where slot < values.count { values[slot] = value }
                return values
            case .delete:
                // The deleting context's links, where it loaded them.
                guard var values = state.tables[record.entity].record(record.key)?.values else { return nil }
                for (slot, value) in deletedLinks[record] ?? [] where slot < values.count { values[slot] = value }
                return values
            }
        }
        return state.tables[record.entity].record(record.key)?.values
    }

    /// The keys of records whose stored side of `relationship`'s inverse
    /// links to `record`, in the committed state as this save leaves it.
    private mutating func referrers(of record: RecordKey, through relationship: ResolvedRelationship) -> [UInt64] {
        let destination = model.entities[relationship.destinationIndex]
        let inverseSlot = destination.attributes.count + relationship.inverseIndex
        let written = writtenLinks(entity: destination.index, slot: inverseSlot)
        var keys = state.pointers(from: destination.name, slot: inverseSlot, to: record.key)
        if !written.sources.isEmpty { keys.subtract(written.sources) }
        if let added = written.targets[record.key] { keys.formUnion(added) }
        return keys.sorted()
    }

    /// The links this save writes into `slot` of `entity`'s records, made
    /// once per slot: a large save with many deletes must not go through
    /// all its changes for each.
    private mutating func writtenLinks(entity: Int, slot: Int) -> WrittenLinks {
        let place = SlotPlace(entity: entity, slot: slot)
        if let made = writtenLinks[place] { return made }
        var made = WrittenLinks()
        for change in changes where change.entity.index == entity {
            switch change {
            case .insert(_, _, let values):
                guard slot < values.count else { continue }
                made.record(change.key, values[slot])
            case .update(_, _, let slots):
                guard let written = slots.last(where: { $0.0 == slot }) else { continue }
                made.record(change.key, written.1)
            case .delete:
                continue
            }
        }
        writtenLinks[place] = made
        return made
    }

    /// Deletes `record`, which a cascade reached: its change becomes a
    /// delete (an insert of this save is dropped instead).
    private mutating func cascadeDelete(_ record: RecordKey) {
        let entity = model.entities[record.entity]
        noteAdjusted(record)
        if let position = position(of: record) {
            if case .insert = changes[position] {
                dropped.insert(position)
                return
            }
            changes[position] = .delete(entity: entity, key: record.key)
        } else {
            append(.delete(entity: entity, key: record.key), for: record)
        }
    }

    /// Removes the link to `deletedKey` from `slot` of `record`.
    private mutating func unlink(_ deletedKey: UInt64, from record: RecordKey, slot: Int) {
        noteAdjusted(record)
        guard let value = writeUnlinked(deletedKey, from: record, slot: slot) else { return }
        let place = SlotPlace(entity: record.entity, slot: slot)
        if writtenLinks[place] != nil { writtenLinks[place]!.record(record.key, value) }
    }

    /// Writes `slot` of `record` without `deletedKey`; the value written.
    private mutating func writeUnlinked(_ deletedKey: UInt64, from record: RecordKey, slot: Int) -> StoredValue? {
        let entity = model.entities[record.entity]
        if let position = position(of: record) {
            switch changes[position] {
            case .insert(let entity, let key, var values):
                values[slot] = Self.removing(deletedKey, from: values[slot])
                changes[position] = .insert(entity: entity, key: key, values: values)
                return values[slot]
            case .update(let entity, let key, var slots):
                let value: StoredValue
                if let index = slots.lastIndex(where: { $0.0 == slot }) {
                    value = Self.removing(deletedKey, from: slots[index].1)
                    slots[index].1 = value
                } else if let committed = state.tables[record.entity].record(record.key) {
                    value = Self.removing(deletedKey, from: committed.values[slot])
                    slots.append((slot, value))
                } else {
                    return nil
                }
                changes[position] = .update(entity: entity, key: key, slots: slots)
                return value
            case .delete:
                return nil
            }
        }
        guard let committed = state.tables[record.entity].record(record.key) else { return nil }
        let value = Self.removing(deletedKey, from: committed.values[slot])
        append(.update(entity: entity, key: record.key, slots: [(slot, value)]), for: record)
        return value
    }

    /// A stored link without `key`.
    private static func removing(_ key: UInt64, from value: StoredValue) -> StoredValue {
        switch value {
        case .reference(let id) where id.key == key: .null
        case .references(let ids): .references(ids.filter { $0.key != key })
        default: value
        }
    }

    /// Notes that the saving context must reload `record` and what it links to.
    private mutating func noteAdjusted(_ record: RecordKey) {
        adjusted.append(record)
        let entity = model.entities[record.entity]
        guard let values = state.tables[record.entity].record(record.key)?.values else { return }
        for (position, relationship) in entity.relationships.enumerated() where relationship.isStored {
            let slot = entity.attributes.count + position
            guard slot < values.count else { continue }
            for key in CommittedState.targets(values[slot]) {
                adjusted.append(RecordKey(entity: relationship.destinationIndex, key: key))
            }
        }
    }

    private mutating func position(of record: RecordKey) -> Int? {
        if positions == nil {
            var made: [RecordKey: Int] = [:]
            made.reserveCapacity(changes.count)
            for (position, change) in changes.enumerated() {
                made[RecordKey(entity: change.entity.index, key: change.key)] = position
            }
            positions = made
        }
        return positions![record]
    }

    private mutating func append(_ change: SlotChange, for record: RecordKey) {
        _ = position(of: record)
        positions![record] = changes.count
        changes.append(change)
    }
}

/// A relationship slot of an entity.
private struct SlotPlace: Hashable {
    var entity: Int
    var slot: Int
}

/// The links a save writes into one relationship slot: which records it
/// writes the slot of, and which of those link to each target.
private struct WrittenLinks {
    var sources: Set<UInt64> = []
    var targets: [UInt64: Set<UInt64>] = [:]

    mutating func record(_ source: UInt64, _ value: StoredValue) {
        sources.insert(source)
        for target in CommittedState.targets(value) { targets[target, default: []].insert(source) }
    }
}
