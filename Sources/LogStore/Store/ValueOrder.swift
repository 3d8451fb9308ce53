// The order of stored values: for sorting, ranges and indexes.

import Foundation

extension StoredValue {
    /// The order of two stored values, or nil when they do not compare
    /// (different kinds of value, or nil on either side). Integers of any
    /// width, floating point numbers and booleans compare as numbers; dates
    /// also compare with numbers, as seconds since 2001 (Core Data's rule).
    static func order(_ left: StoredValue, _ right: StoredValue) -> ComparisonResult? {
        switch (left, right) {
        case (.string(let a), .string(let b)): return compare(a, b)
        case (.date(let a), .date(let b)): return compare(a, b)
        case (.date(let a), _):
            return right.number.map { compare(a.timeIntervalSinceReferenceDate, $0) }
        case (_, .date(let b)):
            return left.number.map { compare($0, b.timeIntervalSinceReferenceDate) }
        case (.data(let a), .data(let b)):
            if a == b { return .orderedSame }
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
        case (.uuid(let a), .uuid(let b)): return compare(a.uuidString, b.uuidString)
        case (.uuid(let a), .string(let b)): return compare(a.uuidString, b.uppercased())
        case (.string(let a), .uuid(let b)): return compare(a.uppercased(), b.uuidString)
        default:
            if let a = left.integer, let b = right.integer { return compare(a, b) }
            if let a = left.number, let b = right.number { return compare(a, b) }
            return nil
        }
    }

    /// A total order for indexes and sorting: nil first, then values by
    /// ``order(_:_:)``, values that do not compare by their kind.
    static func sortOrder(_ left: StoredValue, _ right: StoredValue) -> ComparisonResult {
        switch (left, right) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        default:
            return order(left, right) ?? compare(left.kindRank, right.kindRank)
        }
    }

    var integer: Int64? {
        switch self {
        case .int16(let value): Int64(value)
        case .int32(let value): Int64(value)
        case .int64(let value): value
        case .bool(let value): value ? 1 : 0
        default: nil
        }
    }

    var number: Double? {
        switch self {
        case .double(let value): value
        case .float(let value): Double(value)
        default: integer.map(Double.init)
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: 0
        case .bool, .int16, .int32, .int64, .float, .double: 1
        case .date: 2
        case .string: 3
        case .uuid: 4
        case .data: 5
        case .reference, .references: 6
        }
    }

    private static func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
    }
}
