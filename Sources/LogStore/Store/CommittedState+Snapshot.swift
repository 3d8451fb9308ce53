// The committed state to and from a snapshot: what a compaction writes,
// what open reads instead of history, and the switch to a new snapshot.

extension CommittedState {
    /// The slot names of `entity`, in the order of a record's values.
    static func slotNames(_ entity: EntityDescription) -> [String] {
        entity.attributes.map(\.name) + entity.relationships.map(\.name)
    }

    // MARK: - Opening from a snapshot

    /// Locates the records of `index` in `snapshot`'s blocks (or takes the
    /// key directory the snapshot reads a leaf at a time), and takes the
    /// secondary indexes and relationship pointers as the snapshot stored
    /// them. Nothing is decoded, except the records of an entity whose slots
    /// changed since the snapshot was written (a lightweight migration):
    /// those are read now and brought to this model's slots, once.
    ///
    /// Records get as their version the one their block gives, never past
    /// the snapshot's sequence number; a migrated entity's records, inserted
    /// again with this model's slots, the snapshot's sequence number.
    mutating func load(_ index: SnapshotIndex, from snapshot: SnapshotFile) throws(LogStoreError) {
        for table in model.entities.indices { tables[table].attach(snapshot, keys: .none) }
        var cursor = BlockCursor(snapshot.directory)
        var asStored: [Int: EntityDescription] = [:]
        for (position, section) in index.entities.enumerated() {
            guard let entity = model.entitiesByName[section.name] else {
                // An entity this model lacks: the migration check refuses the
                // open unless it held nothing worth keeping.
                for _ in section.keys { _ = cursor.next() }
                continue
            }
            nextKeys[entity.index] = max(nextKeys[entity.index], section.nextKey)
            reservedKeys[entity.index] = max(reservedKeys[entity.index], section.nextKey)
            let keys: SnapshotKeys
            if let given = section.inSnapshot { keys = given } else { keys = .located(try Self.locate(section, of: entity, in: snapshot, cursor: &cursor)) }
            if section.slots == Self.slotNames(entity) {
                asStored[position] = entity
                tables[entity.index].attach(snapshot, keys: keys)
            } else {
                try migrate(keys, of: section, to: entity, from: snapshot, version: index.sequence)
            }
        }

        var loaded = Set<[Int]>()
        func position(of attribute: String, in stored: Int) -> (entity: EntityDescription, slot: Int, position: Int)? {
            guard let entity = asStored[stored], let slot = entity.attributeIndex(attribute),
                  let position = indexes[entity.index].firstIndex(where: { $0.slot == slot }) else { return nil }
            return (entity, slot, position)
        }
        for stored in index.indexes {
            guard let (entity, slot, position) = position(of: stored.attribute, in: stored.entity) else { continue }
            indexes[entity.index][position] = SecondaryIndex(slot: slot, values: stored.values, counts: stored.counts, keys: stored.keys)
            loaded.insert([entity.index, slot])
        }
        // A paged snapshot's indexes read a leaf at a time.
        for stored in snapshot.storedIndexes {
            guard let (entity, slot, position) = position(of: stored.attribute, in: stored.entity) else { continue }
            indexes[entity.index][position] = SecondaryIndex(slot: slot, stored: snapshot.pagedIndex(stored))
            loaded.insert([entity.index, slot])
        }
        // An index the snapshot lacks (the attribute became indexed since) is built now.
        for entity in asStored.values {
            for position in indexes[entity.index].indices where !loaded.contains([entity.index, indexes[entity.index][position].slot]) {
                let slot = indexes[entity.index][position].slot
                var wanted = Array(repeating: false, count: slot + 1)
                wanted[slot] = true
                var values: [StoredValue] = []
                var rebuilt = SecondaryIndex(slot: slot)
                tables[entity.index].forEachRecord { key, bytes in
                    EntityTable.decode(bytes, wanted: wanted, into: &values)
                    rebuilt.set(key, values.count > slot ? values[slot] : .null)
                }
                indexes[entity.index][position] = rebuilt
            }
        }

        for stored in index.pointers {
            guard let entity = asStored[stored.entity], let relationship = entity.relationships.firstIndex(where: { $0.name == stored.relationship }) else { continue }
            let slot = entity.attributes.count + relationship
            var next = 0
            var byTarget: [UInt64: Set<UInt64>] = [:]
            byTarget.reserveCapacity(stored.targets.count)
            for (target, count) in zip(stored.targets, stored.counts) {
                byTarget[target] = Set(stored.sources[next..<(next + count)])
                next += count
            }
            pointers[entity.name, default: [:]][slot] = byTarget
        }
        settleIndexes()
    }

