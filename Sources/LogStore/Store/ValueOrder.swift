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
    /// - Strings compare by Unicode canonical equivalence, then by the
    ///   scalar values of their NFC forms (``compare(_:_:)-(String,String)``,
    ///   not Swift's `<`, which departs from it); ``Comparing/fold(_:_:)`` folds
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

    /// Two strings by the Unicode scalar values of their NFC forms: equal
    /// when canonically equivalent, else in the order of the first scalar
    /// that differs, a prefix first.
    ///
    /// This is the order Swift documents for `String`, but not what its `<`
    /// does where one string's normal form is a prefix of the other's and
    /// they are in different normalizations: it says neither of "éb"
    /// (precomposed) and "é" (decomposed) is below the other, and puts "ḹz"
    /// below a decomposed "ḹ". An order like that breaks sorting and every
    /// binary search over an index, so strings are compared here.
    ///
    /// Bytes decide without normalizing where the scalars around the first
    /// difference are ones NFC leaves alone and composes nothing into
    /// (``isInert(_:)``): both normal forms then share the prefix and
    /// differ at those scalars, whose UTF-8 bytes order as they do.
    /// Otherwise the two NFC forms are compared.
    static func compare(_ a: String, _ b: String) -> ComparisonResult {
        let quick = a.utf8.withContiguousStorageIfAvailable { x in b.utf8.withContiguousStorageIfAvailable { y in quickOrder(x, y) } }
        if let quick = quick ?? nil, let quick { return quick }
        // `_nfcCodeUnits` is the standard library's NFC (Foundation's on
        // Linux does not compose a Hangul LV syllable with a trailing T).
        let (x, y) = (a._nfcCodeUnits, b._nfcCodeUnits)
        return x.withUnsafeBufferPointer { x in y.withUnsafeBufferPointer { y in byteOrder(x, y) } }
    }

    /// The order of two strings' UTF-8 bytes when it is the order of their
    /// NFC forms (see ``compare(_:_:)-(String,String)``), else nil.
    private static func quickOrder(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> ComparisonResult? {
        let common = min(x.count, y.count)
        var difference = common
        if common > 0, memcmp(x.baseAddress!, y.baseAddress!, common) != 0 {
            difference = 0
            while x[difference] == y[difference] { difference += 1 }
        }
        if difference == x.count && difference == y.count { return .orderedSame }
        // Back to the start of the scalar holding the first difference.
        var start = difference
        while start > 0, start < x.count ? x[start] & 0xC0 == 0x80 : y[start] & 0xC0 == 0x80 { start -= 1 }
        // What precedes `start` normalizes alike in both when an inert
        // scalar follows it; and that scalar stays itself when another
        // inert one (or the end) follows it.
        guard let nextX = inertScalar(in: x, at: start), let nextY = inertScalar(in: y, at: start) else { return nil }
        if difference == x.count { return .orderedAscending }
        if difference == y.count { return .orderedDescending }
        guard inertScalar(in: x, at: nextX) != nil, inertScalar(in: y, at: nextY) != nil else { return nil }
        return x[difference] < y[difference] ? .orderedAscending : .orderedDescending
    }

    /// Where the scalar after the one at `index` starts when that one is
    /// inert or the bytes end at `index`; nil otherwise.
    private static func inertScalar(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        guard index < bytes.count else { return index }
        let lead = bytes[index]
        if lead < 0x80 { return index + 1 }
        let length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        guard index + length <= bytes.count else { return nil }
        var value = UInt32(lead) & (0xFF >> (length + 1))
        for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
        return isInert(value) ? index + length : nil
    }

    /// Whether NFC keeps the scalar as it is, in any context, and never
    /// composes it with a scalar before it: a starter (combining class 0)
    /// that is not the second half of any composition and has no
    /// singleton decomposition. Ranges of whole blocks known to be so:
    /// below U+0300 (Latin, IPA, spacing modifiers), Cyrillic letters,
    /// Hebrew and Arabic letters, kana, Hangul syllables, CJK ideographs.
    /// Any other scalar sends the comparison to the slow, exact path.
    private static func isInert(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0..<0x300, 0x400...0x482, 0x48A...0x52F, 0x5D0...0x5EA, 0x621...0x63A, 0x641...0x64A,
             0x3041...0x3096, 0x30A1...0x30FA, 0x4E00...0x9FFF, 0xAC00...0xD7A3:
            true
        default:
            false
        }
    }

    private static func byteOrder(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> ComparisonResult {
        let common = min(x.count, y.count)
        let difference = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
        if difference != 0 { return difference < 0 ? .orderedAscending : .orderedDescending }
        return x.count == y.count ? .orderedSame : (x.count < y.count ? .orderedAscending : .orderedDescending)
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
    /// -1, 0 or 1 as the order is ascending, the same or descending.
    var sign: Int { rawValue }

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
