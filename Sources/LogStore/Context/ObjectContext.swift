// The context: an identity map of objects, their changes, and saving them.

import Foundation

/// How a save resolves records that another save changed since this
/// context loaded them.
public enum MergePolicy: Sendable, Hashable {
    /// Refuse the save with `.mergeConflict`, naming the objects (the default).
    case error
    /// Keep the store's values for the conflicting objects: drop this
    /// context's changes to them, save the rest.
    case storeWins
    /// Write this context's values over the store's.
    case objectWins
}

/// A scratchpad of managed objects: Core Data's `NSManagedObjectContext`.
///
/// Within a context one ID is always one object instance (the identity map).
/// The context tracks what was inserted, changed and deleted, and ``save()``
/// validates every changed object, then writes them as one journal
/// transaction, or nothing. A context is not `Sendable`: it stays in the
/// isolation domain that made it (the main actor for ``Store/mainContext``,
/// its queue for a ``BackgroundContext``), and objects cross only as
/// ``ObjectID``s.
public final class ObjectContext {
    public let store: Store
    /// How a conflicting save is resolved; `.error` by default.
    public var mergePolicy: MergePolicy = .error

    // Unchecked exclusivity: a context is confined to its executor, and
    // these are never accessed twice at once; the run-time checks were a
    // fortieth of a run of lookups by ID.
    @exclusivity(unchecked) private var registered = IdentityMap()
    /// Objects inserted since the last save, in insertion order (those
    /// deleted again are skipped where it matters). Arrays, not dictionaries:
    /// a bulk insert should not pay for hashing every ID twice.
    @exclusivity(unchecked) private var inserted: [ManagedObject] = []
    private var deletedObjects: [ObjectID: ManagedObject] = [:]
    /// Saved objects changed since the last save, each once (``ManagedObject/isTracked``).
    @exclusivity(unchecked) private var changed: [ManagedObject] = []
    /// Errors from subscript writes, which cannot throw, by object and key;
    /// the next save reports them, unless a later write to the same key
    /// succeeds.
    private var misuse: [Misuse] = []
    /// Changed objects the save being prepared writes nothing for (only a
    /// derived side of a relationship changed): the store keeps their
    /// record's version, so the context must too.
    private var unwrittenInSave: Set<ObjectIdentifier> = []

    /// What this context's objects hold of it.
    let reference: ContextReference

    init(store: Store) {
        self.store = store
        reference = ContextReference(storeID: store.storeID)
        reference.context = self
    }

    deinit {
        reference.context = nil
        registered.removeAllInAddressOrder()
    }

    // MARK: - State

    public var hasChanges: Bool { inserted.contains { !$0.isDeleted } || !deletedObjects.isEmpty || changed.contains { $0.hasChanges } || !misuse.isEmpty }
    public var insertedObjectsSet: Set<ManagedObject> { Set(inserted.filter { !$0.isDeleted }) }
    public var updatedObjects: Set<ManagedObject> { Set(changed.filter(\.isUpdated)) }
    public var deletedObjectsSet: Set<ManagedObject> { Set(deletedObjects.values) }
    /// Every object this context holds.
    public var registeredObjects: Set<ManagedObject> { Set(registered.objects) }

    // MARK: - Inserting and finding objects

    /// Inserts a new object of the entity named `entityName`, with its
    /// default values, and calls its `awakeFromInsert`.
    @discardableResult
    public func insert(_ entityName: String) throws(LogStoreError) -> ManagedObject {
        try insert(store.model.entity(named: entityName))
    }

    /// Inserts a new object of the entity whose class is `type`.
    public func insert<Object: ManagedObject>(_ type: Object.Type) throws(LogStoreError) -> Object {
        let object = try insert(store.model.entity(for: type))
        guard let typed = object as? Object else {
            throw LogStoreError(.wrongType, "the entity of \(type) makes \(Swift.type(of: object)) objects", entity: object.entity.name)
        }
        return typed
    }

