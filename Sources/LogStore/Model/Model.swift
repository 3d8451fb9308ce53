// The model: every entity, checked as a whole when it is built.

import Foundation

/// What a name on an entity refers to.
enum Property {
    case attribute(Int)
    case relationship(Int)
    // Boxed: a fetched property's description is hundreds of bytes, and
    // every read by key would copy it around with each attribute index.
    indirect case derived(DerivedAttribute)
    indirect case fetched(FetchedProperty)
}

/// A relationship with its inverse resolved.
struct ResolvedRelationship: Sendable {
    var definition: Relationship
    /// The entity on the other side.
    var destination: String
    /// The destination's position in the model.
    var destinationIndex: Int
    /// Where the inverse sits in the destination's relationships.
    var inverseIndex: Int
    /// Whether this side is written to the journal. One side of each pair
    /// is: the to-one side of a one-to-many, otherwise the side whose
    /// "Entity.name" sorts first. The other side is derived from it, so
    /// adding one object to a large to-many writes one reference, not the list.
    var isStored: Bool

    var name: String { definition.name }
    var isToMany: Bool { definition.isToMany }
}

/// An entity with its names resolved, shared by every context of a store.
public final class EntityDescription: Sendable, CustomStringConvertible {
    public let name: String
    public let objectClass: ManagedObject.Type
    public let attributes: [Attribute]
    /// The relationships as the model declares them, in order.
    public var relationshipDefinitions: [Relationship] { relationships.map(\.definition) }
    let relationships: [ResolvedRelationship]
    let derived: [String: DerivedAttribute]
    let fetchedProperties: [FetchedProperty]
    let properties: [String: Property]
    /// Attribute default values, as stored values (`.null` when none).
    let defaults: [StoredValue]
    /// `name.hashValue`, for object IDs (see ``ObjectID``).
    let nameHash: Int
    /// Its position in the model, for tables kept per entity.
    let index: Int
    /// Attribute names in slot order, searched before `properties`: for the
    /// few attributes an entity has, comparing names beats hashing one.
    private let attributeNames: [String]
    /// Per attribute, whether its value is stored as the app gives it
    /// (``AttributeType/isStoredDirectly``), so typed access may skip `Any`.
    let isStoredDirectly: [Bool]
    /// Whether an object's stored values are saved as they are: no transient
    /// attribute to blank out, no transformable value to convert.
    let savesStoredValuesAsTheyAre: Bool
    /// Whether any stored attribute is required or has rules, so that a
    /// save has something to check on each object's attribute values.
    let hasAttributeRules: Bool
    /// Whether deleting a record has a delete rule to apply (a relationship
    /// whose rule is not `noAction`).
    let hasDeleteRules: Bool

    init(_ entity: Entity, index: Int, relationships: [ResolvedRelationship], defaults: [StoredValue]) {
        self.index = index
        name = entity.name
        nameHash = entity.name.hashValue
        objectClass = entity.objectClass
        attributes = entity.attributes
        self.relationships = relationships
        self.defaults = defaults
        derived = Dictionary(entity.derivedAttributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var properties: [String: Property] = [:]
        for (index, attribute) in entity.attributes.enumerated() { properties[attribute.name] = .attribute(index) }
        for (index, relationship) in relationships.enumerated() { properties[relationship.name] = .relationship(index) }
        for derived in entity.derivedAttributes { properties[derived.name] = .derived(derived) }
        for fetched in entity.fetchedProperties { properties[fetched.name] = .fetched(fetched) }
        fetchedProperties = entity.fetchedProperties
        self.properties = properties
        attributeNames = entity.attributes.map(\.name)
        isStoredDirectly = entity.attributes.map(\.type.isStoredDirectly)
        savesStoredValuesAsTheyAre = entity.attributes.allSatisfy { !$0.isTransient && $0.type.isStoredDirectly }
        hasAttributeRules = entity.attributes.contains { !$0.isTransient && (!$0.isOptional || !$0.rules.isEmpty) }
        hasDeleteRules = relationships.contains { $0.definition.deleteRule != .noAction }
    }

    /// The slot of the attribute named `name`.
    func attributeIndex(_ name: String) -> Int? {
        attributeNames.firstIndex(of: name)
    }

    /// What `name` refers to on this entity.
    func property(named name: String) -> Property? {
        if attributeNames.count <= 16, let index = attributeIndex(name) { return .attribute(index) }
        return properties[name]
    }

    public var description: String { name }

    /// The names of every attribute and relationship, for error messages.
    var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) + derived.keys.sorted() + fetchedProperties.map(\.name) }
}

