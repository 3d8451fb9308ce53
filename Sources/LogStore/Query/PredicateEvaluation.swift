// Evaluating a bound predicate against one object or record.

import Foundation

/// Something a predicate is tested against: a committed record, or an
/// object of a context (with its unsaved changes).
protocol PredicateSubject {
    var entityIndex: Int { get }
    var key: UInt64 { get }
    /// Attribute `index` as stored (transformable values as their data).
    func attribute(_ index: Int) -> StoredValue
    /// The targets of relationship `index`.
    func related(_ index: Int) -> [Self]
    /// A derived attribute's value (nil when it cannot be computed here).
    func derived(_ attribute: DerivedAttribute) -> Any?
}

enum PredicateEvaluation {
    static func evaluate<Subject: PredicateSubject>(_ predicate: BoundPredicate, _ subject: Subject) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .not(let inner): return !evaluate(inner, subject)
        case .and(let parts):
            for part in parts where !evaluate(part, subject) { return false }
            return true
        case .or(let parts):
            for part in parts where evaluate(part, subject) { return true }
            return false
        case .comparison(let comparison): return evaluate(comparison, subject)
        }
    }

    private static func evaluate<Subject: PredicateSubject>(_ comparison: BoundComparison, _ subject: Subject) -> Bool {
        let left = value(comparison.left, subject)
        let right = value(comparison.right, subject)
        switch comparison.modifier {
        case .direct:
            // A to-many key path compared directly means "any of them",
            // except with CONTAINS, which takes the collection itself.
            if isPath(comparison.left), case .list(let items) = left, comparison.operator != .contains {
                return items.contains { Comparing.holds(comparison, $0, right) }
            }
            return Comparing.holds(comparison, left, right)
        case .any:
            return elements(left).contains { Comparing.holds(comparison, $0, right) }
        case .all:
            return elements(left).allSatisfy { Comparing.holds(comparison, $0, right) }
        case .none:
            return !elements(left).contains { Comparing.holds(comparison, $0, right) }
        }
    }

    private static func isPath(_ expression: BoundExpression) -> Bool {
        if case .path(let path) = expression { return path.isCollection }
        return false
    }

    private static func elements(_ operand: Operand) -> [Operand] {
        if case .list(let items) = operand { return items }
        return [operand]
    }

    static func value<Subject: PredicateSubject>(_ expression: BoundExpression, _ subject: Subject) -> Operand {
        switch expression {
        case .constant(let operand): return operand
        case .evaluatedObject: return .object(entity: subject.entityIndex, key: subject.key)
        case .list(let items): return .list(items.map { value($0, subject) })
        case .path(let path): return value(path, subject)
        }
    }

    static func value<Subject: PredicateSubject>(_ path: BoundPath, _ subject: Subject) -> Operand {
        if path.isDecimal { return numeric(plainValue(path, subject)) }
        return plainValue(path, subject)
    }

    /// A Decimal attribute's text as a number (its stored form is text).
    private static func numeric(_ operand: Operand) -> Operand {
        switch operand {
        case .value(.string(let text)): .value(Decimal(string: text).map { .double(NSDecimalNumber(decimal: $0).doubleValue) } ?? .null)
        case .list(let items): .list(items.map(numeric))
        default: operand
        }
    }

    private static func plainValue<Subject: PredicateSubject>(_ path: BoundPath, _ subject: Subject) -> Operand {
        if path.steps.isEmpty, case .attribute(let slot) = path.tail { return .value(subject.attribute(slot)) }
        var subjects = [subject]
        for step in path.steps { subjects = subjects.flatMap { $0.related(step.index) } }
        let isCollection = path.isCollection
        func result(_ items: [Operand]) -> Operand {
            isCollection ? .list(items) : (items.first ?? .value(.null))
        }
        switch path.tail {
        case .attribute(let slot): return result(subjects.map { .value($0.attribute(slot)) })
        case .derived(let derived): return result(subjects.map { .swiftValue($0.derived(derived)) })
        case .objects: return result(subjects.map { .object(entity: $0.entityIndex, key: $0.key) })
        case .count: return .value(.int64(Int64(subjects.count)))
        case .aggregate(let kind, let slot):
            var values = slot.map { slot in subjects.map { $0.attribute(slot) } } ?? []
            if path.isDecimal {
                values = values.map { value in
                    guard case .string(let text) = value, let decimal = Decimal(string: text) else { return value }
                    return .double(NSDecimalNumber(decimal: decimal).doubleValue)
                }
            }
            return .value(Aggregation.aggregate(kind, values))
        }
    }
}

/// Aggregates of stored values: `@sum`, `@avg`, `@min`, `@max`.
enum Aggregation {
    static func aggregate(_ kind: KeyPathComponent, _ values: [StoredValue]) -> StoredValue {
        let present = values.filter { $0 != .null }
        switch kind {
        case .sum:
            if present.allSatisfy(Comparing.isInteger) {
                return .int64(present.reduce(0) { $0 &+ (Comparing.integer($1) ?? 0) })
            }
            return .double(present.reduce(0) { $0 + (Comparing.number($1) ?? 0) })
        case .average:
            guard !present.isEmpty else { return .null }
            return .double(present.reduce(0) { $0 + (Comparing.number($1) ?? 0) } / Double(present.count))
        case .minimum:
            return present.min { Comparing.order($0, $1, []) == .orderedAscending } ?? .null
        case .maximum:
            return present.max { Comparing.order($0, $1, []) == .orderedAscending } ?? .null
        case .count:
            return .int64(Int64(values.count))
        case .key:
            return .null
        }
    }
}

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
            return strings(left, right, options) { $0.contains($1) }
        case .beginsWith: return strings(left, right, options) { $0.hasPrefix($1) }
        case .endsWith: return strings(left, right, options) { $0.hasSuffix($1) }
        case .like: return strings(left, right, options) { Wildcard.matches($0, pattern: $1) }
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

    /// A string operator; an empty search string matches nothing, as in
    /// Core Data (Swift's `hasPrefix("")` would say every string).
    private static func strings(_ left: Operand, _ right: Operand, _ options: ComparisonOptions, _ test: (String, String) -> Bool) -> Bool {
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
        case (.value(.null), .value(.null)): return true
        case (.value(.null), _), (_, .value(.null)): return false
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

    /// The order of two stored values under `options`; nil when they do
    /// not compare (nil, or different kinds of value).
    static func order(_ left: StoredValue, _ right: StoredValue, _ options: ComparisonOptions) -> ComparisonResult? {
        if !options.isEmpty, case .string(let a) = left, case .string(let b) = right {
            return StoredValue.order(.string(fold(a, options)), .string(fold(b, options)))
        }
        return StoredValue.order(left, right)
    }

    static func isInteger(_ value: StoredValue) -> Bool { value.integer != nil }
    static func integer(_ value: StoredValue) -> Int64? { value.integer }
    static func number(_ value: StoredValue) -> Double? { value.number }
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
