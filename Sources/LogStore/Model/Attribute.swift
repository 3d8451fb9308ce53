// Attributes: typed values of an entity, with optionality, defaults and rules.

import Foundation

/// A rule an attribute's value must keep for a save to succeed.
public enum ValidationRule: Sendable, Hashable, CustomStringConvertible {
    /// Numbers: at least this.
    case minimum(Double)
    /// Numbers: at most this.
    case maximum(Double)
    /// Dates: no earlier than this.
    case earliest(Date)
    /// Dates: no later than this.
    case latest(Date)
    /// Strings: at least this many characters.
    case minimumLength(Int)
    /// Strings: at most this many characters.
    case maximumLength(Int)
    /// Strings: the whole value matches this regular expression.
    case pattern(String)
    /// Strings: one of these.
    case allowedStrings([String])
    /// Integers: one of these.
    case allowedIntegers([Int64])

    public var description: String {
        switch self {
        case .minimum(let value): "minimum \(Self.number(value))"
        case .maximum(let value): "maximum \(Self.number(value))"
        case .earliest(let date): "no earlier than \(date)"
        case .latest(let date): "no later than \(date)"
        case .minimumLength(let count): "at least \(count) character\(count == 1 ? "" : "s")"
        case .maximumLength(let count): "at most \(count) character\(count == 1 ? "" : "s")"
        case .pattern(let pattern): "matches /\(pattern)/"
        case .allowedStrings(let values): "one of \(values.joined(separator: ", "))"
        case .allowedIntegers(let values): "one of \(values.map(String.init).joined(separator: ", "))"
        }
    }

    /// A bound as people write it: a whole number without a fraction.
    private static func number(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// An attribute of an entity.
///
/// ```swift
/// Attribute("name", .string, optional: false, rules: [.minimumLength(1)])
/// Attribute("valueInDollars", .int32, default: 0, indexed: true, rules: [.minimum(0)])
/// ```
public struct Attribute: Sendable {
    public var name: String
    public var type: AttributeType
    /// Whether nil is a valid value at save time.
    public var isOptional: Bool
    /// The value a new object starts with, of ``type``'s Swift type.
    public var defaultValue: (any Sendable)?
    /// Whether fetches may use an index on it (kept from the next issue on).
    public var isIndexed: Bool
    /// Kept in objects but never saved.
    public var isTransient: Bool
    public var rules: [ValidationRule]

    public init(
        _ name: String, _ type: AttributeType, optional: Bool = true, default defaultValue: (any Sendable)? = nil,
        indexed: Bool = false, transient: Bool = false, rules: [ValidationRule] = []
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue
        self.isIndexed = indexed
        self.isTransient = transient
        self.rules = rules
    }
}

/// A read-only attribute computed from an object's other values, never
/// stored (a hero's age from the birthdate).
public struct DerivedAttribute: Sendable {
    public var name: String
    public var compute: @Sendable (ManagedObject) -> Any?

    public init(_ name: String, _ compute: @escaping @Sendable (ManagedObject) -> Any?) {
        self.name = name
        self.compute = compute
    }
}