/// The entities of a store: Core Data's `NSManagedObjectModel`.
///
/// Building a model checks it as a whole and reports every mistake at once
/// (`.invalidModel`, each mistake in ``LogStoreError/details``): duplicate
/// names, an unknown destination, a missing or mismatched inverse, a default
/// value of the wrong type.
///
/// ```swift
/// let model = try Model {
///     Entity("Item", Item.self) { … }
///     Entity("AssetType") { … }
/// }
/// ```
public final class Model: Sendable {
    public let entities: [EntityDescription]
    let entitiesByName: [String: EntityDescription]

    /// Whether some entity has a Decimal attribute.
    var hasDecimalAttributes: Bool {
        entities.contains { $0.attributes.contains { if case .decimal = $0.type { true } else { false } } }
    }
    /// For a model read from a store file (``Store/init(recordedModelAt:options:)``),
    /// the record it was read from.
    let recordedSchema: StoredSchema?

    public convenience init(@ModelBuilder _ entities: () -> [Entity]) throws(LogStoreError) {
        try self.init(entities: entities())
    }

    public convenience init(entities: [Entity]) throws(LogStoreError) {
        try self.init(entities: entities, recorded: nil)
    }

    init(entities: [Entity], recorded: StoredSchema?) throws(LogStoreError) {
        recordedSchema = recorded
        var problems: [LogStoreError] = []
        func problem(_ entity: String, _ property: String?, _ message: String) {
            problems.append(LogStoreError(.invalidModel, message, entity: entity, attribute: property))
        }
        var byName: [String: Entity] = [:]
        for entity in entities {
            if entity.name.isEmpty || entity.name.hasPrefix("__") {
                problem(entity.name, nil, "entity name \"\(entity.name)\" is empty or starts with \"__\", which LogStore reserves")
            }
            if byName[entity.name] != nil { problem(entity.name, nil, "two entities are named \(entity.name)") }
            byName[entity.name] = entity
            var seen: Set<String> = []
            let names = entity.attributes.map(\.name) + entity.relationships.map(\.name) + entity.derivedAttributes.map(\.name) + entity.fetchedProperties.map(\.name)
            for fetched in entity.fetchedProperties {
                if byName[fetched.destination] == nil && !entities.contains(where: { $0.name == fetched.destination }) {
                    problem(entity.name, fetched.name, "the fetched property \(entity.name).\(fetched.name) fetches \(fetched.destination), which the model does not have")
                }
                if let error = fetched.parseError {
                    problem(entity.name, fetched.name, "the predicate of the fetched property \(entity.name).\(fetched.name) does not parse: \(error.message)")
                }
            }
            for name in names {
                if name.isEmpty { problem(entity.name, name, "\(entity.name) has a property with an empty name") }
                if !seen.insert(name).inserted { problem(entity.name, name, "\(entity.name) has two properties named \(name)") }
            }
        }
        var resolved: [String: [ResolvedRelationship]] = [:]
        var defaults: [String: [StoredValue]] = [:]
        for entity in entities {
            defaults[entity.name] = entity.attributes.map { attribute in
                guard let value = attribute.defaultValue else { return .null }
                if case .transformable = attribute.type { return .null }  // converted when an object is made
                do throws(LogStoreError) {
                    if let stored = try attribute.type.stored(value) { return stored }
                } catch {}
                problem(entity.name, attribute.name, "the default value of \(entity.name).\(attribute.name) is a \(type(of: value)), not a \(attribute.type)")
                return .null
            }
            resolved[entity.name] = entity.relationships.map { relationship in
                let fallback = ResolvedRelationship(definition: relationship, destination: relationship.destination, destinationIndex: 0, inverseIndex: 0, isStored: true)
                guard let destination = byName[relationship.destination] else {
                    problem(entity.name, relationship.name, "\(entity.name).\(relationship.name) points to \(relationship.destination), which the model does not have")
                    return fallback
                }
                guard let inverseIndex = destination.relationships.firstIndex(where: { $0.name == relationship.inverse }) else {
                    problem(entity.name, relationship.name, "\(entity.name).\(relationship.name) names the inverse \(relationship.destination).\(relationship.inverse), which does not exist; add it")
                    return fallback
                }
                let inverse = destination.relationships[inverseIndex]
                guard inverse.destination == entity.name, inverse.inverse == relationship.name else {
                    problem(entity.name, relationship.name, "\(entity.name).\(relationship.name) and \(destination.name).\(inverse.name) are not each other's inverse: \(destination.name).\(inverse.name) points to \(inverse.destination).\(inverse.inverse)")
                    return fallback
                }
                let isStored: Bool
                if relationship.isToMany != inverse.isToMany {
                    isStored = !relationship.isToMany
                } else {
                    isStored = "\(entity.name).\(relationship.name)" <= "\(destination.name).\(inverse.name)"
                }
                return ResolvedRelationship(definition: relationship, destination: destination.name, destinationIndex: entities.firstIndex { $0.name == destination.name } ?? 0, inverseIndex: inverseIndex, isStored: isStored)
            }
        }
        guard problems.isEmpty else {
            let list = problems.map { "- \($0.message)" }.joined(separator: "\n")
            throw LogStoreError(.invalidModel, "the model has \(problems.count) mistake\(problems.count == 1 ? "" : "s"):\n\(list)", details: problems)
        }
        self.entities = entities.enumerated().map { index, entity in
            EntityDescription(entity, index: index, relationships: resolved[entity.name] ?? [], defaults: defaults[entity.name] ?? [])
        }
        entitiesByName = Dictionary(uniqueKeysWithValues: self.entities.map { ($0.name, $0) })
        let typedProblems = self.entities.flatMap { $0.typedPropertyProblems() }
        guard typedProblems.isEmpty else {
            let list = typedProblems.map { "- \($0.message)" }.joined(separator: "\n")
            throw LogStoreError(.invalidModel, "the model has \(typedProblems.count) mistake\(typedProblems.count == 1 ? "" : "s") in its classes' typed properties:\n\(list)", details: typedProblems)
        }
    }

    /// The entity named `name`.
    public func entity(named name: String) throws(LogStoreError) -> EntityDescription {
        guard let entity = entitiesByName[name] else {
            throw LogStoreError(.unknownEntity, "the model has no entity named \(name); it has \(entities.map(\.name).joined(separator: ", "))", entity: name)
        }
        return entity
    }

    /// The entity whose objects are of class `type`.
    func entity(for type: ManagedObject.Type) throws(LogStoreError) -> EntityDescription {
        // A scan, not a filter: inserting by class happens once per object.
        var match: EntityDescription?
        for entity in entities where entity.objectClass == type {
            guard match == nil else {
                throw LogStoreError(.unknownEntity, "several entities use the class \(type); insert by entity name instead", entity: "\(type)")
            }
            match = entity
        }
        guard let match else {
            throw LogStoreError(.unknownEntity, "no entity of the model uses the class \(type); pass it to Entity(_:_:)", entity: "\(type)")
        }
        return match
    }
}
