// Entities: a named kind of object, its class, attributes and relationships.

/// One part of an entity's definition, as the ``Entity`` builder takes them.
public enum EntityMember: Sendable {
    case attribute(Attribute)
    case relationship(Relationship)
    case derived(DerivedAttribute)
    case fetched(FetchedProperty)
}

/// Builds an entity's members from a list of attributes and relationships.
@resultBuilder
public enum EntityBuilder {
    public static func buildExpression(_ attribute: Attribute) -> [EntityMember] { [.attribute(attribute)] }
    public static func buildExpression(_ relationship: Relationship) -> [EntityMember] { [.relationship(relationship)] }
    public static func buildExpression(_ derived: DerivedAttribute) -> [EntityMember] { [.derived(derived)] }
    public static func buildExpression(_ fetched: FetchedProperty) -> [EntityMember] { [.fetched(fetched)] }
    public static func buildBlock(_ members: [EntityMember]...) -> [EntityMember] { members.flatMap { $0 } }
    public static func buildArray(_ members: [[EntityMember]]) -> [EntityMember] { members.flatMap { $0 } }
    public static func buildOptional(_ members: [EntityMember]?) -> [EntityMember] { members ?? [] }
}

/// A kind of object: Core Data's `NSEntityDescription`.
///
/// ```swift
/// Entity("Item", Item.self) {
///     Attribute("itemName", .string)
///     Attribute("valueInDollars", .int32, default: 0)
///     Relationship("assetType", to: "AssetType", inverse: "items")
/// }
/// ```
public struct Entity: Sendable {
    public var name: String
    /// The class of its objects: ``ManagedObject`` or a subclass with typed properties.
    public var objectClass: ManagedObject.Type
    public var attributes: [Attribute] = []
    public var relationships: [Relationship] = []
    public var derivedAttributes: [DerivedAttribute] = []
    public var fetchedProperties: [FetchedProperty] = []

    public init(_ name: String, _ objectClass: ManagedObject.Type = ManagedObject.self, @EntityBuilder _ members: () -> [EntityMember] = { [] }) {
        self.name = name
        self.objectClass = objectClass
        for member in members() {
            switch member {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            case .derived(let derived): derivedAttributes.append(derived)
            case .fetched(let fetched): fetchedProperties.append(fetched)
            }
        }
    }
}

/// Builds a model's entities.
@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    public static func buildBlock(_ entities: [Entity]...) -> [Entity] { entities.flatMap { $0 } }
}
