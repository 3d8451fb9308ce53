// The one definition of how two stored values compare. Every query path
// (predicate evaluation, the compiled and raw-byte fast paths, index
// lookups and walks, sorting, grouping, @min and @max) uses it or is
// derived from it, and the differential tests hold each against it.

import Foundation

extension StoredValue {
    /// How `left` compares with `right` in a predicate: the same, before,
    /// after, or nil when they do not compare.
    ///
    /// - nil equals nil and compares with nothing else.
    /// - Numbers (Booleans as 0 and 1, integers of any width, floating
    ///   point) compare exactly by value: `Int64.max` is below the double
    ///   2⁶³, and 2⁵³ + 1 is above the double 2⁵³. Zero and negative zero
    ///   are the same. NaN is the same as NaN and does not compare with any
    ///   other number.
    /// - Decimals compare exactly with decimals and integers. A double
    ///   compares with a decimal as the decimal its shortest spelling
    ///   names (so the double 19.99 equals the decimal 19.99), or where it
    ///   has none (infinity, beyond Decimal's range) as a double. A decimal
    ///   NaN is NaN.
    /// - Dates compare with dates, and with numbers as seconds since
    ///   2001-01-01 (Core Data's rule), by the same rules.
    /// - Strings compare by Unicode canonical equivalence, then by scalar
    ///   values (Swift's `String` order); ``Comparing/fold(_:_:)`` folds
    ///   case and diacritics first for `[c]`, `[d]` and `[cd]`.
    /// - UUIDs compare by their bytes. A UUID equals a string that spells
    ///   it, in either case, and does not compare with other strings.
    /// - Data compares byte by byte.
    /// - Values of other different kinds do not compare.
    static func order(_ left: StoredValue, _ right: StoredValue) -> ComparisonResult? {
        switch (left, right) {
        case (.int64(let a), .int64(let b)): return compare(a, b)  // the common case, without `numeric`
        case (.null, .null): return .orderedSame
        case (.null, _), (_, .null): return nil
        case (.string(let a), .string(let b)): return compare(a, b)
        case (.uuid(let a), .uuid(let b)): return compare(a, b)
        case (.uuid(let a), .string(let b)): return UUID(uuidString: b) == a ? .orderedSame : nil
        case (.string(let a), .uuid(let b)): return UUID(uuidString: a) == b ? .orderedSame : nil
        case (.data(let a), .data(let b)):
            if a == b { return .orderedSame }
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
        default:
            guard let a = left.numeric, let b = right.numeric else { return nil }
            return Numeric.order(a, b)
        }
    }

    /// The total order of indexes, sorts and groups: nil first, then NaN,
    /// then numbers and dates, strings, UUIDs, data and references. Within
    /// a kind it is ``order(_:_:)``; values of different kinds (which one
    /// attribute never mixes) order by kind. Wherever ``order(_:_:)`` says
    /// two values of a kind are the same, before or after, this agrees.
    static func sortOrder(_ left: StoredValue, _ right: StoredValue) -> ComparisonResult {
        // The common cases of an index, without ranking kinds.
        switch (left, right) {
        case (.int64(let a), .int64(let b)): return compare(a, b)
        case (.string(let a), .string(let b)): return compare(a, b)
        default: break
        }
        let (leftRank, rightRank) = (left.sortRank, right.sortRank)
        guard leftRank == rightRank else { return compare(leftRank, rightRank) }
        switch (left, right) {
        case (.reference(let a), .reference(let b)): return compare(a, b)
        case (.references(let a), .references(let b)):
            if a == b { return .orderedSame }
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
        default:
            return order(left, right) ?? .orderedSame
        }
    }

    /// Where a value's kind sorts (``sortOrder(_:_:)``).
    private var sortRank: Int {
        switch self {
        case .null: 0
        case .bool, .int16, .int32, .int64, .float, .double, .date, .decimal:
            numeric?.isNaN == true ? 1 : 2
        case .string: 3
        case .uuid: 4
        case .data: 5
        case .reference: 6
        case .references: 7
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
        case .decimal(let value): DecimalText.double(value)
        default: integer.map(Double.init)
        }
    }

    /// The value as a number that keeps it exactly, for comparing; dates
    /// as seconds since 2001.
    var numeric: Numeric? {
        switch self {
        case .double(let value): .floating(value)
        case .float(let value): .floating(Double(value))
        case .date(let value): .floating(value.timeIntervalSinceReferenceDate)
        case .decimal(let value): .decimal(value)
        default: integer.map(Numeric.integer)
        }
    }