    private func insert(_ entity: EntityDescription) throws(LogStoreError) -> ManagedObject {
        let id = store.id(entity, store.allocateKey(for: entity))
        let object = entity.objectClass.init(ManagedObject.Creation(entity: entity, key: id.key, context: reference))
        object.stored = entity.defaults
        if !entity.savesStoredValuesAsTheyAre {
            for (index, attribute) in entity.attributes.enumerated() {
                if case .transformable = attribute.type { object.transformed[index] = .some(attribute.defaultValue) }
            }
        }
        object.links = entity.relationships.map { $0.isToMany ? .many([]) : .one(nil) }
        object.committedLinks = object.links
        object.isFault = false
        object.isInserted = true
        registered[id] = object
        inserted.append(object)
        object.awakeFromInsert()
        return object
    }

    /// The object for `id` in this context: the registered instance, or a
    /// fault that loads on first access. Throws `.objectNotFound` only for an
    /// ID of another store or an unknown entity; a deleted record's fault
    /// fails when touched. Use ``existingObject(with:)`` to check at once.
    public func object(with id: ObjectID) throws(LogStoreError) -> ManagedObject {
        try object(with: id, touchedSoon: true)
    }

    /// ``object(with:)``. `touchedSoon`: the app is likely to read the
    /// object next, so its record is brought into the cache while the
    /// object is made: its table entry before the identity map is probed,
    /// its values once the entry is in. Lookups by random ID in a large
    /// store are cache misses above all, and this overlaps them. A fetch
    /// that loads its objects from values it already holds passes false.
    func object(with id: ObjectID, touchedSoon: Bool) throws(LogStoreError) -> ManagedObject {
        let prefetching = touchedSoon && id.storeID == store.storeID
        if prefetching { store.prefetchRecord(id) }
        if let object = registered[id] { return object }
        guard id.storeID == store.storeID else {
            throw LogStoreError(.objectNotFound, "\(id) belongs to store \(id.storeID), not \(store.storeID) (\(store.path))", entity: id.entityName)
        }
        let entity = try store.entity(of: id)
        let object = entity.objectClass.init(ManagedObject.Creation(entity: entity, key: id.key, context: reference))
        registered[id] = object
        if prefetching { store.prefetchValues(id) }
        return object
    }

    /// The object for `id`, loaded now; `.objectNotFound` when no saved
    /// record has that ID (it was deleted, or never saved) or this context
    /// deleted it.
    public func existingObject(with id: ObjectID) throws(LogStoreError) -> ManagedObject {
        let object = try object(with: id)
        if object.isInserted { return object }
        if object.isDeleted || (object.isFault && store.record(id) == nil) {
            throw LogStoreError(.objectNotFound, "\(id) does not exist: it was deleted, or never saved", entity: id.entityName)
        }
        object.fulfill()
        if object.isGone { throw object.gone() }
        return object
    }

    /// Every object of `entityName`, in key order: the saved ones (as faults
    /// until touched) except those deleted here, then those inserted here.
    public func fetchAll(_ entityName: String) throws(LogStoreError) -> [ManagedObject] {
        try fetchIDs(entityName).map { id throws(LogStoreError) in try object(with: id) }
    }

    /// Every object of the entity whose class is `type`.
    public func fetchAll<Object: ManagedObject>(_ type: Object.Type) throws(LogStoreError) -> [Object] {
        let entity = try store.model.entity(for: type)
        return try fetchAll(entity.name).compactMap { $0 as? Object }
    }

    /// The IDs `fetchAll(entityName)` would return, without making objects.
    public func fetchIDs(_ entityName: String) throws(LogStoreError) -> [ObjectID] {
        let entity = try store.model.entity(named: entityName)
        var ids = store.keys(of: entityName).map { store.id(entity, $0) }
        if !deletedObjects.isEmpty { ids = ids.filter { deletedObjects[$0] == nil } }
        ids += inserted.filter { !$0.isDeleted && $0.entity.name == entityName }.map(\.objectID)
        return ids
    }

    /// How many objects `fetchAll(entityName)` would return.
    public func count(_ entityName: String) throws(LogStoreError) -> Int {
        try fetchIDs(entityName).count
    }

    // MARK: - Deleting

