// A predicate checked against one entity: keys resolved to slots, arguments
// converted to the attributes' stored forms, variables bound.

import Foundation

/// A value while a predicate is evaluated.
enum Operand {
    case value(StoredValue)
    /// An object, by entity index and key (IDs of other stores never match).
    case object(entity: Int, key: UInt64)
    case list([Operand])
    /// A derived attribute's value, or another value the store does not
    /// hold, converted from Swift.
    static func swiftValue(_ value: Any?) -> Operand {
        switch PredicateValue(value) {
        case .null: .value(.null)
        case .bool(let value): .value(.bool(value))
        case .integer(let value): .value(.int64(value))
        case .double(let value): .value(.double(value))
        case .string(let value): .value(.string(value))
        case .date(let value): .value(.date(value))
        case .data(let value): .value(.data(value))
        case .uuid(let value): .value(.uuid(value))
        case .decimal(let value): .value(.decimal(value))
        case .object, .list, .custom: .value(.null)
        }
    }
}

/// How a key path is read from an object: through relationships, to an
/// attribute, the related objects themselves, a count, or an aggregate.
struct BoundPath {
    enum Tail {
        case attribute(Int)
        case derived(DerivedAttribute)
        /// The related objects themselves (`assetType == %@`).
        case objects
        case count
        case aggregate(KeyPathComponent, Int?)
    }

    /// Relationship indexes followed from the object, and whether each is to-many.
    var steps: [(index: Int, isToMany: Bool)]
    var tail: Tail
    /// The entity the tail applies to.
    var entity: EntityDescription
    /// The path is read from a collection of objects (the elements a
    /// subquery selects), not from one.
    var startsWithCollection = false

    /// Whether the path yields a collection (it starts from one or passes
    /// a to-many relationship, and does not aggregate it).
    var isCollection: Bool {
        switch tail {
        case .count, .aggregate: false
        default: startsWithCollection || steps.contains { $0.isToMany }
        }
    }

    /// Whether the path ends in a derived attribute, which only objects compute.
    var isDerived: Bool {
        if case .derived = tail { return true }
        return false
    }

    /// The attribute slot when the path is a plain attribute of the object itself.
    var directAttribute: Int? {
        guard steps.isEmpty, !startsWithCollection, case .attribute(let slot) = tail else { return nil }
        return slot
    }
}

indirect enum BoundExpression {
    case constant(Operand)
    case path(BoundPath)
    case evaluatedObject
    case list([BoundExpression])
    /// A subquery's variable: the element (`$t`, no path) or a key path
    /// read from it (`$t.owner.name`). `depth` is the variable's place in
    /// the environment evaluation keeps, 0 for the outermost subquery.
    case variable(depth: Int, path: BoundPath?)
    case subquery(BoundSubquery)
    /// `left op right`; a negation is `0 - operand`.
    case arithmetic(ArithmeticOperator, BoundExpression, BoundExpression)
}

/// `SUBQUERY(collection, $x, predicate)` with its key paths resolved.
struct BoundSubquery {
    /// Where the collection is read from: the object tested (nil), or the
    /// element of the subquery variable at this depth (`$p.tasks`).
    var origin: Int?
    /// The relationships to follow; its tail is `.objects`, through a to-many.
    var collection: BoundPath
    /// Tested on each element, with the element appended to the environment.
    var predicate: BoundPredicate
    /// The key path read from the elements that pass (`.@count`), if any.
    var result: BoundPath?
}

/// A comparison ready to evaluate, with its pattern compiled once.
struct BoundComparison {
    var modifier: ComparisonModifier
    var left: BoundExpression
    var `operator`: ComparisonOperator
    var right: BoundExpression
    var options: ComparisonOptions
    /// The compiled pattern of MATCHES with a constant pattern.
    var regex: Regex<AnyRegexOutput>?
}

