// The store's committed state: every live record's values, by ID.

/// One live record: its stored values in the entity's slot order
/// (attributes, then relationships), and the sequence number of the save
/// that last changed it, its version for optimistic locking.
struct Record: Sendable {
    var values: [StoredValue]
    var version: UInt64
}

/// A record change with names resolved to the model's slots.
enum SlotChange: Sendable {
    case insert(entity: EntityDescription, key: UInt64, values: [StoredValue])
    case update(entity: EntityDescription, key: UInt64, slots: [(Int, StoredValue)])
    case delete(entity: EntityDescription, key: UInt64)

    var entity: EntityDescription {
        switch self {
        case .insert(let entity, _, _), .update(let entity, _, _), .delete(let entity, _): entity
        }
    }

    var key: UInt64 {
        switch self {
        case .insert(_, let key, _), .update(_, let key, _), .delete(_, let key): key
        }
    }

    /// Whether applying the change reads the record it replaces: an update
    /// keeps the values it does not write, and a delete unlinks the record's
    /// stored relationships (``CommittedState/apply(_:version:)``). An
    /// insert's key is new.
    var readsOldRecord: Bool {
        switch self {
        case .insert: false
        case .update: true
        case .delete(let entity, _): entity.relationships.contains(where: \.isStored)
        }
    }
}

/// Every live record, reachable by entity and key in constant time, and the
/// reverse of each stored relationship (which records point at a target),
/// from which the side that is not stored is read.
struct CommittedState: Sendable {
    // Not private: CommittedState+Snapshot.swift reads and writes them too.
    /// One table per entity, in the model's order.
    var tables: [EntityTable]
    /// entity of the stored side → relationship slot → target key → source keys.
    var pointers: [String: [Int: [UInt64: Set<UInt64>]]] = [:]
    /// Per entity, the next key to hand out.
    var nextKeys: [UInt64]
    /// Per entity, the key below which keys are reserved in the journal
    /// (``Store/allocateKey(for:)``); a key at or past it needs a
    /// reservation first.
    var reservedKeys: [UInt64]
    /// Per entity, how many keys the next reservation takes: it doubles up
    /// to ``largestReservation``.
    var reservationSizes: [UInt64]
    static let firstReservation: UInt64 = 64
    static let largestReservation: UInt64 = 1 << 16
    /// Per entity, a secondary index of each indexed attribute.
    var indexes: [[SecondaryIndex]]
    /// Set while records come from a snapshot that an object-layer
    /// compaction before format version 4 wrote, whose references may name
    /// the source entity instead of the destination (FORMAT.md §12.2): by
    /// entity index, each slot's destination symbol. The next compaction
    /// writes those references right, and clears it.
    var legacyReferenceDestinations: [[Symbol?]]?
    let model: Model
    /// Why a change could not be applied: the record it changes is in a
    /// snapshot block that failed to read. The state is then behind the
    /// journal, so the store serves nothing from it (``checkServing()``).
    private(set) var failure: LogStoreError?

    init(model: Model) {
        self.model = model
        tables = Array(repeating: EntityTable(), count: model.entities.count)
        nextKeys = Array(repeating: 1, count: model.entities.count)
        reservedKeys = nextKeys
        reservationSizes = Array(repeating: Self.firstReservation, count: model.entities.count)
        indexes = model.entities.map { entity in
            entity.attributes.indices.filter { entity.attributes[$0].isIndexed && !entity.attributes[$0].isTransient }.map { SecondaryIndex(slot: $0) }
        }
    }

    func table(_ entity: EntityDescription) -> EntityTable { tables[entity.index] }

    /// The index of `slot` of `entity`, when the attribute is indexed.
    func index(_ entity: EntityDescription, slot: Int) -> SecondaryIndex? {
        indexes[entity.index].first { $0.slot == slot }
    }

    /// Merges what the last save added to each index; call after applying a save.
    mutating func settleIndexes() {
        for entity in indexes.indices where !indexes[entity].isEmpty {
            for index in indexes[entity].indices { indexes[entity][index].settle() }
        }
    }

    private func index(_ entity: String) -> Int? { model.entitiesByName[entity]?.index }

    /// Calls `body` with the table at `index`, in place. Reading
    /// `tables[index]` copied the table around each call that Swift cannot
    /// see into, retaining and releasing each of its buffers; on a lookup by
    /// ID, which reads the table three times, that was a tenth of the time.
    /// An exclusive access needs no copy.
    @inline(__always)
    mutating func withTable<Result>(_ index: Int, _ body: (inout EntityTable) -> Result) -> Result {
        body(&tables[index])
    }

    func record(_ entity: String, _ key: UInt64) -> Record? { index(entity).flatMap { tables[$0].record(key) } }

    func record(_ entity: EntityDescription, _ key: UInt64) -> Record? { tables[entity.index].record(key) }

    func version(_ entity: String, _ key: UInt64) -> UInt64? { index(entity).flatMap { tables[$0].version(key) } }