    /// Marks `object` deleted and applies its relationships' delete rules:
    /// nullify removes it from each target's inverse, cascade deletes the
    /// targets, deny makes the save fail while targets remain, no action
    /// leaves the targets pointing at it.
    public func delete(_ object: ManagedObject) throws(LogStoreError) {
        try checkOwned(object)
        guard !object.isDeleted else { return }
        object.fulfill()
        if object.isGone { throw object.gone() }
        object.isDeleted = true
        deletedObjects[object.objectID] = object
        for (index, relationship) in object.entity.relationships.enumerated() {
            let slot = object.entity.attributes.count + index
            let targets = link(of: object, slot: slot).targets
            switch relationship.definition.deleteRule {
            case .nullify:
                for target in targets { try detach(object, fromInverseOf: relationship, target: target) }
            case .cascade:
                for target in targets {
                    try detach(object, fromInverseOf: relationship, target: target)
                    try delete(try self.object(with: target))
                }
            case .deny, .noAction:
                break
            }
        }
        if object.isInserted { registered[object.objectID] = nil }
    }

    // MARK: - Saving

    /// Validates every inserted and changed object, then writes all changes
    /// as one journal transaction. On any failure nothing is written and the
    /// context keeps its changes; every validation failure is in the error's
    /// ``LogStoreError/details``.
    public func save() throws(LogStoreError) {
        guard hasChanges else { return }
        var attempt = 0
        while true {
            attempt += 1
            let save = try prepareSave()
            do {
                let result = try store.commit(save, checkingVersions: mergePolicy != .objectWins)
                didSave(result.changes)
                reload(result.adjusted)
                return
            } catch let conflict as SaveConflict {
                try resolve(conflict.conflicts, attempt: attempt)
            } catch let error as LogStoreError {
                throw error
            } catch {
                throw LogStoreError(.io, "the save failed: \(error)")
            }
        }
    }

    /// Resolves the conflicts of a refused save by the merge policy, so
    /// that the save can be computed again, or throws `.mergeConflict`
    /// naming every conflicting object.
    ///
    /// `.storeWins` takes the store's side of each: a record changed
    /// elsewhere loses this context's changes, a record deleted elsewhere
    /// is deleted here too, and this context's objects stop linking to it.
    /// `.objectWins` writes over records changed elsewhere (their versions
    /// are not checked), but a deletion elsewhere is not undone: a save
    /// that updates or links to a deleted record fails under every policy
    /// but `.storeWins`.
    private func resolve(_ conflicts: [CommitConflict], attempt: Int) throws(LogStoreError) {
        guard mergePolicy == .storeWins, attempt < 5 else {
            let details = conflicts.map { conflict in
                let id = store.id(conflict.record)
                let message = switch conflict.reason {
                case .changed(let expected, let stored): "\(id) was changed by another save (this context loaded version \(expected), the store has \(stored))"
                case .deleted: "\(id) was deleted by another save"
                case .linkTarget(let source): "\(id), which \(store.id(source)) links to, was deleted by another save"
                }
                return LogStoreError(.mergeConflict, message, entity: id.entityName)
            }
            let list = details.map { "- \($0.message)" }.joined(separator: "\n")
            let ids = Set(conflicts.map(\.record))
            throw LogStoreError(.mergeConflict, "another save changed or deleted \(ids.count == 1 ? "an object" : "\(ids.count) objects") after this context loaded \(ids.count == 1 ? "it" : "them"); nothing was saved. Refresh the objects and apply the change again, or set mergePolicy to .storeWins or .objectWins:\n\(list)", entity: details.first?.entity, details: details)
        }
        for conflict in conflicts {
            let id = store.id(conflict.record)
            guard let object = registered[id] else { continue }
            switch conflict.reason {
            case .changed: discardChanges(object)
            case .deleted, .linkTarget: forgetDeleted(object)
            }
        }
    }

    /// Takes in that `object`'s record was deleted by another save: it is
    /// deleted here, and this context's objects stop linking to it.
    private func forgetDeleted(_ object: ManagedObject) {
        guard !object.isInserted else { return }
        for (index, relationship) in object.entity.relationships.enumerated() where index < object.links.count {
            for target in object.links[index]?.targets ?? [] {
                try? detach(object, fromInverseOf: relationship, target: target)
            }
        }
        object.changedSlots = SlotSet()
        object.isDeleted = true
        deletedObjects[object.objectID] = nil
        registered[object.objectID] = nil
    }

