// The two things a predicate is tested against: committed records, read
// from a snapshot of the store's state, and a context's objects.

import Foundation

/// A committed record, decoded only as far as the predicate reads.
///
/// Made for one test, and valid only during it: it borrows the fetch's
/// snapshot and entity, and usually the values decoded for it, so testing a
/// million records does not count a million references up and down.
struct RecordSubject: PredicateSubject {
    enum Values {
        /// The record's first values in slot order, and which of them were
        /// decoded (the others are `.null` stand-ins; empty when all were).
        case borrowed(UnsafeBufferPointer<StoredValue>, decoded: UnsafeBufferPointer<Bool>)
        /// All of the record's values (a record reached through a relationship).
        case owned([StoredValue])
    }

    unowned(unsafe) let snapshot: StateSnapshot
    unowned(unsafe) let entity: EntityDescription
    let key: UInt64
    let values: Values

    init(snapshot: StateSnapshot, entity: EntityDescription, key: UInt64, values: UnsafeBufferPointer<StoredValue>, decoded: UnsafeBufferPointer<Bool>) {
        self.snapshot = snapshot
        self.entity = entity
        self.key = key
        self.values = .borrowed(values, decoded: decoded)
    }

    private init(snapshot: StateSnapshot, entity: EntityDescription, key: UInt64, all values: [StoredValue]) {
        self.snapshot = snapshot
        self.entity = entity
        self.key = key
        self.values = .owned(values)
    }

    var entityIndex: Int { entity.index }

    func attribute(_ index: Int) -> StoredValue {
        switch values {
        case .borrowed(let values, let decoded):
            if index < values.count, decoded.isEmpty || (index < decoded.count && decoded[index]) { return values[index] }
        case .owned(let values):
            return index < values.count ? values[index] : .null
        }
        return snapshot.state.record(entity, key).map { index < $0.values.count ? $0.values[index] : .null } ?? .null
    }

    func related(_ index: Int) -> [RecordSubject] {
        let relationship = entity.relationships[index]
        guard let destination = snapshot.model.entitiesByName[relationship.destination] else { return [] }
        let keys: [UInt64]
        if relationship.isStored {
            keys = CommittedState.targets(attribute(entity.attributes.count + index))
        } else {
            let inverseSlot = destination.attributes.count + relationship.inverseIndex
            keys = snapshot.state.pointers(from: destination.name, slot: inverseSlot, to: key).sorted()
        }
        return keys.compactMap { key in
            snapshot.state.record(destination, key).map { RecordSubject(snapshot: snapshot, entity: destination, key: key, all: $0.values) }
        }
    }

    func derived(_ attribute: DerivedAttribute) -> Any? { nil }
}

/// An object of a context, with its unsaved changes.
struct ObjectSubject: PredicateSubject {
    let object: ManagedObject
    let context: ObjectContext

    var entityIndex: Int { object.entity.index }
    var key: UInt64 { object.recordKey }

    func attribute(_ index: Int) -> StoredValue {
        object.fulfill()
        guard index < object.stored.count else { return .null }
        let attribute = object.entity.attributes[index]
        // A transformable value the app has read or written is compared by
        // its data, as the store would hold it.
        if case .transformable = attribute.type, let value = object.transformed[index] {
            guard let value else { return .null }
            return (try? attribute.type.stored(value)) ?? .null
        }
        return object.stored[index]
    }

    func related(_ index: Int) -> [ObjectSubject] {
        let slot = object.entity.attributes.count + index
        // A link to a record deleted elsewhere (a `noAction` rule leaves
        // such links) reaches no object, as it reaches no record in a fetch.
        return context.link(of: object, slot: slot).targets.sorted().compactMap { id in
            guard let target = try? context.object(with: id), target.isInserted || target.life != .gone,
                  !(target.isFault && context.store.record(id) == nil) else { return nil }
            return ObjectSubject(object: target, context: context)
        }
    }

    func derived(_ attribute: DerivedAttribute) -> Any? { attribute.compute(object) }
}