    /// Where `section`'s listed keys are: the next records of `cursor`.
    private static func locate(_ section: SnapshotIndex.Entity, of entity: EntityDescription, in snapshot: SnapshotFile, cursor: inout BlockCursor) throws(LogStoreError) -> LocatedKeys {
        var located = LocatedKeys()
        for key in section.keys {
            let (block, slot) = cursor.next()
            guard located.append(key, block: block, slot: slot) else {
                throw SnapshotFile.blockDamage(path: snapshot.path, number: block + 1, offset: block < snapshot.directory.count ? snapshot.directory[block].offset : 0, reason: "the index lists \(entity.name)/\(key) out of key order")
            }
        }
        return located
    }

    /// Reads the records `located` places, of `section`, written with other
    /// slots than `entity` has now, and inserts them with this model's
    /// slots: values by slot name, defaults for slots added since.
    private mutating func migrate(_ keys: SnapshotKeys, of section: SnapshotIndex.Entity, to entity: EntityDescription, from snapshot: SnapshotFile, version: UInt64) throws(LogStoreError) {
        var records: [(key: UInt64, block: Int, slot: Int)] = []
        records.reserveCapacity(keys.count)
        let failedBefore = snapshot.failedReadCount
        keys.forEachRun(in: snapshot) { block, firstSlot, run in
            for index in 0..<run.count { records.append((run[index], block, firstSlot + index)) }
        }
        // A key-directory leaf that could not be read leaves its records out.
        try snapshot.checkNoReadFailed(since: failedBefore)
        let names = Self.slotNames(entity)
        let mapping = section.slots.map { names.firstIndex(of: $0) }
        var block: SnapshotBlock?
        for (key, number, slot) in records {
            if block?.number != number { block = try snapshot.readBlock(number) }
            var values = entity.defaults + Array(repeating: StoredValue.null, count: entity.relationships.count)
            for attribute in entity.attributes.indices where entity.attributes[attribute].isTransient { values[attribute] = .null }
            let found: Void? = block?.withValues(at: slot, key: key) { bytes in
                var reader = ByteReader(bytes)
                for target in mapping {
                    guard let value = try? reader.readValue(trusted: true) else { break }
                    if let target { values[target] = value }
                }
            }
            // A record that is not where the index places it is never made up from defaults.
            guard found != nil else {
                throw snapshot.blockDamage(number, reason: "the index places \(entity.name)/\(key) at its record \(slot + 1), which holds another record")
            }
            apply(.insert(entity: entity, key: key, values: values), version: version)
        }
    }

    // MARK: - Writing a snapshot