    func keys(of entity: String) throws(LogStoreError) -> [UInt64] {
        guard let index = index(entity) else { return [] }
        return try tables[index].keys()
    }

    func count(of entity: String) -> Int { index(entity).map { tables[$0].count } ?? 0 }

    /// The keys of `source` records whose stored relationship `slot` points at `target`.
    func pointers(from source: String, slot: Int, to target: UInt64) -> Set<UInt64> {
        pointers[source]?[slot]?[target] ?? []
    }

    /// A key never used by `entity` (nor given out before), from the keys
    /// reserved in the journal; nil when they are used up.
    ///
    /// - Throws: `.corruptFrame` when the keys reached ``RecordID/keyLimit``,
    ///   which only a key or reservation written into the file by something
    ///   other than LogStore can do.
    mutating func allocateReservedKey(for entity: EntityDescription, path: String) throws(LogStoreError) -> UInt64? {
        let key = nextKeys[entity.index]
        guard key < RecordID.keyLimit else {
            throw LogStoreError(.corruptFrame, "\(path) has given out every key of \(entity.name) below 2^62, which no store of LogStore's own reaches: a record key or key reservation in the file was not written by LogStore; run logstore-tool verify on it, and restore it from a backup", path: path, entity: entity.name)
        }
        guard key < reservedKeys[entity.index] else { return nil }
        nextKeys[entity.index] = key + 1
        return key
    }

    /// The reservation the next keys of `entity` need: its new end, never
    /// past ``RecordID/keyLimit``.
    func nextReservation(for entity: EntityDescription) -> UInt64 {
        min(nextKeys[entity.index] + reservationSizes[entity.index], RecordID.keyLimit)
    }

    /// Keys of `entity` below `end` are reserved (written, or read back
    /// from the journal at open, when they count as handed out). A
    /// reservation past ``RecordID/keyLimit`` (only a file LogStore did not
    /// write holds one) reserves the keys up to the limit.
    mutating func reserveKeys(of entity: Int, below requestedEnd: UInt64, handedOut: Bool) {
        let end = min(requestedEnd, RecordID.keyLimit)
        reservedKeys[entity] = max(reservedKeys[entity], end)
        if handedOut {
            nextKeys[entity] = max(nextKeys[entity], end)
        } else {
            reservationSizes[entity] = min(reservationSizes[entity] * 2, Self.largestReservation)
        }
    }

    /// Throws ``failure``, once a change could not be applied.
    func checkServing() throws(LogStoreError) {
        if let failure { throw failure }
    }

    /// Applies `change`; when the record it replaces, changes or deletes
    /// cannot be read, records ``failure`` instead, since applying it on
    /// top of nothing would lose the rest of the record, or the delete.
    mutating func apply(_ change: SlotChange, version: UInt64) {
        do throws(LogStoreError) {
            try applyReading(change, version: version)
        } catch {
            failure = failure ?? LogStoreError(.io, "a save written to the journal could not be applied in memory, so this store no longer serves reads or saves: \(error.message). The file holds the save: close the store and open it again", path: error.path, entity: change.entity.name, details: [error])
        }
    }

    private mutating func applyReading(_ change: SlotChange, version: UInt64) throws(LogStoreError) {
        let entity = change.entity
        let key = change.key
        let table = entity.index
        // Keys from a file are below the limit (ByteReader.readKey), and so
        // are those the store hands out, so the next one cannot overflow.
        nextKeys[table] = max(nextKeys[table], min(key, RecordID.keyLimit - 1) + 1)
        let slotCount = entity.attributes.count + entity.relationships.count
        switch change {
        case .insert(_, _, var values):
            if values.count < slotCount { values += Array(repeating: .null, count: slotCount - values.count) }
            if let old = try existingRecord(entity, key) { unindex(entity, key, old.values) }
            tables[table].set(key, Record(values: values, version: version))
            index(entity, key, values)
            for position in indexes[table].indices {
                indexes[table][position].set(key, values[indexes[table][position].slot])
            }
        case .update(_, _, let slots):
            guard var record = try existingRecord(entity, key) else { return }
            unindex(entity, key, record.values)
            for (slot, value) in slots where slot < record.values.count { record.values[slot] = value }
            record.version = version
            tables[table].set(key, record)
            index(entity, key, record.values)
            for position in indexes[table].indices where slots.contains(where: { $0.0 == indexes[table][position].slot }) {
                indexes[table][position].set(key, record.values[indexes[table][position].slot])
            }
        case .delete:
            guard tables[table].contains(key) else { return }
            // Only the links of the old record are needed, to drop them from
            // the pointers; a record without any is not read at all.
            if change.readsOldRecord {
                guard let old = try existingRecord(entity, key) else { return }
                unindex(entity, key, old.values)
            }
            tables[table].remove(key)
            for position in indexes[table].indices { indexes[table][position].remove(key) }
        }
    }

