// What each predicate operator means for two operands, derived from the one
// order of stored values (ValueOrder.swift).

import Foundation

/// Core Data's comparison semantics over stored values.
enum Comparing {
    static func holds(_ comparison: BoundComparison, _ left: Operand, _ right: Operand) -> Bool {
        let options = comparison.options
        switch comparison.operator {
        case .equal: return equal(left, right, options)
        case .notEqual: return !equal(left, right, options)
        case .less: return order(left, right, options) == .orderedAscending
        case .lessOrEqual: return [.orderedAscending, .orderedSame].contains(order(left, right, options))
        case .greater: return order(left, right, options) == .orderedDescending
        case .greaterOrEqual: return [.orderedDescending, .orderedSame].contains(order(left, right, options))
        case .between:
            guard case .list(let bounds) = right, bounds.count == 2 else { return false }
            let low = order(left, bounds[0], options), high = order(left, bounds[1], options)
            return (low == .orderedDescending || low == .orderedSame) && (high == .orderedAscending || high == .orderedSame)
        case .in:
            // Nil is never in a collection (Core Data's rule).
            if case .value(.null) = left { return false }
            switch right {
            case .list(let items): return items.contains { equal(left, $0, options) }
            case .value(.string(let text)):
                guard case .value(.string(let needle)) = left, !needle.isEmpty else { return false }
                return fold(text, options).contains(fold(needle, options))
            default: return equal(left, right, options)
            }
        case .contains:
            if case .list(let items) = left { return items.contains { equal($0, right, options) } }
            return search(left, right, options) { $0.contains($1) }
        case .beginsWith: return search(left, right, options) { $0.hasPrefix($1) }
        case .endsWith: return search(left, right, options) { $0.hasSuffix($1) }
        case .like:
            guard case .value(.string(let text)) = left, case .value(.string(let pattern)) = right else { return false }
            return Wildcard.matches(fold(text, options), pattern: fold(pattern, options))
        case .matches:
            guard case .value(.string(let text)) = left else { return false }
            if let regex = comparison.regex {
                return (try? regex.wholeMatch(in: fold(text, options.subtracting(.caseInsensitive)))) != nil
            }
            guard case .value(.string(let pattern)) = right, var regex = try? Regex(pattern) else { return false }
            if options.contains(.caseInsensitive) { regex = regex.ignoresCase() }
            return (try? regex.wholeMatch(in: fold(text, options.subtracting(.caseInsensitive)))) != nil
        }
    }

    /// BEGINSWITH, ENDSWITH and CONTAINS: an empty search string matches
    /// nothing, as in Core Data (Swift's `hasPrefix("")` would say every
    /// string). Every other operator treats the empty string as the
    /// ordinary value it is.
    private static func search(_ left: Operand, _ right: Operand, _ options: ComparisonOptions, _ test: (String, String) -> Bool) -> Bool {
        guard case .value(.string(let text)) = left, case .value(.string(let other)) = right, !other.isEmpty else { return false }
        if options.isEmpty { return test(text, other) }
        return test(fold(text, options), fold(other, options))
    }

    /// `text` with case and/or diacritics folded away, as `options` ask.
    static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        if options.isEmpty { return text }
        if options == .caseInsensitive {
            // ASCII text lowercases byte by byte; the common case, and ten
            // times faster than Foundation's folding.
            if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
            return text.folding(options: [.caseInsensitive], locale: nil)
        }
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return text.folding(options: folding, locale: nil)
    }

    static func equal(_ left: Operand, _ right: Operand, _ options: ComparisonOptions) -> Bool {
        switch (left, right) {
        case (.object(let a, let b), .object(let c, let d)): return a == c && b == d
        case (.list(let a), .list(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1, options) }
        case (.value(let a), .value(let b)):
            return order(a, b, options) == .orderedSame
        default: return false
        }
    }

    static func order(_ left: Operand, _ right: Operand, _ options: ComparisonOptions) -> ComparisonResult? {
        guard case .value(let a) = left, case .value(let b) = right else { return nil }
        return order(a, b, options)
    }

    /// The order of two stored values under `options`: the one definition
    /// (``StoredValue/order(_:_:)``), with strings folded first.
    static func order(_ left: StoredValue, _ right: StoredValue, _ options: ComparisonOptions) -> ComparisonResult? {
        if !options.isEmpty, case .string(let a) = left, case .string(let b) = right {
            return StoredValue.order(.string(fold(a, options)), .string(fold(b, options)))
        }
        return StoredValue.order(left, right)
    }

}

/// LIKE patterns: `*` matches any run of characters, `?` any one.
enum Wildcard {
    static func matches(_ text: String, pattern: String) -> Bool {
        let text = Array(text), pattern = Array(pattern)
        // Classic two-pointer match with backtracking to the last `*`.
        var t = 0, p = 0, star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = p
                mark = t
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