    /// Writes every live record into `writer`, entity by entity in the
    /// model's order, then returns the indexes and pointers for its index.
    ///
    /// Throws if a record could not be read (a block of the current
    /// snapshot failing): a snapshot must never leave out a live record.
    func write(to writer: inout SnapshotWriter, progress: (CompactionProgress) -> Void) throws(LogStoreError) {
        var failure: LogStoreError?
        for entity in model.entities {
            _ = writer.addEntity(name: entity.name, slots: Self.slotNames(entity), nextKey: snapshotNextKey(of: entity))
            var written = 0
            let destinations = entity.relationships.contains(where: \.isStored) ? legacyReferenceDestinations?[entity.index] : nil
            var values: [StoredValue] = [], rewritten = ByteWriter(capacity: 256)
            let allSlots = Array(repeating: true, count: entity.attributes.count + entity.relationships.count)
            tables[entity.index].forEachRecord { key, version, bytes in
                guard failure == nil else { return }
                do throws(LogStoreError) {
                    if let destinations {
                        EntityTable.decode(bytes, wanted: allSlots, into: &values)
                        rewritten.removeAll()
                        for (slot, value) in values.enumerated() { rewritten.append(Self.naming(destinations[slot], in: value)) }
                        try rewritten.bytes.withBytes { (raw) throws(LogStoreError) in try writer.append(key: key, version: version, values: raw) }
                    } else {
                        try writer.append(key: key, version: version, values: bytes)
                    }
                    written += 1
                    if writer.progress.records % 4096 == 0 { progress(writer.progress) }
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            try tables[entity.index].snapshot?.checkReadable()
            guard written == tables[entity.index].count else {
                throw LogStoreError(.io, "compaction read \(written) of \(tables[entity.index].count) records of \(entity.name); the store was left as it was", entity: entity.name)
            }
        }
    }

    /// `value` with every reference naming `destination`, when the slot is
    /// a stored relationship's.
    private static func naming(_ destination: Symbol?, in value: StoredValue) -> StoredValue {
        guard let destination else { return value }
        switch value {
        case .reference(let id): return .reference(RecordID(entity: destination, key: id.key))
        case .references(let ids): return .references(ids.map { RecordID(entity: destination, key: $0.key) })
        default: return value
        }
    }

    /// The next key a snapshot of this state keeps for `entity`. Keys
    /// reserved but not yet handed out count: the journal that reserved them
    /// is folded away.
    func snapshotNextKey(of entity: EntityDescription) -> UInt64 {
        max(nextKeys[entity.index], reservedKeys[entity.index])
    }

    /// What every block of a snapshot of this state at `sequence`, with the
    /// name table `symbols`, repeats of its index (FORMAT.md §11.2).
    func blockContext(sequence: UInt64, symbols: [String]) -> BlockContext {
        BlockContext(sequence: sequence, symbols: symbols, entities: model.entities.map { entity in
            BlockContext.Entity(
                name: entity.name, slots: Self.slotNames(entity),
                destinations: Array(repeating: nil, count: entity.attributes.count) + entity.relationships.map(\.destinationIndex),
                nextKey: snapshotNextKey(of: entity))
        })
    }

    /// The secondary indexes, as a snapshot written by ``write(to:progress:)`` stores them.
    func indexSections() -> [SnapshotIndex.Index] {
        model.entities.flatMap { entity in
            indexes[entity.index].map { index in
                let (values, counts, keys) = index.groups()
                return SnapshotIndex.Index(entity: entity.index, attribute: entity.attributes[index.slot].name, values: values, counts: counts, keys: keys)
            }
        }
    }

    /// The reverse of each stored relationship, as a snapshot stores it.
    func pointerSections() -> [SnapshotIndex.Pointers] {
        model.entities.flatMap { entity -> [SnapshotIndex.Pointers] in
            guard let bySlot = pointers[entity.name] else { return [] }
            return bySlot.keys.sorted().compactMap { slot -> SnapshotIndex.Pointers? in
                let relationship = slot - entity.attributes.count
                guard entity.relationships.indices.contains(relationship), let byTarget = bySlot[slot] else { return nil }
                var section = SnapshotIndex.Pointers(entity: entity.index, relationship: entity.relationships[relationship].name, targets: [], counts: [], sources: [])
                for target in byTarget.keys.sorted() {
                    guard let sources = byTarget[target], !sources.isEmpty else { continue }
                    section.targets.append(target)
                    section.counts.append(sources.count)
                    section.sources += sources.sorted()
                }
                return section
            }
        }
    }

    /// The raw bytes of live records: those in the arena, plus the raw size
    /// of the snapshot's blocks (which held the rest when it was written).
    var liveBytesEstimate: Int {
        let snapshotBytes = tables.first?.snapshot?.rawBlockBytes ?? 0
        return snapshotBytes + tables.reduce(0) { $0 + $1.arenaLiveBytes }
    }

    // MARK: - Switching to a new snapshot

    /// After a compaction wrote `written` (this state as it was at the
    /// snapshot's sequence number) into `snapshot`: every record that has
    /// not changed since is read from the snapshot from now on, and the
    /// memory its values took is freed. Records changed since stay where
    /// they are.
    ///
    /// Each index the snapshot lets be read a leaf at a time
    /// (``SnapshotFile/storedIndexes``, whose branches its open read, so
    /// that a failure there stopped the compaction) reads it so from then
    /// on; the others keep `sections`, `written`'s indexes as the
    /// compaction wrote them (``indexSections()``).
    ///
    /// Where each record is comes from `index`, what the compaction's
    /// read-back of `snapshot` found (checked against `written`'s keys):
    /// a paged snapshot's located keys, or an index frame's listed keys,
    /// placed block after block.
    mutating func relocate(into snapshot: SnapshotFile, index: SnapshotIndex, from written: CommittedState, sections: [SnapshotIndex.Index]) {
        legacyReferenceDestinations = nil
        var cursor = BlockCursor(snapshot.directory)
        for entity in model.entities {
            let table = entity.index
            let section = index.entities[table]
            let located: SnapshotKeys
            if let given = section.inSnapshot {
                located = given
            } else {
                // The keys increase (the snapshot lists them in key order),
                // so `append` takes each.
                var listed = LocatedKeys()
                for key in section.keys {
                    let (block, slot) = cursor.next()
                    _ = listed.append(key, block: block, slot: slot)
                }
                located = .located(listed)
            }
            tables[table].relocate(into: snapshot, located: located, from: written.tables[table])
            // Each index starts again from what the snapshot holds, plus the
            // records changed since `written`.
            guard !indexes[table].isEmpty else { continue }
            // Only the indexed values of the records changed since are
            // decoded: a bulk import saves most of its records during the
            // compaction, and their whole values would cost more than the index.
            let slots = indexes[table].map(\.slot)
            var wanted = Array(repeating: false, count: (slots.max() ?? 0) + 1)
            for slot in slots { wanted[slot] = true }
            var changed = Array(repeating: [(key: UInt64, value: StoredValue?)](), count: slots.count)
            var values: [StoredValue] = []
            for key in tables[table].changedKeys() {
                let isLive = tables[table].withValueBytes(key) { EntityTable.decode($0, wanted: wanted, into: &values) } != nil
                for (position, slot) in slots.enumerated() {
                    changed[position].append((key, isLive ? (slot < values.count ? values[slot] : .null) : nil))
                }
            }
            for position in indexes[table].indices {
                let slot = indexes[table][position].slot
                let changes = changed[position]
                changed[position] = []
                // The snapshot's entities are this model's, in its order.
                let name = entity.attributes[slot].name
                let stored: any IndexPages
                if let paged = snapshot.storedIndexes.first(where: { $0.entity == table && $0.attribute == name }) {
                    stored = snapshot.pagedIndex(paged)
                } else if let section = sections.first(where: { $0.entity == table && $0.attribute == name }) {
                    stored = LoadedIndexPages(values: section.values, counts: section.counts, keys: section.keys)
                } else {
                    // Not taken: the sections hold every index of the model.
                    let (values, counts, keys) = written.indexes[table][position].groups()
                    stored = LoadedIndexPages(values: values, counts: counts, keys: keys)
                }
                indexes[table][position] = indexes[table][position].relocated(to: stored, changedSince: changes)
            }
        }
    }
}

/// Walks a snapshot's live records in order, saying in which block and
/// slot each is; records a block lists as skipped are stepped over.
struct BlockCursor {
    private let directory: [SnapshotIndex.Block]
    private var block = 0
    private var slot = 0
    /// How many of the block's skipped slots are behind.
    private var skippedBehind = 0

    init(_ directory: [SnapshotIndex.Block]) { self.directory = directory }

    /// The block and slot of the next live record. The directory's counts,
    /// less the skipped slots, add up to the records listed (the index
    /// checks it), so it never runs out.
    mutating func next() -> (block: Int, slot: Int) {
        while block < directory.count {
            let entry = directory[block]
            if slot >= entry.recordCount {
                block += 1
                slot = 0
                skippedBehind = 0
            } else if skippedBehind < entry.skipped.count, entry.skipped[skippedBehind] == slot {
                skippedBehind += 1
                slot += 1
            } else {
                break
            }
        }
        defer { slot += 1 }
        return (block, slot)
    }
}