indirect enum BoundPredicate {
    case constant(Bool)
    case not(BoundPredicate)
    case and([BoundPredicate])
    case or([BoundPredicate])
    case comparison(BoundComparison)

    /// Whether any key path reads a derived attribute, which only objects can compute.
    var usesDerivedAttributes: Bool {
        switch self {
        case .constant: false
        case .not(let inner): inner.usesDerivedAttributes
        case .and(let parts), .or(let parts): parts.contains(where: \.usesDerivedAttributes)
        case .comparison(let comparison): comparison.left.usesDerived || comparison.right.usesDerived
        }
    }

    /// The attribute slots read directly from the object (for decoding only those).
    var directSlots: [Int] {
        switch self {
        case .constant: []
        case .not(let inner): inner.directSlots
        case .and(let parts), .or(let parts): parts.flatMap(\.directSlots)
        case .comparison(let comparison): comparison.left.directSlots + comparison.right.directSlots
        }
    }
}

extension BoundExpression {
    var usesDerived: Bool {
        switch self {
        case .path(let path): path.isDerived
        case .list(let items): items.contains(where: \.usesDerived)
        case .variable(_, let path): path?.isDerived ?? false
        case .subquery(let subquery): subquery.predicate.usesDerivedAttributes || (subquery.result?.isDerived ?? false)
        case .arithmetic(_, let left, let right): left.usesDerived || right.usesDerived
        case .constant, .evaluatedObject: false
        }
    }

    var directSlots: [Int] {
        switch self {
        case .path(let path): path.steps.isEmpty ? (path.directAttribute.map { [$0] } ?? [Int.max]) : [Int.max]
        case .list(let items): items.flatMap(\.directSlots)
        // A subquery of the object's own relationships reads them (and the
        // elements read themselves); one from a variable reads nothing here.
        case .subquery(let subquery): subquery.origin == nil ? [Int.max] : []
        case .arithmetic(_, let left, let right): left.directSlots + right.directSlots
        case .constant, .evaluatedObject, .variable: []
        }
    }

    /// Whether the expression yields a collection, which a comparison tests
    /// element by element (`ANY`, or a to-many key path compared directly).
    var isCollection: Bool {
        switch self {
        case .path(let path): path.isCollection
        case .variable(_, let path): path?.isCollection ?? false
        case .subquery(let subquery): subquery.result?.isCollection ?? true
        case .constant, .evaluatedObject, .list, .arithmetic: false
        }
    }
}

/// The columns of a comparison side's key paths, handed out in the order
/// the parser recorded them (the order they are written).
private struct ColumnCursor {
    let columns: [Int]
    var position = 0

    init(_ columns: [Int]) { self.columns = columns }

    mutating func next() -> Int? {
        defer { position += 1 }
        return position < columns.count ? columns[position] : nil
    }
}

extension LogStoreError {
    /// The error at `column` of the format string, unless it already has
    /// one (a predicate built in Swift has none to give).
    fileprivate func located(at column: Int?) -> LogStoreError {
        guard let column, self.column == nil else { return self }
        var located = self
        located.column = column
        located.message += " at column \(column)"
        return located
    }
}

/// Resolves predicates against a model's entities.
struct PredicateBinder {
    let model: Model
    /// The store whose objects the predicate tests: IDs of other stores
    /// match nothing.
    let storeID: UUID?
    /// Values for `$NAME` variables; `FETCH_SOURCE` may be an object.
    var variables: [String: Operand] = [:]
    /// The object `$FETCH_SOURCE` names, for key paths read from it.
    var fetchSource: ((String, [KeyPathComponent]) throws(LogStoreError) -> Operand)?
    /// Whether the predicate is for a fetch from the store, which holds no
    /// transient values: a key path to one is refused (as Core Data's SQLite
    /// store refuses it) rather than answered one way for saved records and
    /// another for objects with unsaved changes.
    var isStoreFetch = false
    /// The variables of the subqueries around the predicate being bound,
    /// outermost first, with the entity of their elements.
    private var scope: [(name: String, entity: EntityDescription)] = []

    init(model: Model, storeID: UUID? = nil) {
        self.model = model
        self.storeID = storeID
    }

