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

/// Evaluates bound predicates. Each function takes the subject tested and
/// the environment: the elements bound to the variables of the subqueries
/// around the expression, outermost first (empty outside any subquery).
enum PredicateEvaluation {
    static func evaluate<Subject: PredicateSubject>(_ predicate: BoundPredicate, _ subject: Subject, _ environment: [Subject] = []) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .not(let inner): return !evaluate(inner, subject, environment)
        case .and(let parts):
            for part in parts where !evaluate(part, subject, environment) { return false }
            return true
        case .or(let parts):
            for part in parts where evaluate(part, subject, environment) { return true }
            return false
        case .comparison(let comparison): return evaluate(comparison, subject, environment)
        }
    }

    private static func evaluate<Subject: PredicateSubject>(_ comparison: BoundComparison, _ subject: Subject, _ environment: [Subject]) -> Bool {
        let left = value(comparison.left, subject, environment)
        let right = value(comparison.right, subject, environment)
        switch comparison.modifier {
        case .direct:
            // A to-many key path compared directly means "any of them",
            // except with CONTAINS, which takes the collection itself.
            if comparison.left.isCollection, case .list(let items) = left, comparison.operator != .contains {
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

    private static func elements(_ operand: Operand) -> [Operand] {
        if case .list(let items) = operand { return items }
        return [operand]
    }

    static func value<Subject: PredicateSubject>(_ expression: BoundExpression, _ subject: Subject, _ environment: [Subject] = []) -> Operand {
        switch expression {
        case .constant(let operand): return operand
        case .evaluatedObject: return object(subject)
        case .list(let items): return .list(items.map { value($0, subject, environment) })
        case .path(let path): return value(path, subject)
        case .variable(let depth, let path):
            let element = environment[depth]
            return path.map { value($0, element) } ?? object(element)
        case .subquery(let subquery):
            let elements = self.elements(subquery, subject, environment)
            guard let path = subquery.result else { return .list(elements.map(object)) }
            return read(path, from: elements)
        case .arithmetic(let op, let left, let right):
            // Collections and objects are not numbers: nil.
            guard case .value(let a) = value(left, subject, environment), case .value(let b) = value(right, subject, environment) else {
                return .value(.null)
            }
            return .value(Arithmetic.apply(op, a, b))
        }
    }

    private static func object<Subject: PredicateSubject>(_ subject: Subject) -> Operand {
        .object(entity: subject.entityIndex, key: subject.key)
    }

    /// The elements of a subquery's collection for which its predicate
    /// holds, each tested with itself as the subject and appended to the
    /// environment as the subquery's variable.
    private static func elements<Subject: PredicateSubject>(_ subquery: BoundSubquery, _ subject: Subject, _ environment: [Subject]) -> [Subject] {
        var candidates = [subquery.origin.map { environment[$0] } ?? subject]
        for step in subquery.collection.steps { candidates = candidates.flatMap { $0.related(step.index) } }
        return candidates.filter { evaluate(subquery.predicate, $0, environment + [$0]) }
    }

    static func value<Subject: PredicateSubject>(_ path: BoundPath, _ subject: Subject) -> Operand {
        if let slot = path.directAttribute { return .value(subject.attribute(slot)) }
        return read(path, from: [subject])
    }

    /// `path` read from `start`: one object, or a subquery's elements
    /// (the path then starts with a collection).
    private static func read<Subject: PredicateSubject>(_ path: BoundPath, from start: [Subject]) -> Operand {
        var subjects = start
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
            let values = slot.map { slot in subjects.map { $0.attribute(slot) } } ?? []
            return .value(Aggregation.aggregate(kind, values))
        }
    }
}
