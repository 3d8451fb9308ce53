// Managed objects: one record's values in one context, with change tracking.

import Foundation

/// A link of one relationship of one object.
enum Link: Equatable {
    case one(ObjectID?)
    case many(Set<ObjectID>)

    var targets: Set<ObjectID> {
        switch self {
        case .one(let id): id.map { [$0] } ?? []
        case .many(let ids): ids
        }
    }
}

/// An object of an entity, living in one ``ObjectContext``: Core Data's
/// `NSManagedObject`.
///
/// Read and write values by key (`item["itemName"] = "Chair"`), or subclass
/// it with typed properties (``Managed``) for app code. A managed object is
/// not `Sendable` and belongs to its context: hand its ``objectID`` to other
/// contexts instead.
///
/// An object fetched or looked up by ID starts as a *fault*: its values load
/// from the store on first access.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// A token only LogStore can make: contexts create objects, apps do not.
    public struct Creation {
        let entity: EntityDescription
        let key: UInt64
        let context: ContextReference
    }

    public let entity: EntityDescription
    /// The record's key: with the entity and the store, the object's ID. The
    /// ID is made when asked for rather than stored, which would make every
    /// object 48 bytes larger.
    let recordKey: UInt64
    private let contextReference: ContextReference

    /// The permanent identity of this object.
    public var objectID: ObjectID {
        ObjectID(storeID: contextReference.storeID, entity: entity, key: recordKey)
    }

    /// The context that owns this object (nil once that context is gone).
    public var managedObjectContext: ObjectContext? { contextReference.context }

    // Attribute values, in slot order, as the store holds them: a write
    // converts once (and checks the type), a save writes them as they are.
    // A read converts the one value it reads. Transformable values are the
    // exception: they stay the app's values in `transformed` until a save
    // runs them through their transformer.
    // Unchecked exclusivity: an object is confined to its context's
    // isolation domain and LogStore never holds two accesses to one of these
    // at once; the run-time checks were a twentieth of a bulk insert.
    @exclusivity(unchecked) var stored: [StoredValue] = []
    @exclusivity(unchecked) var committedStored: [StoredValue] = []
    /// Transformable attributes' values as the app's types, by slot, once
    /// read or written.
    @exclusivity(unchecked) var transformed: [Int: Any?] = [:]
    /// The stored values a save in progress writes, which become `stored`
    /// and `committedStored` once it succeeds.
    @exclusivity(unchecked) var savingStored: [StoredValue]?
    @exclusivity(unchecked) var links: [Link?] = []
    @exclusivity(unchecked) var changedSlots = SlotSet()
    /// The record's version when loaded; nil for an object not yet saved.
    @exclusivity(unchecked) var version: UInt64?
    /// Where the object stands (``LifeCycle``).
    @exclusivity(unchecked) var life = LifeCycle.fault
    /// Whether its values are still to be loaded from the store.
    public var isFault: Bool { life.isFault }
    /// Whether it was inserted and not saved yet (also once deleted again).
    public var isInserted: Bool { life.isInserted }
    /// Whether it was deleted, by its context or by a save its context merged.
    public var isDeleted: Bool { life.isDeleted }
    /// In its context's list of changed objects (kept there until the next save or rollback).
    @exclusivity(unchecked) var isTracked = false

    public required init(_ creation: Creation) {
        entity = creation.entity
        recordKey = creation.key
        contextReference = creation.context
    }

    deinit {
        // The identity map does not keep objects alive: a freed one leaves it.
        contextReference.context?.unregister(self)
    }

    /// Whether `id` is this object's ID, compared without making it.
    func has(_ id: ObjectID) -> Bool {
        recordKey == id.key && entity.name == id.entityName && contextReference.storeID == id.storeID
    }

    // MARK: - Hooks

    /// Called once when the object is inserted: set initial values here
    /// (Core Data's `awakeFromInsert`). Call `super`.
    open func awakeFromInsert() {}

    /// Called each time the object's values are loaded from the store (a
    /// fault is fulfilled, or refreshed and touched again): Core Data's
    /// `awakeFromFetch`. Derive transient values here; values set here are
    /// changes like any other, which the next save writes. For an object a
    /// save fulfills while it resolves a conflict under the store's write
    /// lock (``ObjectContext/save()``), it is called once the save is done.
    open func awakeFromFetch() {}

    /// Called when the object is deleted, before its relationships' delete
    /// rules run: Core Data's `prepareForDeletion`.
    open func prepareForDeletion() {}

    /// Called at save for each object the save writes, before validation:
    /// Core Data's `willSave`. Values set and objects inserted or deleted
    /// here are saved in the same transaction; the save calls hooks again
    /// on what they changed, until nothing changes (at most
    /// ``ObjectContext/hookPassLimit`` passes), so set a value only when it
    /// differs.
    open func willSave() {}

    /// Called after a save wrote the object (inserted, updated or deleted):
    /// Core Data's `didSave`.
    open func didSave() {}

    /// Called for each inserted object at save, after ``willSave()``; throw
    /// to refuse the save. Changes made here are saved too.
    open func validateForInsert() throws(LogStoreError) {}
    /// Called for each updated object at save, after ``willSave()``; throw
    /// to refuse the save. Changes made here are saved too.
    open func validateForUpdate() throws(LogStoreError) {}
    /// Called for each deleted object at save, after ``willSave()``; throw
    /// to refuse the save. Changes made here are saved too.
    open func validateForDelete() throws(LogStoreError) {}

    // MARK: - State

    /// Inserted, deleted, or changed since the last save.
    public var hasChanges: Bool { isInserted || isDeleted || !changedSlots.isEmpty }
    /// Saved before and changed since (not inserted, not deleted).
    public var isUpdated: Bool { !isInserted && !isDeleted && !changedSlots.isEmpty }

    /// The values changed since the last save, by key (relationships as
    /// objects, or sets of objects).
    public var changedValues: [String: Any] {
        var result: [String: Any] = [:]
        for slot in changedSlots { result[slotName(slot)] = slotValue(slot) ?? Optional<Any>.none as Any }
        return result
    }

    /// The values as last saved, by attribute name (empty for an inserted object).
    public var committedValuesByKey: [String: Any] {
        guard !isInserted else { return [:] }
        fulfill()
        var result: [String: Any] = [:]
        for (index, attribute) in entity.attributes.enumerated() where index < committedStored.count {
            result[attribute.name] = (try? attribute.type.value(committedStored[index])) ?? Optional<Any>.none as Any
        }
        return result
    }

    // MARK: - Values by key

    /// The value for `key`: an attribute's Swift value, a related object, a
    /// set of related objects, or a derived value. Nil for an unknown key;
    /// use ``value(forKey:)`` to get the error instead.
    public subscript(key: String) -> Any? {
        get { try? value(forKey: key) }
        set {
            do throws(LogStoreError) { try setValue(newValue, forKey: key) } catch {
                // A subscript cannot throw: the save reports it, with entity and key.
                managedObjectContext?.recordMisuse(error, object: self, key: key)
            }
        }
    }

    /// The value for `key`, or `.unknownKey`.
    public func value(forKey key: String) throws(LogStoreError) -> Any? {
        checkConfinement()
        switch try property(key) {
        case .attribute(let index):
            try load(key)
            guard index < stored.count else { throw released(key) }
            return attributeValue(index)
        case .relationship(let index):
            try load(key)
            return relatedObjects(entity.attributes.count + index)
        case .derived(let derived):
            try load(key)
            return derived.compute(self)
        case .fetched(let fetched):
            guard let context = managedObjectContext else { throw released(key) }
            return try context.fetch(fetched, for: self)
        }
    }

    /// Sets `key` to `value`, or throws `.wrongType`, `.unknownKey`,
    /// `.wrongContext` (a related object of another context), or
    /// `.objectNotFound` (this object was deleted and saved).
    public func setValue(_ value: Any?, forKey key: String) throws(LogStoreError) {
        checkConfinement()
        switch try property(key) {
        case .attribute(let index):
            let attribute = entity.attributes[index]
            if case .transformable = attribute.type {
                // The transformer checks the type when the object is saved.
                try prepareToWrite(key)
                transformed[index] = .some(value)
                try markChanged(index, key)
                managedObjectContext?.noteWrite(self, slot: index)
                return
            }
            guard let value else { return try write(.null, at: index, key) }
            guard let converted = try attribute.type.stored(value) else {
                throw LogStoreError(.wrongType, "\(entity.name).\(key) is a \(attribute.type) attribute; it cannot hold a \(type(of: value))", entity: entity.name, attribute: key)
            }
            try write(converted, at: index, key)
        case .relationship(let index):
            guard let context = managedObjectContext else { throw released(key) }
            try load(key)
            try context.setRelationship(of: self, index: index, to: value)
            context.noteWrite(self, slot: entity.attributes.count + index)
        case .derived:
            throw LogStoreError(.invalidArgument, "\(entity.name).\(key) is derived from other values and read-only", entity: entity.name, attribute: key)
        case .fetched:
            throw LogStoreError(.invalidArgument, "\(entity.name).\(key) is a fetched property and read-only: it is the result of a fetch", entity: entity.name, attribute: key)
        }
    }

    /// Adds `object` to the to-many relationship `key` (and sets the inverse).
    public func add(_ object: ManagedObject, to key: String) throws(LogStoreError) {
        guard let context = managedObjectContext else { throw LogStoreError(.wrongContext, "\(entity.name) \(objectID) has no context", entity: entity.name, attribute: key) }
        try load(key)
        try context.addToMany(of: self, key: key, object)
    }

    /// Removes `object` from the to-many relationship `key` (and clears the inverse).
    public func remove(_ object: ManagedObject, from key: String) throws(LogStoreError) {
        guard let context = managedObjectContext else { throw LogStoreError(.wrongContext, "\(entity.name) \(objectID) has no context", entity: entity.name, attribute: key) }
        try load(key)
        try context.removeFromMany(of: self, key: key, object)
    }

    // MARK: - Internals

    /// The error for using an object whose context is gone (objects hold
    /// their context weakly, as Core Data's do).
    func released(_ key: String) -> LogStoreError {
        LogStoreError(.wrongContext, "\(entity.name) \(objectID) was used after its context was released, so \(key) cannot be read or written; keep the context alive while you use its objects", entity: entity.name, attribute: key)
    }

    func property(_ key: String) throws(LogStoreError) -> Property {
        guard let property = entity.property(named: key) else {
            throw LogStoreError(.unknownKey, "\(entity.name) has no attribute or relationship named \(key); it has \(entity.propertyNames.joined(separator: ", "))", entity: entity.name, attribute: key)
        }
        return property
    }

    func slotName(_ slot: Int) -> String {
        slot < entity.attributes.count ? entity.attributes[slot].name : entity.relationships[slot - entity.attributes.count].name
    }

    func slotValue(_ slot: Int) -> Any? {
        slot < entity.attributes.count ? (slot < stored.count ? attributeValue(slot) : nil) : relatedObjects(slot)
    }

    /// Attribute `index`'s Swift value, converted from the stored one.
    /// Call after `fulfill()`.
    func attributeValue(_ index: Int) -> Any? {
        let type = entity.attributes[index].type
        guard case .transformable = type else { return (try? type.value(stored[index])) ?? nil }
        if let value = transformed[index] { return value }
        let value = (try? type.value(stored[index])) ?? nil
        transformed[index] = .some(value)
        return value
    }

    /// Whether attribute `index` has a value, without converting it.
    func hasValue(at index: Int) -> Bool {
        if let value = transformed[index] { return value != nil }
        return index < stored.count && stored[index] != .null
    }

    /// Loads a fault, or throws `.objectNotFound` when its record was
    /// deleted by another save.
    func load(_ key: String) throws(LogStoreError) {
        fulfill()
        switch life {
        case .gone: throw gone(key)
        case .invalidated: throw invalidated(key)
        // Still a fault: its context is gone, and with it the values.
        case .fault: throw released(key)
        case .loaded, .inserted, .deleted: break
        }
    }

    /// The error for using an object after its context was reset.
    func invalidated(_ key: String) -> LogStoreError {
        LogStoreError(.wrongContext, "\(entity.name) \(objectID) was invalidated when its context was reset, so \(key) cannot be read or written; get the object again with object(with:)", entity: entity.name, attribute: key)
    }

    /// The error for using an object whose record another save deleted,
    /// whose store stopped serving records (``Store/checkServing()``), or
    /// whose record's snapshot block failed to read.
    func gone(_ key: String? = nil) -> LogStoreError {
        if let context = managedObjectContext, case .failure(let failure) = Result(catching: { () throws(LogStoreError) in try context.store.checkServing() }) {
            return failure
        }
        // Not deleted: its snapshot block could not be read.
        if let failure = managedObjectContext?.unreadable[objectID] { return failure }
        return LogStoreError(.objectNotFound, "\(entity.name) \(objectID) was deleted by another save\(key.map { ", so \($0) cannot be read or written" } ?? ""); fetch again, or merge that save's changes into this context", entity: entity.name, attribute: key)
    }

    /// Loads a fault so it can be written, or throws when its record or its
    /// context is gone.
    private func prepareToWrite(_ key: String) throws(LogStoreError) {
        try load(key)
        guard !stored.isEmpty || entity.attributes.isEmpty else { throw released(key) }
    }

    /// Writes attribute `index` as stored, already converted and checked.
    private func write(_ value: StoredValue, at index: Int, _ key: String) throws(LogStoreError) {
        try prepareToWrite(key)
        stored[index] = value
        try markChanged(index, key)
        managedObjectContext?.noteWrite(self, slot: index)
    }

    /// Records a change of `slot`; a saved object joins its context's
    /// changed objects on its first change.
    private func markChanged(_ slot: Int, _ key: String) throws(LogStoreError) {
        changedSlots.insert(slot)
        guard !isInserted && !isTracked else { return }
        guard let context = managedObjectContext else { throw released(key) }
        context.track(self)
    }

    // MARK: - Typed access (`@Managed` properties of ``AttributeValue`` types)

    /// The stored value of attribute `key`, or nil when it must take the
    /// general path: not a plain attribute, or not loaded.
    @usableFromInline
    func storedValue(forDirectKey key: String) -> StoredValue? {
        checkConfinement()
        guard let index = entity.attributeIndex(key), entity.isStoredDirectly[index] else { return nil }
        fulfill()
        guard life == .loaded || life == .inserted, index < stored.count else { return nil }
        return stored[index]
    }

    /// Writes `value` to attribute `key` when it is a plain attribute of
    /// exactly its type; false sends the caller down the general path,
    /// which converts it or reports the problem.
    @usableFromInline
    func setStoredValue(_ value: StoredValue, forDirectKey key: String) -> Bool {
        checkConfinement()
        guard let index = entity.attributeIndex(key), entity.isStoredDirectly[index],
              entity.attributes[index].type.holds(value) else { return false }
        do throws(LogStoreError) { try write(value, at: index, key) } catch { return false }
        return true
    }

    /// The model's default value of attribute `key`, for a typed property
    /// that reads no value.
    @usableFromInline
    func defaultValue(forKey key: String) -> Any? {
        guard let index = entity.attributeIndex(key) else { return nil }
        return entity.attributes[index].defaultValue
    }

    /// In debug builds, traps when the caller is outside its context's
    /// isolation domain (``ObjectContext/checkConfinement()``).
    @inline(__always)
    func checkConfinement() {
        #if DEBUG
        managedObjectContext?.checkConfinement()
        #endif
    }

    /// Loads the values of a fault from the store.
    func fulfill() {
        guard isFault else { return }
        managedObjectContext?.fulfill(self)
    }

    /// The IDs of the objects the relationship `name` points to, in key
    /// order, without turning them into objects (Core Data's
    /// `objectIDs(forRelationshipNamed:)`).
    ///
    /// - Throws: `.unknownKey` when `name` is not a relationship of the entity.
    public func objectIDs(forRelationshipNamed name: String) throws(LogStoreError) -> [ObjectID] {
        guard case .relationship(let index) = try property(name) else {
            throw LogStoreError(.unknownKey, "\(entity.name).\(name) is not a relationship; it has the relationships \(entity.relationships.map(\.name).joined(separator: ", "))", entity: entity.name, attribute: name)
        }
        guard let context = managedObjectContext else { throw released(name) }
        try load(name)
        return context.link(of: self, slot: entity.attributes.count + index).targets.sorted()
    }

    private func relatedObjects(_ slot: Int) -> Any? {
        guard let context = managedObjectContext else { return nil }
        switch context.link(of: self, slot: slot) {
        case .one(let id): return id.flatMap { try? context.object(with: $0) }
        case .many(let ids): return Set(ids.compactMap { try? context.object(with: $0) })
        }
    }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String { "<\(entity.name) \(objectID)\(isFault ? " fault" : "")>" }
}