    /// Reloads objects whose records the commit changed beyond what this
    /// context wrote (delete rules reaching referrers it had not loaded):
    /// those deleted go, the others become faults.
    private func reload(_ records: [RecordKey]) {
        for record in records {
            let id = store.id(record)
            guard let object = registered[id] else { continue }
            if store.record(id) == nil {
                object.isDeleted = true
                registered[id] = nil
            } else {
                discardChanges(object)
            }
        }
    }

    /// Drops every unsaved change: inserted objects go away, deleted ones
    /// come back, changed ones get their last saved values.
    public func rollback() {
        for object in inserted where !object.isDeleted { registered[object.objectID] = nil; object.isDeleted = true }
        for object in registered.objects { discardChanges(object) }
        for object in changed { object.isTracked = false }
        inserted = []
        deletedObjects = [:]
        changed = []
        misuse = []
    }

    /// Forgets every object: registered objects become invalid to this
    /// context, unsaved changes are dropped.
    public func reset() {
        rollback()
        registered = IdentityMap()
    }

    /// Turns `object` back into a fault, dropping its unsaved changes when
    /// `mergeChanges` is false, so its next access reads the store.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard !object.isInserted else { return }
        if mergeChanges && object.hasChanges {
            // Keep the unsaved values; take the new version so the save does not conflict.
            if let record = store.record(object.objectID) { object.version = record.version }
            return
        }
        discardChanges(object)
    }

    /// Applies what another context saved: objects it deleted go away here,
    /// objects it changed are refreshed (unless they have unsaved changes here).
    public func mergeChanges(from changes: StoreChanges) {
        for id in changes.deleted {
            guard let object = registered[id], !object.isInserted else { continue }
            registered[id] = nil
            deletedObjects[id] = nil
            object.isDeleted = true
        }
        for id in changes.updated + changes.inserted {
            guard let object = registered[id], !object.hasChanges else { continue }
            discardChanges(object)
        }
        // Derived to-many sides may have changed for any object: reload them.
        for object in registered.objects where !object.isInserted && !object.hasChanges { object.isFault = true }
    }

    // MARK: - Internals used by ManagedObject

    func recordMisuse(_ error: LogStoreError, object: ManagedObject, key: String) {
        let misused = Misuse(object: ObjectIdentifier(object), key: key, error: error)
        if let index = misuse.firstIndex(where: { $0.object == misused.object && $0.key == key }) {
            misuse[index] = misused
        } else {
            misuse.append(misused)
        }
    }

    /// Forgets a failed write of `key` once a write to it succeeds.
    func clearMisuse(object: ManagedObject, key: String) {
        guard !misuse.isEmpty else { return }
        misuse.removeAll { $0.object == ObjectIdentifier(object) && $0.key == key }
    }

    /// Makes room in the identity map for `count` more objects.
    func reserveRegistrations(_ count: Int) { registered.reserveCapacity(forAdding: count) }

    /// Whether any object of `entity` has unsaved changes here.
    func hasPendingObjects(of entity: EntityDescription) -> Bool {
        inserted.contains { $0.entity === entity } || changed.contains { $0.entity === entity && $0.hasChanges }
            || deletedObjects.values.contains { $0.entity === entity }
    }

    /// For a fetch of `entity`: the objects whose unsaved state it tests in
    /// memory (inserted and changed, not deleted), and the keys of every
    /// object with unsaved changes, whose committed records it skips.
    func pendingObjects(of entity: EntityDescription) -> (live: [ManagedObject], excluded: Set<UInt64>) {
        var live: [ManagedObject] = []
        var excluded = Set<UInt64>()
        for object in inserted where object.entity === entity {
            excluded.insert(object.recordKey)
            if !object.isDeleted { live.append(object) }
        }
        for object in changed where object.entity === entity && object.hasChanges && !object.isDeleted {
            if excluded.insert(object.recordKey).inserted { live.append(object) }
        }
        for object in deletedObjects.values where object.entity === entity { excluded.insert(object.recordKey) }
        return (live, excluded)
    }

    func markChanged(_ object: ManagedObject, slot: Int) {
        object.changedSlots.insert(slot)
        if !object.isInserted && !object.isTracked { track(object) }
    }

    /// Adds a saved object to the changed objects, on its first change.
    func track(_ object: ManagedObject) {
        object.isTracked = true
        changed.append(object)
    }

    /// Loads a fault's values from the store, or from `record` when the
    /// caller has read it already (a fetch, from its snapshot).
    func fulfill(_ object: ManagedObject, from record: Record? = nil) {
        guard object.isFault else { return }
        object.isFault = false
        let entity = object.entity
        guard let record = record ?? store.record(object.objectID) else {
            // Deleted by another save: reads and writes throw from now on.
            object.isGone = true
            object.stored = Array(repeating: .null, count: entity.attributes.count)
            object.committedStored = object.stored
            object.transformed = [:]
            object.links = Array(repeating: nil, count: entity.relationships.count)
            object.committedLinks = object.links
            object.version = nil
            return
        }
        // Attributes first; the relationship slots after them go unused here.
        var values = record.values
        // Only when there are relationship slots: removing none still copies a shared array.
        if values.count > entity.attributes.count { values.removeLast(values.count - entity.attributes.count) }
        object.isGone = false
        object.committedStored = values
        // Unsaved values survive a refault (mergeChanges keeps them); the
        // others come from the new record.
        if !object.changedSlots.isEmpty && object.stored.count == entity.attributes.count {
            for slot in object.changedSlots where slot < values.count { values[slot] = object.stored[slot] }
            object.transformed = object.transformed.filter { object.changedSlots.contains($0.key) }
        } else {
            object.transformed = [:]
        }
        object.stored = values
        object.version = record.version
        var links = object.links.count == entity.relationships.count ? object.links : Array(repeating: nil, count: entity.relationships.count)
        for index in entity.relationships.indices where !object.changedSlots.contains(entity.attributes.count + index) { links[index] = nil }
        object.links = links
        object.committedLinks = Array(repeating: nil, count: entity.relationships.count)
    }

    /// The current link of relationship `slot`, loading it from the store
    /// (stored side from the record, the other side from the store's index).
    func link(of object: ManagedObject, slot: Int) -> Link {
        object.fulfill()
        let entity = object.entity
        let index = slot - entity.attributes.count
        if let link = object.links[index] { return link }
        let relationship = entity.relationships[index]
        let loaded = committedLink(of: object, relationship: relationship, slot: slot)
        object.links[index] = loaded
        object.committedLinks[index] = loaded
        return loaded
    }

    private func committedLink(of object: ManagedObject, relationship: ResolvedRelationship, slot: Int) -> Link {
        var ids: [ObjectID] = []
        if relationship.isStored {
            if let record = store.record(object.objectID) {
                ids = CommittedState.targets(record.values[slot]).map { store.id(relationship.destination, $0) }
            }
        } else if let destination = store.model.entitiesByName[relationship.destination] {
            let inverseSlot = destination.attributes.count + relationship.inverseIndex
            ids = store.pointers(from: destination.name, slot: inverseSlot, to: object.recordKey).sorted().map { store.id(destination.name, $0) }
        }
        // Objects deleted in this context are gone from its relationships.
        ids = ids.filter { deletedObjects[$0] == nil }
        return relationship.isToMany ? .many(Set(ids)) : .one(ids.first)
    }

    func setRelationship(of object: ManagedObject, index: Int, to value: Any?) throws(LogStoreError) {
        let relationship = object.entity.relationships[index]
        if relationship.isToMany {
            guard let value else {
                try setMany(of: object, index: index, to: [])
                return
            }
            guard let set = Self.objectSet(value) else {
                throw LogStoreError(.wrongType, "\(object.entity.name).\(relationship.name) is to-many: give it a Set of \(relationship.destination) objects, not a \(type(of: value))", entity: object.entity.name, attribute: relationship.name)
            }
            try setMany(of: object, index: index, to: set)
        } else {
            let target = try related(value, for: object, relationship)
            try setOne(of: object, index: index, to: target)
        }
    }

    func addToMany(of object: ManagedObject, key: String, _ target: ManagedObject) throws(LogStoreError) {
        guard case .relationship(let index) = try object.property(key), object.entity.relationships[index].isToMany else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(key) is not a to-many relationship", entity: object.entity.name, attribute: key)
        }
        let checked = try related(target, for: object, object.entity.relationships[index])
        var current = link(of: object, slot: object.entity.attributes.count + index).targets
        guard let checked, current.insert(checked.objectID).inserted else { return }
        try setMany(of: object, index: index, to: Set(try current.map { id throws(LogStoreError) in try self.object(with: id) }))
    }

    func removeFromMany(of object: ManagedObject, key: String, _ target: ManagedObject) throws(LogStoreError) {
        guard case .relationship(let index) = try object.property(key), object.entity.relationships[index].isToMany else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(key) is not a to-many relationship", entity: object.entity.name, attribute: key)
        }
        var current = link(of: object, slot: object.entity.attributes.count + index).targets
        guard current.remove(target.objectID) != nil else { return }
        try setMany(of: object, index: index, to: Set(try current.map { id throws(LogStoreError) in try self.object(with: id) }))
    }

    // MARK: - Relationship maintenance

    private static func objectSet(_ value: Any) -> Set<ManagedObject>? {
        if let set = value as? Set<ManagedObject> { return set }
        if let array = value as? [ManagedObject] { return Set(array) }
        if let set = value as? any Collection, let objects = set.map({ $0 as? ManagedObject }) as [ManagedObject?]?, !objects.contains(where: { $0 == nil }) {
            return Set(objects.compactMap { $0 })
        }
        return nil
    }

    /// `value` as an object that may be the target of `relationship`.
    private func related(_ value: Any?, for object: ManagedObject, _ relationship: ResolvedRelationship) throws(LogStoreError) -> ManagedObject? {
        guard let value else { return nil }
        guard let target = value as? ManagedObject else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(relationship.name) holds a \(relationship.destination), not a \(type(of: value))", entity: object.entity.name, attribute: relationship.name)
        }
        guard target.entity.name == relationship.destination else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(relationship.name) holds a \(relationship.destination), not a \(target.entity.name)", entity: object.entity.name, attribute: relationship.name)
        }
        try checkOwned(target)
        guard !target.isDeleted else {
            throw LogStoreError(.objectNotFound, "\(target.objectID) was deleted; it cannot be the \(relationship.name) of \(object.objectID)", entity: object.entity.name, attribute: relationship.name)
        }
        return target
    }

    private func checkOwned(_ object: ManagedObject) throws(LogStoreError) {
        guard object.managedObjectContext === self, registered[object.objectID] === object || object.isDeleted else {
            throw LogStoreError(.wrongContext, "\(object.objectID) belongs to another context; pass its objectID and use object(with:) in this one", entity: object.entity.name)
        }
    }

    private func setOne(of object: ManagedObject, index: Int, to target: ManagedObject?) throws(LogStoreError) {
        let slot = object.entity.attributes.count + index
        let old = link(of: object, slot: slot)
        guard old != .one(target?.objectID) else { return }
        let relationship = object.entity.relationships[index]
        if case .one(let previous?) = old { try detach(object, fromInverseOf: relationship, target: previous) }
        object.links[index] = .one(target?.objectID)
        markChanged(object, slot: slot)
        if let target { try attach(object, toInverseOf: relationship, target: target) }
    }

    private func setMany(of object: ManagedObject, index: Int, to targets: Set<ManagedObject>) throws(LogStoreError) {
        let relationship = object.entity.relationships[index]
        var checked: Set<ObjectID> = []
        for target in targets { if let target = try related(target, for: object, relationship) { checked.insert(target.objectID) } }
        let slot = object.entity.attributes.count + index
        let old = link(of: object, slot: slot).targets
        guard old != checked else { return }
        for removed in old.subtracting(checked) { try detach(object, fromInverseOf: relationship, target: removed) }
        object.links[index] = .many(checked)
        markChanged(object, slot: slot)
        for added in checked.subtracting(old) { try attach(object, toInverseOf: relationship, target: try self.object(with: added)) }
    }

    /// Makes `target`'s inverse of `relationship` include `object`.
    private func attach(_ object: ManagedObject, toInverseOf relationship: ResolvedRelationship, target: ManagedObject) throws(LogStoreError) {
        let inverseIndex = relationship.inverseIndex
        let inverse = target.entity.relationships[inverseIndex]
        let slot = target.entity.attributes.count + inverseIndex
        let current = link(of: target, slot: slot)
        if inverse.isToMany {
            var ids = current.targets
            guard ids.insert(object.objectID).inserted else { return }
            target.links[inverseIndex] = .many(ids)
        } else {
            guard current != .one(object.objectID) else { return }
            // The target's previous partner loses it (one-to-one, or moving a child).
            if case .one(let previous?) = current, previous != object.objectID {
                let previousObject = try self.object(with: previous)
                let back = target.entity.relationships[inverseIndex]
                let backSlot = previousObject.entity.attributes.count + back.inverseIndex
                switch link(of: previousObject, slot: backSlot) {
                case .one: previousObject.links[back.inverseIndex] = .one(nil)
                case .many(var ids): ids.remove(target.objectID); previousObject.links[back.inverseIndex] = .many(ids)
                }
                markChanged(previousObject, slot: backSlot)
            }
            target.links[inverseIndex] = .one(object.objectID)
        }
        markChanged(target, slot: slot)
    }

    /// Removes `object` from the inverse of `relationship` on the object `target`.
    private func detach(_ object: ManagedObject, fromInverseOf relationship: ResolvedRelationship, target id: ObjectID) throws(LogStoreError) {
        let target = try self.object(with: id)
        guard !target.isDeleted || deletedObjects[id] != nil else { return }
        let inverseIndex = relationship.inverseIndex
        let slot = target.entity.attributes.count + inverseIndex
        switch link(of: target, slot: slot) {
        case .one(let current):
            guard current == object.objectID else { return }
            target.links[inverseIndex] = .one(nil)
        case .many(var ids):
            guard ids.remove(object.objectID) != nil else { return }
            target.links[inverseIndex] = .many(ids)
        }
        markChanged(target, slot: slot)
    }

    // MARK: - Validation and the pending save

    /// Checks every inserted, changed and deleted object and turns the
    /// changes into slot changes, converting each value once. Throws one
    /// `.validationFailed` with every problem, and then nothing is saved.
    private func prepareSave() throws(LogStoreError) -> PendingSave {
        var problems = misuse.map(\.error)
        var changes: [SlotChange] = []
        // At most one change per object: a bulk insert's million changes
        // are then not copied again at every doubling.
        changes.reserveCapacity(inserted.count + changed.count + deletedObjects.count)
        var versions: [RecordKey: UInt64] = [:]
        unwrittenInSave = []
        for object in inserted where !object.isDeleted {
            let values = storedAttributes(of: object, problems: &problems)
            object.savingStored = values
            problems += ObjectValidation.problems(of: object, stored: values, context: self)
            do throws(LogStoreError) { try object.validateForInsert() } catch { problems.append(error) }
            let relationships = object.entity.relationships.indices.map { storedLink(of: object, index: $0) }
            changes.append(.insert(entity: object.entity, key: object.recordKey, values: relationships.isEmpty ? values : values + relationships))
        }
        for object in changed where object.isUpdated {
            let entity = object.entity
            let values = storedAttributes(of: object, problems: &problems)
            object.savingStored = values
            problems += ObjectValidation.problems(of: object, stored: values, context: self)
            do throws(LogStoreError) { try object.validateForUpdate() } catch { problems.append(error) }
            let slots = object.changedSlots.compactMap { slot -> (Int, StoredValue)? in
                if slot < entity.attributes.count {
                    return entity.attributes[slot].isTransient ? nil : (slot, values[slot])
                }
                let index = slot - entity.attributes.count
                return entity.relationships[index].isStored ? (slot, storedLink(of: object, index: index)) : nil
            }
            guard !slots.isEmpty else {
                unwrittenInSave.insert(ObjectIdentifier(object))
                continue
            }
            changes.append(.update(entity: entity, key: object.recordKey, slots: slots))
            if let version = object.version { versions[RecordKey(entity: entity.index, key: object.recordKey)] = version }
        }
        // In entity and key order, so that the journal's order does not depend
        // on hashing; compared as numbers, since making two IDs for each of
        // the comparisons was a third of a large delete's save.
        for object in deletedObjects.values.sorted(by: { ($0.entity.index, $0.recordKey) < ($1.entity.index, $1.recordKey) }) {
            for (index, relationship) in object.entity.relationships.enumerated() where relationship.definition.deleteRule == .deny {
                let remaining = link(of: object, slot: object.entity.attributes.count + index).targets.filter { deletedObjects[$0] == nil }
                if !remaining.isEmpty {
                    problems.append(LogStoreError(.validationFailed, "\(object.entity.name) \(object.objectID) cannot be deleted while its \(relationship.name) holds \(remaining.count) object\(remaining.count == 1 ? "" : "s") (delete rule deny)", entity: object.entity.name, attribute: relationship.name))
                }
            }
            do throws(LogStoreError) { try object.validateForDelete() } catch { problems.append(error) }
            guard !object.isInserted else { continue }
            changes.append(.delete(entity: object.entity, key: object.recordKey))
            if let version = object.version { versions[RecordKey(entity: object.entity.index, key: object.recordKey)] = version }
        }
        guard problems.isEmpty else {
            let list = problems.map { "- \($0.message)" }.joined(separator: "\n")
            throw LogStoreError(.validationFailed, "the save was refused, nothing was written; \(problems.count) problem\(problems.count == 1 ? "" : "s"):\n\(list)", entity: problems.first?.entity, attribute: problems.first?.attribute, details: problems)
        }
        return PendingSave(changes: changes, expectedVersions: versions)
    }

    /// The object's attribute values as saved: `.null` for a transient
    /// attribute, transformable values run through their transformer (one
    /// that fails goes into `problems`, and its slot is `.null`).
    private func storedAttributes(of object: ManagedObject, problems: inout [LogStoreError]) -> [StoredValue] {
        object.fulfill()
        let entity = object.entity
        guard !entity.savesStoredValuesAsTheyAre else { return object.stored }
        var values = object.stored
        for (index, attribute) in entity.attributes.enumerated() where index < values.count {
            if attribute.isTransient { values[index] = .null; continue }
            // A transformable value never read or written is still the stored one.
            guard case .transformable = attribute.type, let value = object.transformed[index] else { continue }
            guard let value else { values[index] = .null; continue }
            do throws(LogStoreError) {
                values[index] = try attribute.type.stored(value) ?? .null
            } catch {
                problems.append(LogStoreError(error.kind, "\(entity.name).\(attribute.name): \(error.message) (\(object.objectID))", entity: entity.name, attribute: attribute.name))
                values[index] = .null
            }
        }
        return values
    }

    /// A stored relationship's value (`.null` for a derived side).
    private func storedLink(of object: ManagedObject, index: Int) -> StoredValue {
        let relationship = object.entity.relationships[index]
        guard relationship.isStored else { return .null }
        let targets = link(of: object, slot: object.entity.attributes.count + index).targets.map { RecordID(entity: Symbol(rawValue: 0), key: $0.key) }
        if relationship.isToMany { return .references(targets.sorted()) }
        return targets.first.map(StoredValue.reference) ?? .null
    }

    private func didSave(_ changes: StoreChanges) {
        for object in deletedObjects.values {
            registered[object.objectID] = nil
        }
        for object in inserted where !object.isDeleted {
            object.isInserted = false
            Self.markSaved(object, version: changes.sequence)
        }
        for object in changed where !object.isDeleted {
            object.isTracked = false
            let wroteNothing = !unwrittenInSave.isEmpty && unwrittenInSave.contains(ObjectIdentifier(object))
            Self.markSaved(object, version: wroteNothing ? object.version : changes.sequence)
        }
        unwrittenInSave = []
        inserted = []
        deletedObjects = [:]
        changed = []
        misuse = []
    }

    /// Makes what a save wrote the object's committed state.
    private static func markSaved(_ object: ManagedObject, version: UInt64?) {
        object.committedStored = object.savingStored ?? object.committedStored
        object.savingStored = nil
        object.committedLinks = object.links
        object.changedSlots = SlotSet()
        object.version = version
    }

    /// Drops an object's unsaved changes: it becomes a fault again.
    private func discardChanges(_ object: ManagedObject) {
        guard !object.isInserted else { return }
        object.changedSlots = SlotSet()
        object.isDeleted = false
        object.isFault = true
        object.links = []
        deletedObjects[object.objectID] = nil
    }
}

/// A write through a subscript that failed, for the next save to report.
private struct Misuse {
    var object: ObjectIdentifier
    var key: String
    var error: LogStoreError
}
