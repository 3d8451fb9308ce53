// The attribute types a model can declare, and how each maps to a stored value.

import Foundation

/// The type of an attribute, as Core Data's `NSAttributeType` names them.
///
/// Each type has one Swift type for its values, which ``ManagedObject``
/// reads and writes: `String`, `Bool`, `Int16`, `Int32`, `Int64`, `Double`,
/// `Float`, `Date`, `Data`, `UUID`, `URL`, `Decimal`, or, for
/// ``transformable(_:)``, whatever the named ``StoreValueTransformer`` accepts.
public enum AttributeType: Sendable, Hashable, CustomStringConvertible {
    case string, bool, int16, int32, int64, double, float, date, data, uuid, url, decimal
    /// A value of the app's own type, turned into `Data` and back by the
    /// transformer registered under this name (``ValueTransformers``).
    case transformable(String)

    public var description: String {
        switch self {
        case .string: "String"
        case .bool: "Bool"
        case .int16: "Int16"
        case .int32: "Int32"
        case .int64: "Int64"
        case .double: "Double"
        case .float: "Float"
        case .date: "Date"
        case .data: "Data"
        case .uuid: "UUID"
        case .url: "URL"
        case .decimal: "Decimal"
        case .transformable(let name): "transformable(\(name))"
        }
    }

    /// The value as stored in a record, or nil when `value` is not of this
    /// type. Integers of another width are accepted when they fit, so that
    /// `item["valueInDollars"] = 60` works for an Int32 attribute.
    func stored(_ value: Any) throws(LogStoreError) -> StoredValue? {
        switch self {
        case .string: return (value as? String).map(StoredValue.string)
        case .bool: return (value as? Bool).map(StoredValue.bool)
        case .int16: return Self.integer(value).flatMap(Int16.init(exactly:)).map(StoredValue.int16)
        case .int32: return Self.integer(value).flatMap(Int32.init(exactly:)).map(StoredValue.int32)
        case .int64: return Self.integer(value).map(StoredValue.int64)
        case .double:
            if let double = value as? Double { return .double(double) }
            if let float = value as? Float { return .double(Double(float)) }
            return Self.integer(value).map { .double(Double($0)) }
        case .float:
            if let float = value as? Float { return .float(float) }
            if let double = value as? Double { return .float(Float(double)) }
            return Self.integer(value).map { .float(Float($0)) }
        case .date: return (value as? Date).map(StoredValue.date)
        case .data: return (value as? Data).map(StoredValue.data)
        case .uuid: return (value as? UUID).map(StoredValue.uuid)
        case .url: return (value as? URL).map { .string($0.absoluteString) }
        case .decimal:
            if let decimal = value as? Decimal { return .decimal(decimal) }
            return Self.integer(value).map { .decimal(Decimal($0)) }
        case .transformable(let name):
            return .data(try ValueTransformers.transformer(named: name).transformedValue(value))
        }
    }

    /// The Swift value of a stored value (nil for `.null`).
    func value(_ stored: StoredValue) throws(LogStoreError) -> Any? {
        if case .transformable(let name) = self, case .data(let data) = stored {
            return try ValueTransformers.transformer(named: name).reverseTransformedValue(data)
        }
        return sendableValue(stored)
    }

    /// `stored` as the Swift value an app reads, except that a
    /// transformable value stays the bytes its transformer made (its type
    /// need not be `Sendable`).
    ///
    /// A value of another type than this one stores (``stores(_:)``) reads
    /// as nil: the file is damaged there, and `logstore-tool verify` says so.
    func sendableValue(_ stored: StoredValue) -> (any Sendable)? {
        guard stores(stored) else { return nil }
        switch (self, stored) {
        case (_, .null), (_, .reference), (_, .references): return nil
        case (.url, .string(let text)): return URL(string: text)
        case (.decimal, .string(let text)): return DecimalText.number(text)  // format versions 1 and 2
        case (_, .decimal(let value)): return value
        case (_, .string(let value)): return value
        case (_, .bool(let value)): return value
        case (_, .int16(let value)): return value
        case (_, .int32(let value)): return value
        case (_, .int64(let value)): return value
        case (_, .double(let value)): return value
        case (_, .float(let value)): return value
        case (_, .date(let value)): return value
        case (_, .data(let value)): return value
        case (_, .uuid(let value)): return value
        }
    }

    /// Whether `stored` is a value this type writes (FORMAT.md §12.3): null,
    /// or the one type code that ``stored(_:)`` produces for it (a string
    /// for a URL, and for a Decimal also the text files of format versions
    /// 1 and 2 hold; data for a transformable value).
    func stores(_ stored: StoredValue) -> Bool {
        switch (self, stored) {
        case (_, .null): true
        case (.string, .string), (.url, .string), (.decimal, .string): true
        case (.bool, .bool), (.int16, .int16), (.int32, .int32), (.int64, .int64): true
        case (.double, .double), (.float, .float), (.date, .date), (.uuid, .uuid): true
        case (.data, .data), (.transformable, .data), (.decimal, .decimal): true
        default: false
        }
    }

    private static func integer(_ value: Any) -> Int64? {
        switch value {
        case let value as Int: Int64(value)
        case let value as Int64: value
        case let value as Int32: Int64(value)
        case let value as Int16: Int64(value)
        case let value as Int8: Int64(value)
        case let value as UInt8: Int64(value)
        case let value as UInt16: Int64(value)
        case let value as UInt32: Int64(value)
        case let value as UInt: Int64(exactly: value)
        case let value as UInt64: Int64(exactly: value)
        default: nil
        }
    }
}
