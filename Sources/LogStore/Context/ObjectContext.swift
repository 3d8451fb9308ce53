// The context: an identity map of objects, their changes, and saving them.

import Foundation

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
    @exclusivity(unchecked) var registered = IdentityMap()
    /// Objects inserted since the last save, in insertion order (those
    /// deleted again are skipped where it matters). Arrays, not dictionaries:
    /// a bulk insert should not pay for hashing every ID twice.
    @exclusivity(unchecked) var inserted: [ManagedObject] = []
    var deletedObjects: [ObjectID: ManagedObject] = [:]
    /// Why the records of these objects could not be read when they were
    /// last loaded: each is ``LifeCycle/gone`` without having been deleted,
    /// until it is loaded again. Kept here, not in every object: an error
    /// is a few hundred bytes, and it is rare.
    var unreadable: [ObjectID: LogStoreError] = [:]
    /// Saved objects changed since the last save, each once (``ManagedObject/isTracked``).
    @exclusivity(unchecked) var changed: [ManagedObject] = []
    /// Errors from subscript writes, which cannot throw, by object and key;
    /// the next save reports them, unless a later write to the same key
    /// succeeds.
    var misuse: [Misuse] = []

    /// Whether a save is running life-cycle hooks, which note what they change.
    var isRunningSaveHooks = false
    /// Objects changed, inserted or deleted while hooks ran.
    var changedByHooks: [ManagedObject] = []
    /// While a save is prepared under the store's write lock: the objects
    /// fulfilled meanwhile, whose `awakeFromFetch` runs once the lock is
    /// released, since app code there may save (``ObjectContext/save()``).
    var awakeningLater: [ManagedObject]?

    /// Where this context may be used (checked in debug builds).
    var confinement = Confinement.caller

    /// What this context's objects hold of it.
    let reference: ContextReference

    init(store: Store) {
        self.store = store
        reference = ContextReference(storeID: store.storeID)
        reference.context = self
    }

    deinit {
        reference.context = nil
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
    // Inlinable, as fetch(_:as:) is, so that the downcast is specialized
    // in the app's module rather than a generic cast for every object.
    @inlinable
    public func insert<Object: ManagedObject>(_ type: Object.Type) throws(LogStoreError) -> Object {
        let object = try insertObject(of: type)
        guard let typed = object as? Object else { throw wrongClass(object, for: type) }
        return typed
    }

    /// Inserts a new object of the entity whose class is `type`, as a
    /// ``ManagedObject``.
    @usableFromInline
    func insertObject(of type: ManagedObject.Type) throws(LogStoreError) -> ManagedObject {
        try insert(store.model.entity(for: type))
    }

    /// The error for an entity of `type` that made `object`, of another class.
    @usableFromInline
    func wrongClass(_ object: ManagedObject, for type: ManagedObject.Type) -> LogStoreError {
        LogStoreError(.wrongType, "the entity of \(type) makes \(Swift.type(of: object)) objects", entity: object.entity.name)
    }

    private func insert(_ entity: EntityDescription) throws(LogStoreError) -> ManagedObject {
        checkConfinement()
        let id = store.id(entity, try store.allocateKey(for: entity))
        let object = entity.objectClass.init(ManagedObject.Creation(entity: entity, key: id.key, context: reference))
        object.stored = entity.defaults
        if !entity.savesStoredValuesAsTheyAre {
            for (index, attribute) in entity.attributes.enumerated() {
                if case .transformable = attribute.type { object.transformed[index] = .some(attribute.defaultValue) }
            }
        }
        object.links = entity.relationships.map { $0.isToMany ? .many([]) : .one(nil) }
        object.life = .inserted
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
        checkConfinement()
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
        try store.checkServing()
        func notFound() -> LogStoreError {
            LogStoreError(.objectNotFound, "\(id) does not exist: it was deleted, or never saved", entity: id.entityName)
        }
        if object.isDeleted { throw notFound() }
        if object.isFault {
            switch store.lookup(id) {
            case .found(let record): fulfill(object, from: record)
            case .absent: throw notFound()
            case .unreadable(let failure): throw failure
            }
        }
        object.fulfill()
        if object.life == .gone { throw object.gone() }
        return object
    }

    /// Every object of `entityName`, in key order: the saved ones (as faults
    /// until touched) except those deleted here, then those inserted here.
    public func fetchAll(_ entityName: String) throws(LogStoreError) -> [ManagedObject] {
        try fetchIDs(entityName).map { id throws(LogStoreError) in try object(with: id) }
    }

    /// Every object of the entity whose class is `type`.
    @inlinable
    public func fetchAll<Object: ManagedObject>(_ type: Object.Type) throws(LogStoreError) -> [Object] {
        // Inlinable for the same reason as fetch(_:as:).
        try fetchAll(entityName(of: type)).compactMap { $0 as? Object }
    }

    /// The name of the entity whose class is `type`.
    @usableFromInline
    func entityName(of type: ManagedObject.Type) throws(LogStoreError) -> String {
        try store.model.entity(for: type).name
    }

    /// The IDs `fetchAll(entityName)` would return, without making objects.
    public func fetchIDs(_ entityName: String) throws(LogStoreError) -> [ObjectID] {
        checkConfinement()
        let entity = try store.model.entity(named: entityName)
        try store.checkServing()
        var ids = try store.keys(of: entityName).map { store.id(entity, $0) }
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
        checkConfinement()
        try checkOwned(object)
        guard !object.isDeleted else { return }
        object.fulfill()
        if object.life == .gone { throw object.gone() }
        object.prepareForDeletion()
        object.life.delete()
        deletedObjects[object.objectID] = object
        if isRunningSaveHooks { changedByHooks.append(object) }
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

    /// Drops every unsaved change: inserted objects go away, deleted ones
    /// come back, changed ones get their last saved values.
    public func rollback() {
        checkConfinement()
        for object in inserted where !object.isDeleted { registered[object.objectID] = nil; object.life.delete() }
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
        checkConfinement()
        rollback()
        // Every object goes with the identity map: using one is an error
        // (never a second instance for the same ID beside a new one).
        for object in registered.objects { object.life.invalidate() }
        registered = IdentityMap()
        unreadable = [:]
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

    /// Notes a successful write of `slot` of `object`: it clears an earlier
    /// failed write of the key, and a save running hooks runs them again
    /// for the object.
    @inline(__always)
    func noteWrite(_ object: ManagedObject, slot: Int) {
        if isRunningSaveHooks { changedByHooks.append(object) }
        guard !misuse.isEmpty else { return }
        let key = object.slotName(slot)
        misuse.removeAll { $0.object == ObjectIdentifier(object) && $0.key == key }
    }

    /// Takes a freed object out of the identity map (its deinit calls this).
    func unregister(_ object: ManagedObject) {
        registered.remove(object, hash: ObjectID.runHash(key: object.recordKey, entityHash: object.entity.nameHash))
    }

    /// Makes room in the identity map for `count` more objects.
    func reserveRegistrations(_ count: Int) { registered.reserveCapacity(forAdding: count) }

    /// Whether any object of `entity` has unsaved changes here: deleted
    /// ones always, inserted and changed ones as asked.
    func hasPendingObjects(of entity: EntityDescription, inserted countsInserted: Bool = true, changed countsChanged: Bool = true) -> Bool {
        (countsInserted && inserted.contains { $0.entity === entity }) || (countsChanged && changed.contains { $0.entity === entity && $0.hasChanges })
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
        if isRunningSaveHooks { changedByHooks.append(object) }
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
        let entity = object.entity
        if !unreadable.isEmpty { unreadable[object.objectID] = nil }
        let lookup = record.map(Store.RecordLookup.found) ?? store.lookup(object.objectID)
        guard case .found(let record) = lookup else {
            // Deleted by another save, or unreadable (the failure kept as
            // the snapshot it was found in gave it, whatever a compaction
            // did since): reads and writes throw from now on.
            if case .unreadable(let failure) = lookup { unreadable[object.objectID] = failure }
            object.life.load(found: false)
            object.stored = Array(repeating: .null, count: entity.attributes.count)
            object.committedStored = object.stored
            object.transformed = [:]
            object.links = Array(repeating: nil, count: entity.relationships.count)
            object.version = nil
            return
        }
        // The whole record as loaded, relationships included: what a merge
        // compares with the store's record to tell who changed what.
        object.committedStored = record.values
        // The attributes, to read and write; only when there are relationship
        // slots is the array copied to drop them.
        var values = record.values
        if values.count > entity.attributes.count { values.removeLast(values.count - entity.attributes.count) }
        object.life.load(found: true)
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
        if awakeningLater != nil { awakeningLater!.append(object) } else { object.awakeFromFetch() }
    }

    /// Drops an object's unsaved changes: it becomes a fault again.
    func discardChanges(_ object: ManagedObject) {
        guard !object.isInserted else { return }
        object.changedSlots = SlotSet()
        object.life.refault()
        object.links = []
        deletedObjects[object.objectID] = nil
    }
}

/// A write through a subscript that failed, for the next save to report.
struct Misuse {
    var object: ObjectIdentifier
    var key: String
    var error: LogStoreError
}
