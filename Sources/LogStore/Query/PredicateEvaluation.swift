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
