// The model's check of an entity class's typed properties: each `@Managed`
// key names a property of the entity, and a property that cannot hold nil
// always has a value to read.

import Foundation
import Synchronization

/// The `@Managed` properties an entity class's initializer sets up, noted
/// by each property's own initializer while a model checks the class:
/// reflecting an object (`Mirror`) for them cost more than a millisecond
/// of every process that opens a store.
///
/// What is noted is every `Managed(_:)` made while the check makes one
/// object, in its task (and the tasks that inherit its task-locals), which
/// is the class's declared properties, its superclasses' included. It can
/// differ from the finished object's fields only for a class whose
/// initializer makes `Managed` values of its own (another key is noted,
/// and checked) or copies one made before the check (it is not).
final class TypedPropertyCollector: Sendable {
    /// One `@Managed` property: its key, its Swift type, and whether
    /// it reads an absent value as a value of its type (nil, an empty set,
    /// 0, "", false) rather than having none.
    struct Property: @unchecked Sendable {
        let key: String
        // A metatype is immutable runtime metadata, safe to share; it is
        // kept rather than its name, which takes longer to spell out than
        // the rest of the check, and is needed only for a mistake.
        let type: Any.Type
        let readsNilAsValue: Bool

        var typeName: String { String(describing: type) }
    }

    private let properties = Protected<[Property]>([])

    /// The collector of the task or thread checking a class; nil elsewhere.
    @TaskLocal private static var current: TypedPropertyCollector?
    /// How many checks are collecting anywhere: while none is, a property's
    /// initializer costs one load more.
    private static let collecting = Atomic<Int>(0)

    /// The `@Managed` properties `body` initializes in this task (or, on a
    /// thread that runs none, on this thread).
    static func properties(initializedBy body: () -> Void) -> [Property] {
        let collector = TypedPropertyCollector()
        collecting.add(1, ordering: .relaxed)
        defer { collecting.subtract(1, ordering: .relaxed) }
        $current.withValue(collector) { body() }
        return collector.properties.withLock { $0 }
    }

    /// Whether any check is collecting: every `@Managed` initializer asks
    /// before anything that needs its generic type's metadata, whose lookup
    /// cost more than the rest of making an object.
    static var isCollecting: Bool { collecting.load(ordering: .relaxed) > 0 }

    /// Notes `property` when this task is collecting.
    static func note<Value>(_ property: Managed<Value>) {
        guard let collector = current else { return }
        let noted = Property(key: property.key, type: Value.self, readsNilAsValue: ManagedValue.fallback(Value.self) != nil)
        collector.properties.withLock { $0.append(noted) }
    }
}

extension EntityDescription {
    /// The mistakes in the `@Managed` properties of the entity's class: a
    /// key the entity does not have, or a property that cannot hold nil
    /// over an attribute that may have no value (no default) or a to-one
    /// relationship. Found when the model is built, so that a read never
    /// finds a property with nothing it can return.
    func typedPropertyProblems() -> [LogStoreError] {
        guard objectClass != ManagedObject.self else { return [] }
        // An object of no context, made only to have its properties note
        // themselves.
        let properties = TypedPropertyCollector.properties {
            _ = objectClass.init(ManagedObject.Creation(entity: self, key: 0, context: ContextReference(storeID: UUID())))
        }
        var problems: [LogStoreError] = []
        for typed in properties {
            // Spelled out only for a mistake: naming a type takes longer
            // than the rest of the check.
            var declared: String { "@Managed(\"\(typed.key)\") property of type \(typed.typeName)" }
            switch property(named: typed.key) {
            case nil:
                problems.append(LogStoreError(.invalidModel, "\(objectClass)'s \(declared) names no attribute or relationship of \(name); it has \(propertyNames.joined(separator: ", "))", entity: name, attribute: typed.key))
            case .attribute(let index):
                guard !typed.readsNilAsValue, attributes[index].defaultValue == nil else { continue }
                let attribute = attributes[index]
                problems.append(LogStoreError(.invalidModel, "\(objectClass)'s \(declared) cannot hold nil, but \(name).\(typed.key) is \(attribute.isOptional ? "optional" : "required") with no default value, so it can have none (a new object has none until it is set); declare the property \(typed.typeName)?, or give the attribute a default", entity: name, attribute: typed.key))
            case .relationship(let index):
                guard !typed.readsNilAsValue, !relationships[index].isToMany else { continue }
                problems.append(LogStoreError(.invalidModel, "\(objectClass)'s \(declared) cannot hold nil, but the to-one relationship \(name).\(typed.key) is empty until set; declare the property optional", entity: name, attribute: typed.key))
            case .derived, .fetched:
                continue
            }
        }
        return problems
    }
}
