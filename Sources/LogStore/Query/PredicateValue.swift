// The constant values a predicate compares against.

import Foundation

/// A constant in a predicate: a literal of the format string, or an
/// argument (`%@`, `%d`, `%f`) converted when the predicate was made.
public enum PredicateValue: Sendable, Hashable, CustomStringConvertible {
    /// `nil`, `NULL`.
    case null
    /// `YES`, `NO`, `TRUE`, `FALSE`.
    case bool(Bool)
    /// Integers of any width.
    case integer(Int64)
    /// Floating-point numbers.
    case double(Double)
    case string(String)
    /// A point in time; compares with dates.
    case date(Date)
    /// Bytes; a transformable value's data compares as this.
    case data(Data)
    case uuid(UUID)
    /// A decimal number, kept exactly; compares with numbers by value.
    case decimal(Decimal)
    /// An object, by ID (a managed object passed as `%@` becomes its ID).
    case object(ObjectID)
    /// A collection: `{1, 2, 3}`, or an array or set passed as `%@`.
    case list([PredicateValue])
    /// A value of the app's own type, for a transformable attribute: it is
    /// run through that attribute's transformer when a fetch uses it, and
    /// compared by the resulting data.
    case custom(CustomValue)

    /// Converts a Swift value: strings, numbers, booleans, dates, data,
    /// UUIDs, URLs (as their string), objects and IDs, arrays and sets of
    /// these; anything else becomes ``custom(_:)``.
    public init(_ value: Any?) {
        guard let value else { self = .null; return }
        switch value {
        case let value as PredicateValue: self = value
        case let value as String: self = .string(value)
        case let value as Substring: self = .string(String(value))
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as Int16: self = .integer(Int64(value))
        case let value as Int8: self = .integer(Int64(value))
        case let value as UInt8: self = .integer(Int64(value))
        case let value as UInt16: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as UInt64: self = Int64(exactly: value).map(PredicateValue.integer) ?? .double(Double(value))
        case let value as UInt: self = Int64(exactly: value).map(PredicateValue.integer) ?? .double(Double(value))
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as Decimal: self = .decimal(value)
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        case let value as UUID: self = .uuid(value)
        case let value as URL: self = .string(value.absoluteString)
        case let value as ObjectID: self = .object(value)
        case let value as ManagedObject: self = .object(value.objectID)
        case let value as any OptionalProtocol:
            self = value.wrapped.map(PredicateValue.init) ?? .null
        case let value as any Collection: self = .list(value.map { PredicateValue($0) })
        default: self = .custom(CustomValue(value))
        }
    }

    /// The value as format text that parses back to it (see
    /// ``ObjectPredicate`` for the `CAST` forms); a custom value prints as
    /// its own description, which does not.
    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let value): value ? "YES" : "NO"
        case .integer(let value): "\(value)"
        case .double(let value): Self.numberText(value)
        case .string(let value): Self.quoted(value)
        case .date(let value): "CAST(\(Self.numberText(value.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let value): "CAST(\"\(value.map { String(format: "%02x", $0) }.joined())\", \"NSData\")"
        case .uuid(let value): "CAST(\"\(value.uuidString)\", \"NSUUID\")"
        case .decimal(let value): "CAST(\"\(DecimalText.text(value))\", \"NSDecimalNumber\")"
        case .object(let id): "CAST(\(Self.quoted(id.uriString)), \"NSManagedObjectID\")"
        case .list(let values): "{" + values.map(\.description).joined(separator: ", ") + "}"
        case .custom(let value): "\(value)"
        }
    }

    /// A double as a literal: Swift's shortest form that reads back as the
    /// same number (`0.1`, `1e+300`); infinities and NaN, which have no
    /// literal, as `CAST("inf", "NSNumber")`.
    private static func numberText(_ value: Double) -> String {
        if value.isFinite { return "\(value)" }
        let text = value.isNaN ? "nan" : value < 0 ? "-inf" : "inf"
        return "CAST(\"\(text)\", \"NSNumber\")"
    }

    /// A string in double quotes, with the escapes the lexer reads back:
    /// quotes, backslashes and control characters escaped, everything else
    /// as it is.
    private static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: result += String(format: "\\u%04X", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Equal values, where every NaN equals every other NaN: a predicate
    /// comparing with NaN equals itself, and its description reads back as
    /// an equal predicate. (Evaluation is unaffected: NaN still equals no
    /// stored value but NaN, by the one order of values.)
    public static func == (lhs: PredicateValue, rhs: PredicateValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): a == b
        case (.date(let a), .date(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.decimal(let a), .decimal(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        case (.list(let a), .list(let b)): a == b
        case (.custom(let a), .custom(let b)): a == b
        case (.null, _), (.bool, _), (.integer, _), (.double, _), (.string, _), (.date, _), (.data, _), (.uuid, _),
             (.decimal, _), (.object, _), (.list, _), (.custom, _): false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .integer(let value): hasher.combine(2); hasher.combine(value)
        case .double(let value):
            hasher.combine(3)
            // Every NaN hashes alike, as they are equal.
            if value.isNaN { hasher.combine(Double.nan.bitPattern) } else { hasher.combine(value) }
        case .string(let value): hasher.combine(4); hasher.combine(value)
        case .date(let value): hasher.combine(5); hasher.combine(value)
        case .data(let value): hasher.combine(6); hasher.combine(value)
        case .uuid(let value): hasher.combine(7); hasher.combine(value)
        case .object(let value): hasher.combine(8); hasher.combine(value)
        case .list(let values): hasher.combine(9); hasher.combine(values)
        case .custom(let value): hasher.combine(10); hasher.combine(value)
        case .decimal(let value): hasher.combine(11); hasher.combine(DecimalText.text(value))
        }
    }
}

/// A value of the app's own type inside a predicate (see
/// ``PredicateValue/custom(_:)``).
///
/// Predicates are `Sendable`, so that a fetch can run in the background; a
/// custom value must therefore be immutable once passed, as the value types
/// a transformer takes (colors, coordinates) are. Two custom values are
/// equal when they are equal `Hashable` values, or print the same.
public struct CustomValue: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The app's value.
    public let value: Any

    init(_ value: Any) { self.value = value }

    public static func == (lhs: CustomValue, rhs: CustomValue) -> Bool {
        if let left = lhs.value as? AnyHashable, let right = rhs.value as? AnyHashable { return left == right }
        return String(reflecting: lhs.value) == String(reflecting: rhs.value)
    }

    public func hash(into hasher: inout Hasher) {
        if let value = value as? AnyHashable { hasher.combine(value) } else { hasher.combine(String(reflecting: value)) }
    }

    public var description: String { String(describing: value) }
}
