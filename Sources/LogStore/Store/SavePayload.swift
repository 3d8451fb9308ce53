// Where a save becomes payload bytes: a context's slot changes, encoded
// straight into the journal's transaction payload.

/// An entity's names as journal symbols, by slot.
struct EntitySymbols: Sendable {
    let entity: Symbol
    /// The symbol of each slot that is written; nil for transient attributes
    /// and for relationship sides that are derived.
    let slots: [Symbol?]
    /// For a stored relationship slot, its destination entity's symbol.
    let destinations: [Symbol?]
    /// How many slots are written: the fields of an insert.
    let storedSlotCount: Int

    init(_ description: EntityDescription, journal: Journal) {
        entity = journal.symbol(for: description.name)
        slots = description.attributes.map { $0.isTransient ? nil : journal.symbol(for: $0.name) }
            + description.relationships.map { $0.isStored ? journal.symbol(for: $0.name) : nil }
        destinations = description.attributes.map { _ in nil }
            + description.relationships.map { $0.isStored ? journal.symbol(for: $0.destination) : nil }
        storedSlotCount = slots.count { $0 != nil }
    }
}

/// A save's slot changes as the changes of one transaction payload
/// (FORMAT.md §5.1): stored slots only. References already name their
/// destination's symbol (the context writes them so). Encoding from the slot changes directly, rather
/// than building a ``RecordChange`` with an array of fields per record
/// first, took a fifth off the cost of a bulk save.
struct SavePayload: PayloadChanges {
    let changes: [SlotChange]
    /// ``EntitySymbols`` by entity index.
    let symbols: [EntitySymbols]

    var count: Int { changes.count }

    func deletedRecord(at position: Int) -> RecordID? {
        guard case .delete(let entity, let key) = changes[position] else { return nil }
        return RecordID(entity: symbols[entity.index].entity, key: key)
    }

    func encodeChange(at position: Int, into writer: inout ByteWriter) {
        let change = changes[position]
        let entity = symbols[change.entity.index]
        let id = RecordID(entity: entity.entity, key: change.key)
        switch change {
        case .insert(_, _, let values):
            let written = values.count == entity.slots.count ? entity.storedSlotCount : values.indices.count { entity.slots[$0] != nil }
            TransactionPayload.encodeChange(.insert, id, fieldCount: written, into: &writer)
            for (slot, value) in values.enumerated() { encode(slot, value, of: entity, into: &writer) }
        case .update(_, _, let slots):
            let written = slots.count { entity.slots[$0.0] != nil }
            TransactionPayload.encodeChange(.update, id, fieldCount: written, into: &writer)
            for (slot, value) in slots { encode(slot, value, of: entity, into: &writer) }
        case .delete:
            TransactionPayload.encodeChange(.delete, id, fieldCount: 0, into: &writer)
        }
    }

    private func encode(_ slot: Int, _ value: StoredValue, of entity: EntitySymbols, into writer: inout ByteWriter) {
        guard let attribute = entity.slots[slot] else { return }
        TransactionPayload.encodeField(attribute, value, into: &writer)
    }
}