    static func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
    }

    /// Two UUIDs by their 16 bytes, first to last: the order of their
    /// spellings too, since each byte is two hex digits in the same place.
    /// An index of UUIDs compares on every insert, so no string is made.
    static func compare(_ a: UUID, _ b: UUID) -> ComparisonResult {
        let difference = withUnsafeBytes(of: a.uuid) { left in
            withUnsafeBytes(of: b.uuid) { right in memcmp(left.baseAddress!, right.baseAddress!, 16) }
        }
        return difference == 0 ? .orderedSame : (difference < 0 ? .orderedAscending : .orderedDescending)
    }
}

/// A number as a stored value holds it, compared exactly across kinds.
enum Numeric {
    case integer(Int64)
    case floating(Double)
    case decimal(Decimal)

    var isNaN: Bool {
        switch self {
        case .integer: false
        case .floating(let value): value.isNaN
        case .decimal(let value): value.isNaN
        }
    }

    static func order(_ left: Numeric, _ right: Numeric) -> ComparisonResult? {
        if left.isNaN || right.isNaN { return left.isNaN && right.isNaN ? .orderedSame : nil }
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return StoredValue.compare(a, b)
        case (.integer(let a), .floating(let b)): return order(a, b)
        case (.floating(let a), .integer(let b)): return order(b, a).map(\.reversed)
        case (.floating(let a), .floating(let b)): return StoredValue.compare(a, b)
        case (.decimal(let a), .decimal(let b)): return StoredValue.compare(a, b)
        case (.decimal(let a), .integer(let b)): return StoredValue.compare(a, Decimal(b))
        case (.integer(let a), .decimal(let b)): return StoredValue.compare(Decimal(a), b)
        case (.decimal(let a), .floating(let b)): return order(a, b)
        case (.floating(let a), .decimal(let b)): return order(b, a).map(\.reversed)
        }
    }

    /// A decimal against a double, by the decimal the double's shortest
    /// spelling names; the way the double was most likely written.
    private static func order(_ decimal: Decimal, _ double: Double) -> ComparisonResult? {
        if let exact = DecimalText.number(double) { return StoredValue.compare(decimal, exact) }
        return StoredValue.compare(DecimalText.double(decimal), double)
    }

    /// An integer against a double, exactly: converting either to the
    /// other's type would round (2⁵³ + 1 to 2⁵³, or 2⁶³ to `Int64.max`).
    private static func order(_ integer: Int64, _ double: Double) -> ComparisonResult? {
        if double.isNaN { return nil }
        // 2⁶³ is exact as a double; every double at or above it is above
        // every Int64, and every double below −2⁶³ is below.
        if double >= 0x1p63 { return .orderedAscending }
        if double < -0x1p63 { return .orderedDescending }
        let whole = double.rounded(.towardZero)
        let truncated = Int64(whole)
        if integer != truncated { return StoredValue.compare(integer, truncated) }
        let fraction = double - whole
        return fraction == 0 ? .orderedSame : (fraction > 0 ? .orderedAscending : .orderedDescending)
    }
}

extension ComparisonResult {
    /// The order seen from the other side.
    var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: .orderedDescending
        case .orderedSame: .orderedSame
        case .orderedDescending: .orderedAscending
        }
    }
}

/// A stored value as a dictionary key: two keys are equal where
/// ``StoredValue/sortOrder(_:_:)`` says the values are the same (NaN with
/// NaN, 5 with 5.0, zero with negative zero), so grouping follows the
/// one order too.
struct SortedValue: Hashable {
    let value: StoredValue

    static func == (lhs: SortedValue, rhs: SortedValue) -> Bool {
        StoredValue.sortOrder(lhs.value, rhs.value) == .orderedSame
    }

    func hash(into hasher: inout Hasher) {
        switch value.numeric {
        case .integer(let integer)?:
            hasher.combine(integer)
        case .decimal(let decimal)?:
            if decimal.isNaN {
                hasher.combine(0x7FF8 as UInt16)
            } else if let integer = Int64(exactly: DecimalText.double(decimal)), Decimal(integer) == decimal {
                hasher.combine(integer)
            } else {
                hasher.combine(DecimalText.double(decimal))
            }
        case .floating(let double)?:
            if double.isNaN {
                hasher.combine(0x7FF8 as UInt16)
            } else if let integer = Int64(exactly: double) {
                hasher.combine(integer)  // as the equal integer hashes; covers −0
            } else {
                hasher.combine(double)
            }
        case nil:
            hasher.combine(value)
        }
    }
}
