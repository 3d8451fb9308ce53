// The model's check of an entity class's typed properties: each `@Managed`
// key names a property of the entity, and a property that cannot hold nil
// always has a value to read.

import Foundation

/// What a `@Managed` property tells about itself when its class is reflected.
protocol TypedPropertyDescription {
    var key: String { get }
    /// The property's Swift type.
    static var valueType: Any.Type { get }
    /// Whether the property reads an absent value as a value of its type
    /// (nil, an empty set, 0, "", false) rather than having none.
    static var readsNilAsValue: Bool { get }
}

extension Managed: TypedPropertyDescription {
    static var valueType: Any.Type { Value.self }
    static var readsNilAsValue: Bool { ManagedValue.fallback(Value.self) != nil }
}

extension EntityDescription {
    /// The mistakes in the `@Managed` properties of the entity's class: a
    /// key the entity does not have, or a property that cannot hold nil
    /// over an attribute that may have no value (no default) or a to-one
    /// relationship. Found when the model is built, so that a read never
    /// finds a property with nothing it can return.
    func typedPropertyProblems() -> [LogStoreError] {
        guard objectClass != ManagedObject.self else { return [] }
        // An object of no context, made only to read its properties' keys.
        let object = objectClass.init(ManagedObject.Creation(entity: self, key: 0, context: ContextReference(storeID: UUID())))
        var problems: [LogStoreError] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        // ManagedObject's own stored properties are never `@Managed`; each
        // would cost a failed cast to a protocol, the slow kind, at launch.
        while let current = mirror, current.subjectType != ManagedObject.self {
            for child in current.children {
                guard let typed = child.value as? any TypedPropertyDescription else { continue }
                let propertyType = type(of: typed)
                let declared = "@Managed(\"\(typed.key)\") var \(child.label.map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 } ?? typed.key): \(propertyType.valueType)"
                switch property(named: typed.key) {
                case nil:
                    problems.append(LogStoreError(.invalidModel, "\(objectClass).\(declared) names no attribute or relationship of \(name); it has \(propertyNames.joined(separator: ", "))", entity: name, attribute: typed.key))
                case .attribute(let index):
                    guard !propertyType.readsNilAsValue, attributes[index].defaultValue == nil else { continue }
                    let attribute = attributes[index]
                    problems.append(LogStoreError(.invalidModel, "\(objectClass).\(declared) cannot hold nil, but \(name).\(typed.key) is \(attribute.isOptional ? "optional" : "required") with no default value, so it can have none (a new object has none until it is set); declare the property \(propertyType.valueType)?, or give the attribute a default", entity: name, attribute: typed.key))
                case .relationship(let index):
                    guard !propertyType.readsNilAsValue, !relationships[index].isToMany else { continue }
                    problems.append(LogStoreError(.invalidModel, "\(objectClass).\(declared) cannot hold nil, but the to-one relationship \(name).\(typed.key) is empty until set; declare the property optional", entity: name, attribute: typed.key))
                case .derived, .fetched:
                    continue
                }
            }
            mirror = current.superclassMirror
        }
        return problems
    }
}
