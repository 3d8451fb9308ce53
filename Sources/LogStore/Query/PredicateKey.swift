// The typed way to build predicates: operators over key paths.

import Foundation

/// A key path in a predicate built in Swift rather than from a string:
///
/// ```swift
/// let expensive = PredicateKey("valueInDollars") > 50
/// let furniture = PredicateKey("assetType.label").equals("furniture", options: .caseInsensitive)
/// let older = PredicateKey("age").between(100, 200) && !PredicateKey("lastName").beginsWith("Sm")
/// let flying = PredicateKey.any("powers.name") == "Flight"
/// ```
///
/// Each produces the same ``ObjectPredicate`` as the equivalent format
/// string: `PredicateKey("age") > 3` equals `try ObjectPredicate("age > 3")`.
public struct PredicateKey: Sendable, Hashable {
    /// The key path's keys and collection operators.
    public let components: [KeyPathComponent]
    let modifier: ComparisonModifier

    /// The key path `path` (`name`, `assetType.label`, `powers.@count`).
    public init(_ path: String) {
        components = KeyPathComponent.parse(path)
        modifier = .direct
    }

    private init(_ path: String, modifier: ComparisonModifier) {
        components = KeyPathComponent.parse(path)
        self.modifier = modifier
    }

    /// `ANY path …`: some element of a to-many key path matches.
    public static func any(_ path: String) -> PredicateKey { PredicateKey(path, modifier: .any) }
    /// `ALL path …`: every element matches.
    public static func all(_ path: String) -> PredicateKey { PredicateKey(path, modifier: .all) }
    /// `NONE path …`: no element matches.
    public static func none(_ path: String) -> PredicateKey { PredicateKey(path, modifier: .none) }

    private func compare(_ op: ComparisonOperator, _ value: Any?, _ options: ComparisonOptions = []) -> ObjectPredicate {
        // An array becomes a list of constants, as a format string's `%@` does.
        let right = PredicateExpression(value: PredicateValue(value))
        return .comparison(PredicateComparison(.keyPath(components), op, right, options: options, modifier: modifier))
    }

    // The comparison operators take any value a format string's `%@` takes
    // (strings, numbers, dates, objects, IDs, arrays); nil compares with nil.

    /// `key == value`.
    public static func == (key: PredicateKey, value: Any?) -> ObjectPredicate { key.compare(.equal, value) }
    /// `key != value`.
    public static func != (key: PredicateKey, value: Any?) -> ObjectPredicate { key.compare(.notEqual, value) }
    /// `key < value`.
    public static func < (key: PredicateKey, value: Any?) -> ObjectPredicate { key.compare(.less, value) }
    /// `key <= value`.
    public static func <= (key: PredicateKey, value: Any?) -> ObjectPredicate { key.compare(.lessOrEqual, value) }
    /// `key > value`.
    public static func > (key: PredicateKey, value: Any?) -> ObjectPredicate { key.compare(.greater, value) }
    /// `key >= value`.
    public static func >= (key: PredicateKey, value: Any?) -> ObjectPredicate { key.compare(.greaterOrEqual, value) }

    /// `== value`, with `[c]`/`[d]` options for strings.
    public func equals(_ value: Any?, options: ComparisonOptions = []) -> ObjectPredicate { compare(.equal, value, options) }
    /// `BETWEEN {lower, upper}`, both ends included.
    public func between(_ lower: Any, _ upper: Any) -> ObjectPredicate { compare(.between, [lower, upper]) }
    /// `IN {values}`.
    public func `in`(_ values: [Any?]) -> ObjectPredicate { compare(.in, values) }
    /// `BEGINSWITH prefix`.
    public func beginsWith(_ prefix: String, options: ComparisonOptions = []) -> ObjectPredicate { compare(.beginsWith, prefix, options) }
    /// `ENDSWITH suffix`.
    public func endsWith(_ suffix: String, options: ComparisonOptions = []) -> ObjectPredicate { compare(.endsWith, suffix, options) }
    /// `CONTAINS value`: a substring of a string, or an element of a collection.
    public func contains(_ value: Any?, options: ComparisonOptions = []) -> ObjectPredicate { compare(.contains, value, options) }
    /// `LIKE pattern`, where `*` matches any run of characters and `?` one.
    public func like(_ pattern: String, options: ComparisonOptions = []) -> ObjectPredicate { compare(.like, pattern, options) }
    /// `MATCHES pattern`: the whole value matches the regular expression.
    public func matches(_ pattern: String, options: ComparisonOptions = []) -> ObjectPredicate { compare(.matches, pattern, options) }
}
