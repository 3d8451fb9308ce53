// The predicate tree: what a format string or the typed builder produces.

import Foundation

/// A condition on objects of an entity: Core Data's `NSPredicate`, named so
/// that it does not collide with Foundation's `Predicate`.
///
/// Make one from a format string in Core Data's syntax, which Foundation on
/// Linux cannot parse:
///
/// ```swift
/// let expensive = try ObjectPredicate("valueInDollars > %d", 50)
/// let furniture = try ObjectPredicate("assetType.label ==[c] 'furniture' AND dateCreated > %@", cutoff)
/// ```
///
/// or with the typed builder (``PredicateKey``), which produces the same
/// tree:
///
/// ```swift
/// let expensive = PredicateKey("valueInDollars") > 50
/// ```
///
/// A predicate is a value: it names keys, not slots, and is checked against
/// an entity when a fetch uses it. Use it in a ``FetchRequest``, or test
/// objects in memory with ``evaluate(with:substitutions:)``.
public indirect enum ObjectPredicate: Sendable, Hashable, CustomStringConvertible {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT predicate`.
    case not(ObjectPredicate)
    /// Every part holds (`AND`, `&&`).
    case and([ObjectPredicate])
    /// Some part holds (`OR`, `||`).
    case or([ObjectPredicate])
    /// One comparison.
    case comparison(PredicateComparison)

    /// Parses `format`, replacing `%@`, `%K`, `%d`, `%i` and `%f` with
    /// `arguments` in order.
    ///
    /// - Throws: `.invalidPredicate` with the ``LogStoreError/column`` where
    ///   parsing stopped and what was expected there.
    public init(_ format: String, _ arguments: Any?...) throws(LogStoreError) {
        var parser = try PredicateParser(format, arguments: arguments)
        self = try parser.parse()
    }

    /// Parses `format` with an array of arguments.
    public init(format: String, argumentArray arguments: [Any?]) throws(LogStoreError) {
        var parser = try PredicateParser(format, arguments: arguments)
        self = try parser.parse()
    }

    /// The predicate with every `$NAME` variable replaced by its value in
    /// `variables` (Core Data's `withSubstitutionVariables`). Variables not
    /// in the dictionary stay, and fail when evaluated.
    public func substituting(_ variables: [String: Any?]) -> ObjectPredicate {
        let values = variables.mapValues { PredicateValue($0) }
        return mapExpressions { $0.substituting(values) }
    }

    public var description: String {
        switch self {
        case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner): "NOT \(inner.parenthesized)"
        case .and(let parts): parts.map(\.parenthesized).joined(separator: " AND ")
        case .or(let parts): parts.map(\.parenthesized).joined(separator: " OR ")
        case .comparison(let comparison): comparison.description
        }
    }

    private var parenthesized: String {
        switch self {
        case .and, .or: "(\(description))"
        default: description
        }
    }

    func mapExpressions(_ transform: (PredicateExpression) -> PredicateExpression) -> ObjectPredicate {
        switch self {
        case .constant: self
        case .not(let inner): .not(inner.mapExpressions(transform))
        case .and(let parts): .and(parts.map { $0.mapExpressions(transform) })
        case .or(let parts): .or(parts.map { $0.mapExpressions(transform) })
        case .comparison(var comparison):
            {
                comparison.left = transform(comparison.left)
                comparison.right = transform(comparison.right)
                return .comparison(comparison)
            }()
        }
    }

    /// `lhs AND rhs`, flattening nested ANDs.
    public static func && (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        .and(lhs.conjuncts + rhs.conjuncts)
    }

    /// `lhs OR rhs`, flattening nested ORs.
    public static func || (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        .or(lhs.disjuncts + rhs.disjuncts)
    }

    /// `NOT predicate`.
    public static prefix func ! (predicate: ObjectPredicate) -> ObjectPredicate { .not(predicate) }

    var conjuncts: [ObjectPredicate] {
        if case .and(let parts) = self { return parts }
        return [self]
    }

    var disjuncts: [ObjectPredicate] {
        if case .or(let parts) = self { return parts }
        return [self]
    }
}

/// One comparison: `left operator[options] right`, optionally over every
/// element of a to-many key path (`ANY`, `ALL`, `NONE`).
public struct PredicateComparison: Sendable, Hashable, CustomStringConvertible {
    /// `ANY`, `ALL`, `NONE`, or none.
    public var modifier: ComparisonModifier
    /// The side before the operator, usually a key path.
    public var left: PredicateExpression
    public var `operator`: ComparisonOperator
    /// The side after the operator, usually a constant.
    public var right: PredicateExpression
    /// `[c]`, `[d]`, `[cd]`.
    public var options: ComparisonOptions

    /// The comparison `left operator[options] right`.
    public init(_ left: PredicateExpression, _ `operator`: ComparisonOperator, _ right: PredicateExpression,
                options: ComparisonOptions = [], modifier: ComparisonModifier = .direct) {
        self.modifier = modifier
        self.left = left
        self.`operator` = `operator`
        self.right = right
        self.options = options
    }

    public var description: String {
        let prefix = switch modifier {
        case .direct: ""
        case .any: "ANY "
        case .all: "ALL "
        case .none: "NONE "
        }
        return "\(prefix)\(left) \(`operator`)\(options.description) \(right)"
    }
}

/// Whether a comparison applies to the value itself or to the elements of a
/// collection.
public enum ComparisonModifier: Sendable, Hashable {
    case direct
    /// `ANY` (or `SOME`): true when some element matches.
    case any
    /// `ALL`: true when every element matches (and for an empty collection).
    case all
    /// `NONE`: true when no element matches.
    case none
}

/// The operators of Core Data's predicate syntax.
public enum ComparisonOperator: String, Sendable, Hashable, CustomStringConvertible {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case between = "BETWEEN"
    case `in` = "IN"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case matches = "MATCHES"

    public var description: String { rawValue }

    /// Operators that take string options.
    var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: true
        default: false
        }
    }
}

/// The `[c]`, `[d]` and `[cd]` modifiers of a string comparison.
public struct ComparisonOptions: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: upper and lower case compare equal.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: letters with and without diacritics compare equal (é and e).
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)

    public var description: String {
        guard !isEmpty else { return "" }
        return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
    }
}

/// One side of a comparison.
public indirect enum PredicateExpression: Sendable, Hashable, CustomStringConvertible {
    /// A key path from the object being tested: `name`, `assetType.label`,
    /// `powers.@count`, `items.@sum.valueInDollars`.
    case keyPath([KeyPathComponent])
    /// The object being tested (`SELF`), optionally followed by a key path.
    case evaluatedObject
    case constant(PredicateValue)
    /// `$NAME`, replaced later (fetched properties bind `$FETCH_SOURCE`),
    /// optionally followed by a key path read from the value bound.
    case variable(String, [KeyPathComponent])
    /// `{a, b, c}` of expressions.
    case list([PredicateExpression])

    public var description: String {
        switch self {
        case .keyPath(let components): KeyPathComponent.text(components)
        case .evaluatedObject: "SELF"
        case .constant(let value): value.description
        case .variable(let name, let path): "$" + name + (path.isEmpty ? "" : "." + KeyPathComponent.text(path))
        case .list(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        }
    }

    func substituting(_ variables: [String: PredicateValue]) -> PredicateExpression {
        switch self {
        case .variable(let name, let path) where path.isEmpty:
            return variables[name].map(PredicateExpression.constant) ?? self
        case .list(let items):
            return .list(items.map { $0.substituting(variables) })
        default:
            return self
        }
    }
}

/// A step of a key path: a key, or a collection operator.
public enum KeyPathComponent: Sendable, Hashable {
    case key(String)
    /// `@count`: how many elements.
    case count
    /// `@sum`, `@avg`, `@min`, `@max`: over the elements' values (of the key that follows).
    case sum, average, minimum, maximum

    static func text(_ components: [KeyPathComponent]) -> String {
        components.map { component in
            switch component {
            case .key(let key): key
            case .count: "@count"
            case .sum: "@sum"
            case .average: "@avg"
            case .minimum: "@min"
            case .maximum: "@max"
            }
        }.joined(separator: ".")
    }

    /// Parses `name.other.@count`: keys and collection operators.
    static func parse(_ path: String) -> [KeyPathComponent] {
        path.split(separator: ".", omittingEmptySubsequences: false).map { part in
            switch part.lowercased() {
            case "@count": .count
            case "@sum": .sum
            case "@avg": .average
            case "@min": .minimum
            case "@max": .maximum
            default: .key(String(part))
            }
        }
    }
}