/// A typed property of a ``ManagedObject`` subclass, read and written
/// through the object's key-value storage:
///
/// ```swift
/// final class Item: ManagedObject {
///     @Managed("itemName") var itemName: String?
///     @Managed("valueInDollars") var valueInDollars: Int32
///     @Managed("assetType") var assetType: AssetType?
/// }
/// ```
///
/// Reading a value of another type than declared returns the type's
/// default (nil, 0, false); writing one of the wrong type is reported by the
/// next save, naming entity and key.
@propertyWrapper
public struct Managed<Value> {
    public let key: String

    public init(_ key: String) {
        self.key = key
        if TypedPropertyCollector.isCollecting { TypedPropertyCollector.note(self) }
    }

    @available(*, unavailable, message: "@Managed works only inside a ManagedObject subclass")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }  // swiftlint:disable:this unused_setter_value
    }

    // Inlinable so that the app's module sees the storage key path as a
    // literal and reads the wrapper as a plain stored property: applying
    // the key path at run time was a tenth of a bulk insert. There, where
    // `Value` is known, an optimized build finds the attribute type it is
    // at compile time and converts by a direct call (``ConformingTypeOperation``); a
    // type the app conforms to ``AttributeValue`` is found by a cast, and
    // converted by generic code.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        @inline(__always) get {
            let key = object[keyPath: storageKeyPath].key
            switch ReadStoredValue<Value, Object>(object: object, key: key).forConformingTypes() {
            case .some(.some(let value)):
                return value
            case .some(.none):
                break
            case .none:
                if let direct = Value.self as? any AttributeValue.Type,
                   let stored = object.storedValue(forDirectKey: key),
                   let value: Value = Self.value(of: stored, as: direct) {
                    return value
                }
            }
            return ManagedValue.cast(object[key], as: Value.self, modelDefault: object.defaultValue(forKey: key))
        }
        @inline(__always) set {
            let key = object[keyPath: storageKeyPath].key
            switch WriteStoredValue(object: object, key: key, value: newValue).forConformingTypes() {
            case .some(true):
                return
            case .some(false):
                break
            case .none:
                if let direct = Value.self as? any AttributeValue.Type,
                   object.setStoredValue(Self.storedValue(of: newValue, as: direct), forDirectKey: key) {
                    return
                }
            }
            object[key] = ManagedValue.unwrap(newValue)
        }
    }

    // `Direct` is `Value`: the callers found it by casting `Value.self`.
    @inlinable @inline(__always)
    static func value<Direct: AttributeValue>(of stored: StoredValue, as: Direct.Type) -> Value? {
        Direct(storedValue: stored).map { unsafeBitCast($0, to: Value.self) }
    }

    @inlinable @inline(__always)
    static func storedValue<Direct: AttributeValue>(of value: Value, as: Direct.Type) -> StoredValue {
        unsafeBitCast(value, to: Direct.self).storedValue
    }
}