    func bind(_ predicate: ObjectPredicate, to entity: EntityDescription) throws(LogStoreError) -> BoundPredicate {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .not(let inner): return .not(try bind(inner, to: entity))
        case .and(let parts): return .and(try parts.map { part throws(LogStoreError) in try bind(part, to: entity) })
        case .or(let parts): return .or(try parts.map { part throws(LogStoreError) in try bind(part, to: entity) })
        case .comparison(let comparison): return .comparison(try bind(comparison, to: entity))
        }
    }

    private func bind(_ comparison: PredicateComparison, to entity: EntityDescription) throws(LogStoreError) -> BoundComparison {
        var leftColumns = ColumnCursor(comparison.leftColumns), rightColumns = ColumnCursor(comparison.rightColumns)
        let left = try bind(comparison.left, to: entity, other: comparison.right, columns: &leftColumns)
        let right = try bind(comparison.right, to: entity, other: comparison.left, columns: &rightColumns)
        if comparison.modifier != .direct {
            guard left.isCollection else {
                throw LogStoreError(.invalidPredicate, "\(comparison.modifier == .all ? "ALL" : comparison.modifier == .none ? "NONE" : "ANY") needs a key path through a to-many relationship of \(entity.name), not \(comparison.left), in \(comparison)", entity: entity.name)
                    .located(at: comparison.leftColumns.first)
            }
        }
        // A variable substituted with a number, a date, … (the parser
        // refuses them written out): IN needs a collection or a string.
        if comparison.operator == .in, case .constant(.value(let value)) = right {
            switch value {
            case .string, .null: break
            default:
                throw LogStoreError(.invalidPredicate, "IN needs a collection or a string to search on its right, not \(comparison.right), in \(comparison)", entity: entity.name)
                    .located(at: comparison.rightColumns.first)
            }
        }
        var regex: Regex<AnyRegexOutput>?
        if comparison.operator == .matches, case .constant(.value(.string(let pattern))) = right {
            do {
                let folded = Comparing.fold(pattern, comparison.options.subtracting(.caseInsensitive))
                var compiled = try Regex(folded)
                if comparison.options.contains(.caseInsensitive) { compiled = compiled.ignoresCase() }
                regex = compiled
            } catch {
                throw LogStoreError(.invalidPredicate, "MATCHES needs a valid regular expression; \"\(pattern)\" is not one: \(error)", entity: entity.name)
            }
        }
        return BoundComparison(modifier: comparison.modifier, left: left, operator: comparison.operator, right: right, options: comparison.options, regex: regex)
    }

    /// Binds `expression`; `other` is the opposite side, whose attribute
    /// type converts custom values (transformable attributes compare by
    /// data). `columns` gives each key path's column, for errors.
    private func bind(_ expression: PredicateExpression, to entity: EntityDescription, other: PredicateExpression,
                      columns: inout ColumnCursor) throws(LogStoreError) -> BoundExpression {
        switch expression {
        case .keyPath(let components):
            let column = columns.next()
            do throws(LogStoreError) {
                return .path(try path(components, from: entity))
            } catch {
                throw error.located(at: column)
            }
        case .evaluatedObject:
            return .evaluatedObject
        case .constant(let value):
            return .constant(try operand(value, entity: entity, other: other))
        case .variable(let name, let path):
            let column = columns.next()
            do throws(LogStoreError) {
                return try variable(name, path, entity: entity)
            } catch {
                throw error.located(at: column)
            }
        case .list(let items):
            var bound: [BoundExpression] = []
            for item in items { bound.append(try bind(item, to: entity, other: other, columns: &columns)) }
            return .list(bound)
        case .subquery(let subquery, let path):
            return .subquery(try bind(subquery, then: path, to: entity))
        case .arithmetic(let op, let left, let right):
            let left = try bind(left, to: entity, other: other, columns: &columns)
            return Self.arithmetic(op, left, try bind(right, to: entity, other: other, columns: &columns))
        case .negated(let operand):
            return Self.arithmetic(.subtract, .constant(.value(.int64(0))), try bind(operand, to: entity, other: other, columns: &columns))
        }
    }

    /// `left op right`, computed now when both are constants (so that
    /// `$FETCH_SOURCE.birthdate - 315576000` is one constant a fetch's
    /// index can use).
    private static func arithmetic(_ op: ArithmeticOperator, _ left: BoundExpression, _ right: BoundExpression) -> BoundExpression {
        if case .constant(.value(let a)) = left, case .constant(.value(let b)) = right {
            return .constant(.value(Arithmetic.apply(op, a, b)))
        }
        return .arithmetic(op, left, right)
    }

    /// `$name` or `$name.path`: a subquery's element, `$FETCH_SOURCE`, or a
    /// value given to the binder.
    private func variable(_ name: String, _ path: [KeyPathComponent], entity: EntityDescription) throws(LogStoreError) -> BoundExpression {
        // The innermost subquery that names it.
        if let depth = scope.lastIndex(where: { $0.name == name }) {
            return .variable(depth: depth, path: path.isEmpty ? nil : try self.path(path, from: scope[depth].entity))
        }
        if name == "FETCH_SOURCE", let fetchSource { return .constant(try fetchSource(name, path)) }
        guard path.isEmpty, let value = variables[name] else {
            throw LogStoreError(.invalidPredicate, "the predicate uses $\(name)\(path.isEmpty ? "" : "." + KeyPathComponent.text(path)), which has no value; substitute it first (ObjectPredicate.substituting), or use it inside a SUBQUERY that names it", entity: entity.name)
        }
        return .constant(value)
    }

    /// Binds a subquery: its collection from `entity` (or from an outer
    /// subquery's element), its predicate against the collection's
    /// destination with its variable in scope, then `path` from the elements.
    private func bind(_ subquery: PredicateSubquery, then path: [KeyPathComponent], to entity: EntityDescription) throws(LogStoreError) -> BoundSubquery {
        let origin: Int?
        let collection: BoundPath
        do throws(LogStoreError) {
            switch subquery.collection {
            case .keyPath(let components):
                origin = nil
                collection = try self.path(components, from: entity)
            case .variable(let name, let components):
                guard !components.isEmpty, let depth = scope.lastIndex(where: { $0.name == name }) else {
                    throw LogStoreError(.invalidPredicate, "SUBQUERY's collection \(subquery.collection) must be a to-many key path from an outer SUBQUERY's variable ($p.tasks)", entity: entity.name)
                }
                origin = depth
                collection = try self.path(components, from: scope[depth].entity)
            default:
                throw LogStoreError(.invalidPredicate, "SUBQUERY needs a to-many key path as its collection (tasks, or $p.tasks inside another SUBQUERY), not \(subquery.collection)", entity: entity.name)
            }
            guard collection.isCollection, case .objects = collection.tail else {
                throw LogStoreError(.invalidPredicate, "SUBQUERY's collection \(subquery.collection) is not a to-many relationship; a subquery tests the objects of one, as in SUBQUERY(tasks, $t, $t.done == NO)", entity: entity.name)
            }
        } catch {
            throw error.located(at: subquery.collectionColumns.first)
        }
        var inner = self
        inner.scope.append((subquery.variable, collection.entity))
        let predicate = try inner.bind(subquery.predicate, to: collection.entity)
        let result = path.isEmpty ? nil : try self.path(path, from: collection.entity, startingWithCollection: true)
        return BoundSubquery(origin: origin, collection: collection, predicate: predicate, result: result)
    }

    /// Converts a constant, using the attribute on the other side for
    /// values of the app's own types.
    func operand(_ value: PredicateValue, entity: EntityDescription, other: PredicateExpression) throws(LogStoreError) -> Operand {
        switch value {
        case .null: return .value(.null)
        case .bool(let value): return .value(.bool(value))
        case .integer(let value): return .value(.int64(value))
        case .double(let value): return .value(.double(value))
        case .string(let value): return .value(.string(value))
        case .date(let value): return .value(.date(value))
        case .data(let value): return .value(.data(value))
        case .uuid(let value): return .value(.uuid(value))
        case .decimal(let value): return .value(.decimal(value))
        case .object(let id):
            guard storeID == nil || id.storeID == storeID, let target = model.entitiesByName[id.entityName] else {
                return .object(entity: -1, key: id.key)
            }
            return .object(entity: target.index, key: id.key)
        case .list(let values):
            return .list(try values.map { value throws(LogStoreError) in try operand(value, entity: entity, other: other) })
        case .custom(let custom):
            // A value of the app's type: run it through the transformer of
            // the transformable attribute it is compared with.
            if case .keyPath(let components) = other, case let path = try self.path(components, from: entity),
               case .attribute(let slot) = path.tail, case let attribute = path.entity.attributes[slot],
               case .transformable = attribute.type {
                do throws(LogStoreError) {
                    return .value(try attribute.type.stored(custom.value) ?? .null)
                } catch {
                    throw LogStoreError(error.kind, "\(path.entity.name).\(attribute.name): the predicate's value \(custom) cannot be transformed: \(error.message)", entity: path.entity.name, attribute: attribute.name)
                }
            }
            throw LogStoreError(.invalidPredicate, "the predicate compares a \(type(of: custom.value)), which only a transformable attribute can be compared with (by its transformed data); \(other) is not one", entity: entity.name)
        }
    }

    /// Resolves a key path from `entity`, or from a collection of its
    /// objects when `startingWithCollection` (a subquery's elements).
    func path(_ components: [KeyPathComponent], from start: EntityDescription, startingWithCollection: Bool = false) throws(LogStoreError) -> BoundPath {
        var path = try resolve(components, from: start, startingWithCollection: startingWithCollection)
        path.startsWithCollection = startingWithCollection
        return path
    }

    private func resolve(_ components: [KeyPathComponent], from start: EntityDescription, startingWithCollection: Bool) throws(LogStoreError) -> BoundPath {
        var entity = start
        var steps: [(index: Int, isToMany: Bool)] = []
        var remaining = components[...]
        let text = KeyPathComponent.text(components)
        func requireToMany(_ component: KeyPathComponent) throws(LogStoreError) {
            guard startingWithCollection || steps.contains(where: \.isToMany) else {
                throw LogStoreError(.invalidPredicate, "\(KeyPathComponent.text([component])) needs a to-many relationship before it in \(text) (as in pets.@count)", entity: start.name)
            }
        }
        func unknown(_ key: String) -> LogStoreError {
            LogStoreError(.unknownKey, "\(entity.name) has no attribute or relationship named \(key) (in the key path \(text)); it has \(entity.propertyNames.joined(separator: ", "))", entity: entity.name, attribute: key)
        }
        func transient(_ key: String) -> LogStoreError {
            LogStoreError(.invalidPredicate, "\(entity.name).\(key) is transient: the store does not hold it, so a fetch cannot test or sort by it (in the key path \(text)); fetch without it and filter the objects in memory with filter(_:)", entity: entity.name, attribute: key)
        }
        while let component = remaining.popFirst() {
            switch component {
            case .key(let key):
                switch entity.property(named: key) {
                case .attribute(let slot):
                    if isStoreFetch && entity.attributes[slot].isTransient { throw transient(key) }
                    guard remaining.isEmpty else {
                        throw LogStoreError(.invalidPredicate, "\(entity.name).\(key) is an attribute; the key path \(text) cannot continue past it", entity: entity.name, attribute: key)
                    }
                    return BoundPath(steps: steps, tail: .attribute(slot), entity: entity)
                case .derived(let derived):
                    guard remaining.isEmpty else {
                        throw LogStoreError(.invalidPredicate, "\(entity.name).\(key) is derived; the key path \(text) cannot continue past it", entity: entity.name, attribute: key)
                    }
                    return BoundPath(steps: steps, tail: .derived(derived), entity: entity)
                case .relationship(let index):
                    let relationship = entity.relationships[index]
                    steps.append((index, relationship.isToMany))
                    guard let destination = model.entitiesByName[relationship.destination] else { throw unknown(key) }
                    entity = destination
                case .fetched:
                    throw LogStoreError(.invalidPredicate, "\(entity.name).\(key) is a fetched property; a predicate cannot use it (in the key path \(text))", entity: entity.name, attribute: key)
                case nil:
                    throw unknown(key)
                }
            case .count:
                guard remaining.isEmpty else {
                    throw LogStoreError(.invalidPredicate, "@count ends a key path; \(text) continues after it", entity: entity.name)
                }
                try requireToMany(component)
                return BoundPath(steps: steps, tail: .count, entity: entity)
            case .sum, .average, .minimum, .maximum:
                try requireToMany(component)
                guard let next = remaining.popFirst() else {
                    return BoundPath(steps: steps, tail: .aggregate(component, nil), entity: entity)
                }
                guard case .key(let key) = next, case .attribute(let slot) = entity.property(named: key), remaining.isEmpty else {
                    throw LogStoreError(.invalidPredicate, "\(KeyPathComponent.text([component])) must be followed by one attribute of \(entity.name) in \(text)", entity: entity.name)
                }
                if isStoreFetch && entity.attributes[slot].isTransient { throw transient(key) }
                return BoundPath(steps: steps, tail: .aggregate(component, slot), entity: entity)
            }
        }
        return BoundPath(steps: steps, tail: .objects, entity: entity)
    }
}
