// The typed values a record holds, and their identities.

import Foundation

/// The identity of a record in the journal: its entity and a key unique
/// within the store.
public struct RecordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The record's entity.
    public var entity: Symbol
    /// The record's key, unique within the store and never reused.
    public var key: UInt64

    /// Creates a record identity.
    public init(entity: Symbol, key: UInt64) {
        self.entity = entity
        self.key = key
    }

    public static func < (lhs: RecordID, rhs: RecordID) -> Bool {
        (lhs.entity, lhs.key) < (rhs.entity, rhs.key)
    }

    public var description: String { "\(entity)/\(key)" }
}

/// A value as the journal stores it.
///
/// Each case has a one-byte type code in the value encoding (FORMAT.md §5.2).
/// Higher layers map attribute types (URL, Decimal, transformable values) onto
/// these cases.
public enum StoredValue: Hashable, Sendable {
    /// No value (an optional attribute that is nil).
    case null
    case bool(Bool)
    case int16(Int16)
    case int32(Int32)
    case int64(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    /// A point in time, stored exactly as `Date` holds it.
    case date(Date)
    case data(Data)
    case uuid(UUID)
    /// A decimal number, kept exactly (a Decimal attribute's value).
    case decimal(Decimal)
    /// A to-one relationship's target.
    case reference(RecordID)
    /// A to-many relationship's targets, in order.
    case references([RecordID])
}

extension StoredValue {
    /// The value as a Swift value: `nil`, `Bool`, `Int16`, `Int32`,
    /// `Int64`, `Float`, `Double`, `String`, `Date`, `Data`, `UUID`,
    /// `Decimal`, a
    /// ``RecordID`` or an array of them.
    public var value: Any? {
        switch self {
        case .null: nil
        case .bool(let value): value
        case .int16(let value): value
        case .int32(let value): value
        case .int64(let value): value
        case .float(let value): value
        case .double(let value): value
        case .string(let value): value
        case .date(let value): value
        case .data(let value): value
        case .uuid(let value): value
        case .decimal(let value): value
        case .reference(let id): id
        case .references(let ids): ids
        }
    }
}

extension StoredValue {
    /// The name of the value's type, as FORMAT.md §5.2's table calls it.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int16: "int16"
        case .int32: "int32"
        case .int64: "int64"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .uuid: "uuid"
        case .decimal: "decimal"
        case .reference: "reference"
        case .references: "references"
        }
    }
}

/// One attribute's value in an insert or update.
public struct Field: Hashable, Sendable {
    /// The attribute.
    public var attribute: Symbol
    /// Its new value.
    public var value: StoredValue

    /// Creates a field.
    public init(_ attribute: Symbol, _ value: StoredValue) {
        self.attribute = attribute
        self.value = value
    }
}

/// One change a transaction makes to one record.
public enum RecordChange: Hashable, Sendable {
    /// A new record with all of its values.
    case insert(RecordID, [Field])
    /// An existing record's changed values, and only those.
    case update(RecordID, [Field])
    /// A record removed, by identity.
    case delete(RecordID)
    /// The records of one entity with `count` consecutive keys from the
    /// first's removed, as `count` deletes one after another would: how a
    /// file of format version 7 or later holds a save deleting consecutive
    /// keys (FORMAT.md §5.1). `count` is at least 2 and the last key below
    /// ``RecordID/keyLimit``. Read from a file, it is untrusted: it can name
    /// far more keys than the store ever had, so never size anything by it.
    case deleteRun(RecordID, count: UInt64)

    /// The record the change applies to; for a delete run, its first.
    public var recordID: RecordID {
        switch self {
        case .insert(let id, _), .update(let id, _), .delete(let id), .deleteRun(let id, _): id
        }
    }

    /// The keys the change deletes: one for a delete, a run's keys, none
    /// for an insert or update. Keys past `UInt64.max` are left out.
    public var deletedKeys: Range<UInt64> {
        func keys(from first: UInt64, count: UInt64) -> Range<UInt64> {
            let (end, overflow) = first.addingReportingOverflow(count)
            return first..<(overflow ? .max : end)
        }
        switch self {
        case .insert(let id, _), .update(let id, _): return id.key..<id.key
        case .delete(let id): return keys(from: id.key, count: 1)
        case .deleteRun(let id, let count): return keys(from: id.key, count: count)
        }
    }
}

extension RecordChange {
    /// Whether a value of the change is a decimal (format version 3).
    var holdsDecimal: Bool {
        switch self {
        case .insert(_, let fields), .update(_, let fields):
            fields.contains { if case .decimal = $0.value { true } else { false } }
        case .delete, .deleteRun: false
        }
    }
}
