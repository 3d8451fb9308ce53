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
///
/// Beyond comparisons, the language has Core Data's `SUBQUERY` and
/// arithmetic:
///
/// ```swift
/// let busy = try ObjectPredicate("SUBQUERY(tasks, $t, $t.done == NO).@count > 2")
/// let older = try ObjectPredicate("birthdate < $FETCH_SOURCE.birthdate - 315576000")
/// let doubled = try ObjectPredicate("(age + 1) * 2 > score")
/// ```
///
/// ``description`` prints a predicate in this syntax, and the text parses
/// back to an equal predicate, with two exceptions: a value of the app's
/// own type (``PredicateValue/custom(_:)``) prints as its description,
/// which is not syntax; and a key that is not an identifier (one with a
/// space or a dot, given as `%K` or to ``PredicateKey``) prints as it is,
/// and reads back as something else. Values without a literal of their own
/// print as `CAST`: dates as `CAST(seconds since 2001, "NSDate")` (Core
/// Data's form), and, as LogStore's extensions, UUIDs as
/// `CAST("…", "NSUUID")`, data as `CAST("hex", "NSData")`, object IDs as
/// `CAST("logstore://…", "NSManagedObjectID")` and infinities and NaN as
/// `CAST("inf", "NSNumber")`. An array given as an argument reads back as a
/// list of values, which the parser also makes of it.
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
    ///
    /// Substitution reaches inside a `SUBQUERY`'s predicate, but never
    /// replaces the subquery's own variable there (`$t` in
    /// `SUBQUERY(tasks, $t, …)` stays the element).
    public func substituting(_ variables: [String: Any?]) -> ObjectPredicate {
        substituting(values: variables.mapValues { PredicateValue($0) })
    }

    func substituting(values: [String: PredicateValue]) -> ObjectPredicate {
        mapExpressions { $0.substituting(values) }
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
///
/// Two comparisons are equal when they compare the same things the same
/// way, wherever they were written in a format string.
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
    /// Where each key path and variable of ``left`` starts in the format
    /// string, in the order they are written (empty for a comparison built
    /// in Swift), so that the binder can say where an unknown key is.
    var leftColumns: [Int] = []
    /// The same for ``right``.
    var rightColumns: [Int] = []

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

    // Written out so that the source columns take no part.
    public static func == (lhs: PredicateComparison, rhs: PredicateComparison) -> Bool {
        lhs.modifier == rhs.modifier && lhs.left == rhs.left && lhs.operator == rhs.operator
            && lhs.right == rhs.right && lhs.options == rhs.options
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(modifier)
        hasher.combine(left)
        hasher.combine(`operator`)
        hasher.combine(right)
        hasher.combine(options)
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
    /// `value BETWEEN {lower, upper}`, both ends included; the right side
    /// is a two-element list or a `$VARIABLE` substituted with one.
    case between = "BETWEEN"
    /// `value IN collection`: the value is an element of a list, an array
    /// argument or a to-many key path. With a string on the right, Core
    /// Data's substring test: `'nn' IN name` holds when name contains "nn"
    /// (the left must then be a string, a key path or a variable). A
    /// number, boolean, date, data, UUID or object on the right is refused
    /// when the predicate is parsed, or bound if substituted.
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

/// The `[c]`, `[d]` and `[cd]` modifiers of a string comparison. On a side
/// that cannot be a string (a number, a date, arithmetic), the parser
/// refuses them.
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
    /// `SUBQUERY(collection, $x, predicate)`: the elements of a to-many
    /// key path for which the predicate holds, optionally followed by a
    /// key path read from them (`.@count`, `.@sum.hours`, `.name`).
    case subquery(PredicateSubquery, [KeyPathComponent])
    /// `left + right`, `left - right`, `left * right`, `left / right`
    /// (see ``ArithmeticOperator`` for what each does with integers,
    /// doubles and dates).
    case arithmetic(ArithmeticOperator, PredicateExpression, PredicateExpression)
    /// `-expression`, which evaluates as `0 - expression`. A minus written
    /// right before a number is part of the number: `-5` is the constant
    /// -5, while `-(5)` and `-age` are negations.
    case negated(PredicateExpression)

    /// The expression a value given as an argument or substituted for a
    /// variable becomes: a list of constants for an array (as `{…}` is
    /// written), the constant otherwise.
    init(value: PredicateValue) {
        if case .list(let values) = value {
            self = .list(values.map(PredicateExpression.init(value:)))
        } else {
            self = .constant(value)
        }
    }

    public var description: String { text(precedence: 0) }

    /// How tightly the expression binds, for parentheses: an operand binds
    /// tightest.
    private var precedence: Int {
        switch self {
        case .arithmetic(let op, _, _): op.precedence
        case .negated: 3
        default: 4
        }
    }

    /// The expression as format text, parenthesized when it binds less
    /// tightly than `precedence` asks.
    private func text(precedence context: Int) -> String {
        let text: String
        switch self {
        case .keyPath(let components): text = KeyPathComponent.formatText(components)
        case .evaluatedObject: text = "SELF"
        case .constant(let value): text = value.description
        case .variable(let name, let path): text = "$" + name + (path.isEmpty ? "" : "." + KeyPathComponent.formatText(path))
        case .list(let items): text = "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .subquery(let subquery, let path): text = subquery.description + (path.isEmpty ? "" : "." + KeyPathComponent.formatText(path))
        case .arithmetic(let op, let left, let right):
            // Left associative: a right operand of the same precedence
            // needs parentheses (`a - (b - c)`), a left one does not.
            text = left.text(precedence: op.precedence) + " \(op) " + right.text(precedence: op.precedence + 1)
        case .negated(let operand):
            // `-5` would read back as the constant -5, so a negated number
            // keeps its parentheses: `-(5)`.
            switch operand {
            case .constant(.integer): text = "-(\(operand))"
            case .constant(.double(let value)) where value.isFinite: text = "-(\(operand))"
            default: text = "-" + operand.text(precedence: 4)
            }
        }
        return precedence < context ? "(\(text))" : text
    }

    func substituting(_ variables: [String: PredicateValue]) -> PredicateExpression {
        switch self {
        case .variable(let name, let path) where path.isEmpty:
            return variables[name].map(PredicateExpression.init(value:)) ?? self
        case .list(let items):
            return .list(items.map { $0.substituting(variables) })
        case .subquery(var subquery, let path):
            subquery.collection = subquery.collection.substituting(variables)
            // Inside, the subquery's variable is the element, never a value.
            var inner = variables
            inner[subquery.variable] = nil
            subquery.predicate = subquery.predicate.substituting(values: inner)
            return .subquery(subquery, path)
        case .arithmetic(let op, let left, let right):
            return .arithmetic(op, left.substituting(variables), right.substituting(variables))
        case .negated(let operand):
            return .negated(operand.substituting(variables))
        case .keyPath, .evaluatedObject, .constant, .variable:
            return self
        }
    }
}

/// `SUBQUERY(collection, $variable, predicate)` (Core Data's subquery
/// expression): the elements of the to-many key path `collection` for
/// which `predicate` holds, with `$variable` bound to the element.
///
/// ```swift
/// let busy = try ObjectPredicate("SUBQUERY(tasks, $t, $t.done == NO).@count > 2")
/// ```
///
/// Inside the predicate, `$variable` and plain key paths both read the
/// element (`$t.done` and `done` are the same); the variables of
/// subqueries around it stay visible, so a nested subquery can compare
/// with the outer element:
/// `SUBQUERY(projects, $p, SUBQUERY($p.tasks, $t, $t.owner == $p.lead).@count > 0).@count > 0`.
/// A fetch with a subquery tests every record (no index answers it).
public struct PredicateSubquery: Sendable, Hashable, CustomStringConvertible {
    /// The to-many key path whose elements are tested: `tasks`, or
    /// `$p.tasks` from an outer subquery's element.
    public var collection: PredicateExpression
    /// The name of the variable (without `$`) bound to each element.
    public var variable: String
    /// The condition each element must meet.
    public var predicate: ObjectPredicate
    /// Where the collection's key path starts in the format string
    /// (empty for a subquery built in Swift); no part of equality.
    var collectionColumns: [Int] = []

    /// `SUBQUERY(collection, $variable, predicate)`.
    public init(_ collection: PredicateExpression, variable: String, where predicate: ObjectPredicate) {
        self.collection = collection
        self.variable = variable
        self.predicate = predicate
    }

    public var description: String { "SUBQUERY(\(collection), $\(variable), \(predicate))" }

    // Written out so that the source columns take no part.
    public static func == (lhs: PredicateSubquery, rhs: PredicateSubquery) -> Bool {
        lhs.collection == rhs.collection && lhs.variable == rhs.variable && lhs.predicate == rhs.predicate
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(collection)
        hasher.combine(variable)
        hasher.combine(predicate)
    }
}

/// A step of a key path: a key, or a collection operator.
public enum KeyPathComponent: Sendable, Hashable {
    case key(String)
    /// `@count`: how many elements.
    case count
    /// `@sum`, `@avg`, `@min`, `@max`: over the elements' values (of the key that follows).
    case sum, average, minimum, maximum

    /// Words a key cannot be written as without `#`: the parser would read
    /// them as keywords.
    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "BETWEEN", "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES",
        "ANY", "SOME", "ALL", "NONE", "TRUEPREDICATE", "FALSEPREDICATE", "NIL", "NULL", "YES", "NO",
        "TRUE", "FALSE", "SELF", "SUBQUERY", "CAST",
    ]

    /// The key path as format text: keys that are keywords, or start with a
    /// digit, escaped with `#`.
    static func formatText(_ components: [KeyPathComponent]) -> String {
        components.map { component in
            guard case .key(let key) = component else { return text([component]) }
            let needsEscape = keywords.contains(key.uppercased()) || key.unicodeScalars.first.map { $0.isASCII && $0.properties.numericType != nil } == true
            return needsEscape ? "#" + key : key
        }.joined(separator: ".")
    }

    /// The key path as written in messages.
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
