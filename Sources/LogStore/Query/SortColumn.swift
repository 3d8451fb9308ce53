// One sort key's values for every match, typed so that comparing two of
// them neither switches over every kind of value nor copies them.

import Foundation

/// The values of one sort key, by match position: nil first, then values.
enum SortColumn {
    case strings([String?])
    case integers([Int64?])
    case numbers([Double?])
    /// Values of mixed or other kinds, compared by ``StoredValue/sortOrder(_:_:)``,
    /// the order every other column is derived from.
    case operands([Operand])

    /// `values` in the narrowest column that holds them all; strings folded
    /// as `options` ask.
    init(_ values: [Operand], options: ComparisonOptions) {
        // Integers and floating-point values in one column compare
        // exactly only as stored values (an Int64 does not fit a Double).
        var strings = true, integers = true, numbers = true
        for value in values {
            switch value {
            case .value(.null): continue
            case .value(.string): integers = false; numbers = false
            case .value(.int16), .value(.int32), .value(.int64), .value(.bool): strings = false; numbers = false
            case .value(.double), .value(.float), .value(.date): strings = false; integers = false
            default: strings = false; integers = false; numbers = false
            }
        }
        func stored(_ operand: Operand) -> StoredValue? {
            if case .value(let value) = operand, value != .null { return value }
            return nil
        }
        if strings {
            self = .strings(values.map { operand in
                guard case .string(let text)? = stored(operand) else { return nil }
                return Comparing.fold(text, options)
            })
        } else if integers {
            self = .integers(values.map { stored($0)?.integer })
        } else if numbers {
            self = .numbers(values.map { operand in
                guard let value = stored(operand) else { return nil }
                if case .date(let date) = value { return date.timeIntervalSinceReferenceDate }
                return value.number
            })
        } else {
            self = .operands(values)
        }
    }

    /// For a column of ASCII strings: each value as a number that orders
    /// as the strings do wherever two numbers differ, so that most
    /// comparisons are one integer comparison, and that says when two
    /// strings are equal. Nil when some string is not ASCII, whose order
    /// bytes do not give, or holds a NUL byte, which the padding uses.
    ///
    /// A string's number is its first 15 bytes (zeros after a shorter
    /// string), then one byte that is 1 when those are the whole string and
    /// 2 when more follow; nil is 0, below every string. Two strings whose
    /// numbers differ compare as their numbers do: either their first 15
    /// bytes differ (where a shorter string's zero byte is below any byte,
    /// which ASCII text without NUL never holds), or those bytes are the
    /// same and the one that ends there is the shorter, so the smaller.
    /// Equal numbers ending in 1 (or nil's 0) are equal values
    /// (``prefixDecides(_:)``); ending in 2, only the strings can tell.
    var asciiPrefixes: [UInt128]? {
        guard case .strings(let values) = self else { return nil }
        var prefixes: [UInt128] = []
        prefixes.reserveCapacity(values.count)
        for value in values {
            guard let value else { prefixes.append(0); continue }
            var prefix: UInt128 = 0
            var count = 0
            for byte in value.utf8 {
                guard byte < 0x80, byte != 0 else { return nil }
                if count < 15 { prefix |= UInt128(byte) << UInt128(8 * (15 - count)) }
                count += 1
            }
            prefixes.append(prefix | (count > 15 ? 2 : 1))
        }
        return prefixes
    }

    /// Whether two values whose ``asciiPrefixes`` are both `prefix` are
    /// equal, without reading them.
    static func prefixDecides(_ prefix: UInt128) -> Bool { prefix & 0xFF != 2 }

    /// Negative, zero or positive as the value at `a` sorts before, with,
    /// or after the value at `b`.
    func compare(_ a: Int, _ b: Int) -> Int {
        switch self {
        case .strings(let values):
            switch (values[a], values[b]) {
            case (nil, nil): 0
            case (nil, _): -1
            case (_, nil): 1
            case let (x?, y?): StoredValue.compare(x, y).sign
            }
        case .integers(let values): Self.compare(values[a], values[b])
        case .numbers(let values): Self.compareNumbers(values[a], values[b])
        case .operands(let values): Self.order(values[a], values[b]).sign
        }
    }

    /// Nil first, then values, objects by key.
    private static func order(_ a: Operand, _ b: Operand) -> ComparisonResult {
        switch (a, b) {
        case (.value(let x), .value(let y)): StoredValue.sortOrder(x, y)
        case (.object(_, let x), .object(_, let y)): x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        case (.value(.null), _): .orderedAscending
        case (_, .value(.null)): .orderedDescending
        default: .orderedSame
        }
    }

    /// As ``StoredValue/sortOrder(_:_:)`` orders them: nil, NaN, numbers.
    private static func compareNumbers(_ a: Double?, _ b: Double?) -> Int {
        switch (a, b) {
        case let (x?, y?) where x.isNaN || y.isNaN: x.isNaN == y.isNaN ? 0 : (x.isNaN ? -1 : 1)
        default: compare(a, b)
        }
    }

    private static func compare<T: Comparable>(_ a: T?, _ b: T?) -> Int {
        switch (a, b) {
        case (nil, nil): 0
        case (nil, _): -1
        case (_, nil): 1
        case let (x?, y?): x == y ? 0 : (x < y ? -1 : 1)
        }
    }
}