/// Conversions between the untyped storage and `@Managed` property types.
@usableFromInline
enum ManagedValue {
    /// `raw` as `Value`; when it is not one, the model's default for the
    /// attribute, else what `Value` reads nil as (``fallback(_:)``). The
    /// model refuses a property that could be left with none of these
    /// (``EntityDescription/typedPropertyProblems()``).
    @usableFromInline
    static func cast<Value>(_ raw: Any?, as: Value.Type, modelDefault: @autoclosure () -> Any?) -> Value {
        if let value = raw as? Value { return value }
        if let value = modelDefault() as? Value { return value }
        if let value = fallback(Value.self) { return value }
        preconditionFailure("@Managed property of type \(Value.self) has no value and no default; declare it optional")
    }

    /// What a property of type `Value` reads when it has no value: nil, an
    /// empty set, 0, "" or false; nil for a type with no such value.
    static func fallback<Value>(_: Value.Type) -> Value? {
        // The attribute types are told apart by identity first: a cast to a
        // protocol that fails looks through every conformance the process
        // has loaded, the first time for each type, and the model asks this
        // of every typed property when it is built, at each launch.
        switch Value.self {
        case is Int16.Type: return Int16(0) as? Value
        case is Int32.Type: return Int32(0) as? Value
        case is Int64.Type: return Int64(0) as? Value
        case is Int.Type: return 0 as? Value
        case is Double.Type: return 0.0 as? Value
        case is Float.Type: return Float(0) as? Value
        case is Bool.Type: return false as? Value
        case is String.Type: return "" as? Value
        case is Date.Type, is Data.Type, is UUID.Type, is URL.Type, is Decimal.Type: return nil
        default: break
        }
        if let nilType = Value.self as? any ExpressibleByNilLiteral.Type { return (nilType.init(nilLiteral: ()) as! Value) }
        if let setType = Value.self as? any EmptyInitializable.Type { return setType.init() as? Value }
        return nil
    }

    /// `value` with one level of Optional removed, so `nil` stays nil.
    @usableFromInline
    static func unwrap<Value>(_ value: Value) -> Any? {
        if let optional = value as? any OptionalProtocol { return optional.wrapped }
        return value
    }
}

protocol OptionalProtocol { var wrapped: Any? { get } }
extension Optional: OptionalProtocol {
    var wrapped: Any? { self.map { $0 as Any } }
}

protocol EmptyInitializable { init() }
extension Set: EmptyInitializable {}
