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
        case let value as Decimal: self = .double(NSDecimalNumber(decimal: value).doubleValue)
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

    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let value): value ? "YES" : "NO"
        case .integer(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
        case .date(let value): "CAST(\(value.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data(let value): "<\(value.map { String(format: "%02x", $0) }.joined())>"
        case .uuid(let value): value.uuidString
        case .object(let id): id.uriRepresentation.absoluteString
        case .list(let values): "{" + values.map(\.description).joined(separator: ", ") + "}"
        case .custom(let value): "\(value)"
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
