// The Swift types an attribute holds directly, converted without `Any`.

import Foundation

/// A Swift type whose values an attribute stores as they are: `String`,
/// `Bool`, `Int16`, `Int32`, `Int64`, `Int`, `Double`, `Float`, `Date`,
/// `Data`, `UUID`, `Decimal`, and `Optional` of any of them.
///
/// ``Managed`` properties of these types read and write the object's stored
/// values directly, without boxing each value in `Any` and casting it back:
/// the difference is most of the cost of a bulk insert. Properties of other
/// types (`URL`, transformable values, relationships) go through
/// ``ManagedObject/value(forKey:)`` and ``ManagedObject/setValue(_:forKey:)``
/// and behave the same, only slower.
///
/// A value whose stored form is not the attribute's own (an `Int` written to
/// an `Int16` attribute) takes the general path, which converts it or
/// reports the wrong type, so conforming another type cannot bypass the
/// model's types.
public protocol AttributeValue {
    /// The value as the store holds it.
    var storedValue: StoredValue { get }
    /// The value of `storedValue`, or nil when it holds another type.
    init?(storedValue: StoredValue)
}

extension String: AttributeValue {
    @inlinable public var storedValue: StoredValue { .string(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .string(let value) = storedValue else { return nil }
        self = value
    }
}

extension Bool: AttributeValue {
    @inlinable public var storedValue: StoredValue { .bool(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .bool(let value) = storedValue else { return nil }
        self = value
    }
}

extension Int16: AttributeValue {
    @inlinable public var storedValue: StoredValue { .int16(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int16(let value) = storedValue else { return nil }
        self = value
    }
}

extension Int32: AttributeValue {
    @inlinable public var storedValue: StoredValue { .int32(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int32(let value) = storedValue else { return nil }
        self = value
    }
}

extension Int64: AttributeValue {
    @inlinable public var storedValue: StoredValue { .int64(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int64(let value) = storedValue else { return nil }
        self = value
    }
}

extension Int: AttributeValue {
    @inlinable public var storedValue: StoredValue { .int64(Int64(self)) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int64(let value) = storedValue, let int = Int(exactly: value) else { return nil }
        self = int
    }
}

extension Double: AttributeValue {
    @inlinable public var storedValue: StoredValue { .double(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .double(let value) = storedValue else { return nil }
        self = value
    }
}

extension Float: AttributeValue {
    @inlinable public var storedValue: StoredValue { .float(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .float(let value) = storedValue else { return nil }
        self = value
    }
}

extension Date: AttributeValue {
    @inlinable public var storedValue: StoredValue { .date(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .date(let value) = storedValue else { return nil }
        self = value
    }
}

extension Data: AttributeValue {
    @inlinable public var storedValue: StoredValue { .data(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .data(let value) = storedValue else { return nil }
        self = value
    }
}

extension UUID: AttributeValue {
    @inlinable public var storedValue: StoredValue { .uuid(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .uuid(let value) = storedValue else { return nil }
        self = value
    }
}

extension Decimal: AttributeValue {
    @inlinable public var storedValue: StoredValue { .decimal(self) }
    @inlinable public init?(storedValue: StoredValue) {
        guard case .decimal(let value) = storedValue else { return nil }
        self = value
    }
}

extension Optional: AttributeValue where Wrapped: AttributeValue {
    @inlinable public var storedValue: StoredValue { self?.storedValue ?? .null }
    @inlinable public init?(storedValue: StoredValue) {
        if case .null = storedValue {
            self = .none
        } else if let value = Wrapped(storedValue: storedValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

/// Something ``Managed`` does for the one ``AttributeValue`` type its
/// `Value` is, found by comparing `Value` with each type LogStore conforms
/// (``forConformingTypes()``).
///
/// `Managed`'s accessors are inlined where `Value` is concrete, so in an
/// optimized build each comparison folds to a constant and the one that
/// holds becomes a direct call (unoptimized, or with `Value` generic, the
/// comparisons are made at run time). Finding the type by casting `Value.self` to an existential instead
/// ran the conversion as unspecialized generic code, looking up `Optional`'s
/// metadata on every read: most of the cost of reading a typed property.
@usableFromInline
protocol ConformingTypeOperation {
    associatedtype Result
    /// The result when the operation's type is `Known` or `Known?`; nil otherwise.
    func callAsFunction<Known: AttributeValue>(_ known: Known.Type) -> Result?
}

extension ConformingTypeOperation {
    /// The result for the type among those this file conforms, or their
    /// optionals, that the operation's type is; nil when it is none of them.
    @inlinable @inline(__always)
    func forConformingTypes() -> Result? {
        if let result = self(String.self) { return result }
        if let result = self(Bool.self) { return result }
        if let result = self(Int16.self) { return result }
        if let result = self(Int32.self) { return result }
        if let result = self(Int64.self) { return result }
        if let result = self(Int.self) { return result }
        if let result = self(Double.self) { return result }
        if let result = self(Float.self) { return result }
        if let result = self(Date.self) { return result }
        if let result = self(Data.self) { return result }
        if let result = self(UUID.self) { return result }
        return self(Decimal.self)
    }
}

/// Reads attribute `key` of `object` as `Value`: nil when it must take the
/// general path (not stored directly, not loaded, or of another type).
@usableFromInline
struct ReadStoredValue<Value, Object: ManagedObject>: ConformingTypeOperation {
    @usableFromInline let object: Object
    @usableFromInline let key: String

    @inlinable init(object: Object, key: String) {
        self.object = object
        self.key = key
    }

    @inlinable @inline(__always)
    func callAsFunction<Known: AttributeValue>(_: Known.Type) -> Value?? {
        if Value.self == Known.self {
            return .some(object.storedValue(forDirectKey: key).flatMap(Known.init(storedValue:)).map { unsafeBitCast($0, to: Value.self) })
        }
        if Value.self == Known?.self {
            return .some(object.storedValue(forDirectKey: key).flatMap(Known?.init(storedValue:)).map { unsafeBitCast($0, to: Value.self) })
        }
        return nil
    }
}

/// Writes `value` to attribute `key` of `object`: false when it must take
/// the general path (``ManagedObject/setStoredValue(_:forDirectKey:)``).
@usableFromInline
struct WriteStoredValue<Value, Object: ManagedObject>: ConformingTypeOperation {
    @usableFromInline let object: Object
    @usableFromInline let key: String
    @usableFromInline let value: Value

    @inlinable init(object: Object, key: String, value: Value) {
        self.object = object
        self.key = key
        self.value = value
    }

    @inlinable @inline(__always)
    func callAsFunction<Known: AttributeValue>(_: Known.Type) -> Bool? {
        if Value.self == Known.self {
            return object.setStoredValue(unsafeBitCast(value, to: Known.self).storedValue, forDirectKey: key)
        }
        if Value.self == Known?.self {
            return object.setStoredValue(unsafeBitCast(value, to: Known?.self).storedValue, forDirectKey: key)
        }
        return nil
    }
}

extension AttributeType {
    /// Whether values of this type are stored as the app gives them (not
    /// parsed, like URL, nor transformed).
    var isStoredDirectly: Bool {
        switch self {
        case .url, .transformable: false
        default: true
        }
    }

    /// Whether `stored` is a value of this type as stored (or `.null`),
    /// so it can be written without converting.
    func holds(_ stored: StoredValue) -> Bool {
        switch (self, stored) {
        case (_, .null), (.string, .string), (.bool, .bool), (.int16, .int16), (.int32, .int32),
             (.int64, .int64), (.double, .double), (.float, .float), (.date, .date), (.data, .data), (.uuid, .uuid),
             (.decimal, .decimal):
            true
        default:
            false
        }
    }
}