    /// Applies a delete run read from the journal (FORMAT.md §5.1): deletes
    /// the live records among `keys`, as that many deletes would, and
    /// returns how many keys it visited. A run from a file is untrusted and
    /// may name far more keys than the entity ever had: keys at or past the
    /// entity's next key hold no record and are not visited, and the run's
    /// keys are visited only when there are no more of them than live
    /// records, the live records otherwise. So one run costs at most the
    /// table, never the run; the caller bounds what all runs cost together
    /// (a writer's runs name live records only, each deleted once).
    mutating func applyDeleteRun(_ entity: EntityDescription, keys: Range<UInt64>, version: UInt64) -> Int {
        guard let last = keys.last else { return 0 }
        let table = entity.index
        let held = keys.lowerBound..<max(keys.lowerBound, min(keys.upperBound, nextKeys[table]))
        var visited = 0
        if tables[table].count == 0 || held.isEmpty {
            // Nothing to delete.
        } else if held.upperBound - held.lowerBound <= UInt64(tables[table].count) {
            for key in held { apply(.delete(entity: entity, key: key), version: version) }
            visited = held.count
        } else {
            var live: [UInt64] = []
            let snapshot = tables[table].snapshot, failedBefore = snapshot?.failedReadCount ?? 0
            tables[table].forEachKey { key in
                visited += 1
                if held.contains(key) { live.append(key) }
            }
            for key in live { apply(.delete(entity: entity, key: key), version: version) }
            // A key-directory leaf that could not be read left its records
            // live here though the run deletes them: the state no longer
            // matches the file, so the store stops serving.
            do throws(LogStoreError) {
                try snapshot?.checkNoReadFailed(since: failedBefore)
            } catch {
                failure = failure ?? LogStoreError(.io, "a delete run written to the journal could not be applied in memory, so this store no longer serves reads or saves: \(error.message). The file holds the save: close the store and open it again", path: error.path, entity: entity.name, details: [error])
            }
        }
        // Every key of a change counts as handed out (§12.5), the last included.
        if !held.contains(last) { apply(.delete(entity: entity, key: last), version: version) }
        return visited
    }

    /// How many live records there are, of every entity.
    var liveRecordCount: Int { tables.reduce(0) { $0 + $1.count } }

    /// The record of `entity` with `key`, or nil when there is none.
    ///
    /// - Throws: the snapshot's read failure (`.io`, `.corruptSnapshot`)
    ///   when there is one but its block cannot be read.
    private mutating func existingRecord(_ entity: EntityDescription, _ key: UInt64) throws(LogStoreError) -> Record? {
        if let record = withTable(entity.index, { $0.record(key) }) { return record }
        guard tables[entity.index].contains(key) else { return nil }
        try tables[entity.index].snapshot?.checkReadable()
        throw LogStoreError(.io, "the snapshot block holding \(entity.name)/p\(key) could not be read; close the store and open it again", entity: entity.name)
    }

    /// Reads the text a file of format version 1 or 2 stored for each
    /// Decimal attribute as the decimal it spells, so that every query
    /// path compares decimals as numbers; text that spells none becomes nil.
    mutating func convertLegacyDecimals() {
        for entity in model.entities {
            let slots = entity.attributes.indices.filter { if case .decimal = entity.attributes[$0].type { true } else { false } }
            guard !slots.isEmpty else { continue }
            // A file of version 1 or 2 has no paged snapshot, so no key is
            // left out here.
            var keys: [UInt64] = []
            tables[entity.index].forEachKey { keys.append($0) }
            for key in keys {
                guard let record = tables[entity.index].record(key) else { continue }
                let converted: [(Int, StoredValue)] = slots.compactMap { slot in
                    guard slot < record.values.count, case .string(let text) = record.values[slot] else { return nil }
                    return (slot, DecimalText.number(text).map(StoredValue.decimal) ?? .null)
                }
                if !converted.isEmpty { apply(.update(entity: entity, key: key, slots: converted), version: record.version) }
            }
        }
        settleIndexes()
    }

    private mutating func index(_ entity: EntityDescription, _ key: UInt64, _ values: [StoredValue]) {
        for (index, relationship) in entity.relationships.enumerated() where relationship.isStored {
            let slot = entity.attributes.count + index
            for target in Self.targets(values[slot]) {
                pointers[entity.name, default: [:]][slot, default: [:]][target, default: []].insert(key)
            }
        }
    }

    private mutating func unindex(_ entity: EntityDescription, _ key: UInt64, _ values: [StoredValue]) {
        for (index, relationship) in entity.relationships.enumerated() where relationship.isStored {
            let slot = entity.attributes.count + index
            for target in Self.targets(values[slot]) {
                pointers[entity.name]?[slot]?[target]?.remove(key)
            }
        }
    }

    static func targets(_ value: StoredValue) -> [UInt64] {
        switch value {
        case .reference(let id): [id.key]
        case .references(let ids): ids.map(\.key)
        default: []
        }
    }
}
