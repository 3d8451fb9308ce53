// Random fetch requests over the query-plan model: predicates from the
// whole grammar (every operator and option, BETWEEN, IN, AND/OR/NOT,
// arithmetic on either side, key paths through the relationships, @count
// and the aggregates, ANY/ALL/NONE, SUBQUERY), constants from the same
// values as the data so that equalities hit, sorts of one or two keys, and
// windows. Sorts and comparisons often use indexed attributes in the forms
// the planner answers with an index, so that every plan gets its turn.

import Foundation
import LogStore

/// LogStore's, not Foundation's.
private typealias PredicateExpression = LogStore.PredicateExpression

struct QueryRequestGenerator {
    var choices: Choices
    /// Whether key paths may pass the relationships (in predicates and
    /// sorts); when not, every comparison and sort is of the item's own
    /// attributes.
    var followsRelationships = true
    /// Items that exist (saved or inserted), and one that is not in the
    /// store, to name in `parent == %@`, `ANY children == %@` and the like,
    /// which a relationship lookup answers.
    var items: [ObjectID] = []

    /// A request for items, or nil when the predicate generated does not
    /// survive printing and parsing (a form the parser refuses), so that
    /// every predicate checked is one a user can write, and its printed
    /// form, in a failure message, is exactly what was run.
    mutating func request() -> FetchRequest? {
        var request = FetchRequest(entityName: QueryPlanModel.entity)
        if choices.next(10) > 0 {
            guard let parsed = try? ObjectPredicate(format: predicate(depth: 2).description, argumentArray: []) else { return nil }
            request.predicate = parsed
        }
        let keys = choices.next(3)
        for position in 0..<keys { request.sortDescriptors.append(sortKey(first: position == 0)) }
        if choices.chance(55) { request.fetchLimit = 1 + choices.next(8) }
        if choices.chance(35) { request.fetchOffset = 1 + choices.next(5) }
        return request
    }

    private mutating func sortKey(first: Bool) -> SortKey {
        let kind = choices.pick(ValueKind.allCases)
        // The first key on an indexed attribute without options is what
        // an index walk (with a limit) can answer.
        if first && choices.chance(50) { return SortKey(kind.indexed, ascending: choices.chance(50)) }
        let attribute = choices.chance(50) ? kind.indexed : kind.plain
        if followsRelationships && choices.chance(5) { return SortKey("parent", ascending: choices.chance(50)) }
        let keyPath = followsRelationships && choices.chance(20) ? "parent." + attribute : attribute
        return SortKey(keyPath, ascending: choices.chance(50), options: options())
    }

    private mutating func options() -> ComparisonOptions {
        choices.chance(70) ? [] : choices.pick([.caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]])
    }

    mutating func predicate(depth: Int) -> ObjectPredicate {
        switch depth > 0 ? choices.next(15) : 0 {
        case 9:
            // Several conditions on one attribute, whose index ranges the
            // planner intersects: `int64 >= 3 AND int64 IN {3, 42}`.
            let kind = choices.pick(ValueKind.allCases)
            let attribute = path(kind: kind, throughParent: false)
            return .and((0..<(2 + choices.next(2))).map { _ in .comparison(attributeWithConstant(kind, attribute)) })
        case 10: return .and((0..<(2 + choices.next(2))).map { _ in predicate(depth: depth - 1) })
        case 11: return .or((0..<(2 + choices.next(2))).map { _ in predicate(depth: depth - 1) })
        case 12: return .not(predicate(depth: depth - 1))
        case 13:
            // An index's ground beside a condition that reads no attribute,
            // which a lookup must still test: `int64 == 3 AND SELF != %@`,
            // `... AND FALSEPREDICATE`.
            let rest: ObjectPredicate = items.isEmpty || choices.chance(40)
                ? .constant(choices.chance(50))
                : .comparison(PredicateComparison(.evaluatedObject, choices.chance(50) ? .equal : .notEqual, .constant(.object(choices.pick(items)))))
            return .and([.comparison(attributeWithConstant()), rest])
        default: return .comparison(comparison())
        }
    }

    // MARK: - Comparisons

    private mutating func comparison() -> PredicateComparison {
        switch choices.next(followsRelationships ? (items.isEmpty ? 20 : 23) : 13) {
        case 0..<8: return attributeWithConstant()
        case 8..<10: return stringOperator(on: .keyPath(path(kind: .string, throughParent: choices.chance(25))))
        case 10: return attributeWithAttribute()
        case 11..<13: return arithmetic()
        case 13..<15: return toMany()
        case 15..<17: return aggregate()
        case 17: return subquery()
        case 18:
            // The relationship itself, against nil or the object itself
            // (an item may be its own parent, or its grandparent).
            let parent = PredicateExpression.keyPath(choices.chance(70) ? [.key("parent")] : [.key("parent"), .key("parent")])
            return PredicateComparison(parent, choices.chance(50) ? .equal : .notEqual, choices.chance(50) ? .constant(.null) : .evaluatedObject)
        case 20..<23:
            return relatedObjects()
        default:
            // A string searched for in an attribute: `'b' IN string`.
            return PredicateComparison(.constant(constant(.string)), .in, .keyPath(path(kind: .string, throughParent: false)), options: options())
        }
    }

    /// `attribute op constant` or the reverse: the planner's ground.
    private mutating func attributeWithConstant() -> PredicateComparison {
        let kind = choices.pick(ValueKind.allCases)
        // Mostly the indexed attribute: the index plans' ground.
        if choices.chance(50) { return attributeWithConstant(kind, [.key(kind.indexed)]) }
        return attributeWithConstant(kind, path(kind: kind, throughParent: choices.chance(15)))
    }

    private mutating func attributeWithConstant(_ kind: ValueKind, _ path: [KeyPathComponent]) -> PredicateComparison {
        let attribute = PredicateExpression.keyPath(path)
        let op = choices.pick([ComparisonOperator.equal, .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in, .in])
        let right: PredicateExpression
        switch op {
        case .between: right = .list([.constant(constant(kind)), .constant(constant(kind))])
        case .in: right = .list((0..<choices.next(4)).map { _ in .constant(constant(kind)) })
        default: right = .constant(constant(kind))
        }
        let options = kind == .string ? options() : []
        if op != .between && op != .in && choices.chance(25) {
            return PredicateComparison(right, mirrored(op), attribute, options: options)
        }
        return PredicateComparison(attribute, op, right, options: options)
    }

    /// BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES and ==, with options.
    private mutating func stringOperator(on left: PredicateExpression) -> PredicateComparison {
        let op = choices.pick([ComparisonOperator.beginsWith, .beginsWith, .endsWith, .contains, .like, .matches, .equal])
        let needle: String = switch op {
        case .like: choices.chance(60) ? choices.pick(QueryPlanValues.likePatterns) : choices.pick(QueryPlanValues.strings)
        case .matches: choices.pick(QueryPlanValues.regexes)
        default: choices.pick(QueryPlanValues.strings)
        }
        return PredicateComparison(left, op, .constant(.string(needle)), options: options())
    }

    /// Two attributes compared: twins, or kinds that compare (numbers
    /// with numbers and dates, strings with UUIDs).
    private mutating func attributeWithAttribute() -> PredicateComparison {
        let kind = choices.pick(ValueKind.allCases)
        let other: ValueKind = switch kind {
        case .string, .uuid: choices.pick([.string, .uuid])
        default: choices.pick([ValueKind.double, .float, .int16, .int32, .int64, .bool, .date])
        }
        let op = choices.pick([ComparisonOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
        return PredicateComparison(.keyPath(path(kind: kind, throughParent: false)), op, .keyPath(path(kind: other, throughParent: choices.chance(30))))
    }

    /// Arithmetic on one side or both: `(int64 + 1) * 2 > 10`.
    private mutating func arithmetic() -> PredicateComparison {
        let op = choices.pick([ComparisonOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
        let left = numericExpression(depth: 2)
        let right: PredicateExpression = choices.chance(40) ? numericExpression(depth: 1) : .constant(constant(choices.pick([.int64, .double, .int16])))
        return choices.chance(30) ? PredicateComparison(right, op, left) : PredicateComparison(left, op, right)
    }

    private mutating func numericExpression(depth: Int) -> PredicateExpression {
        let kinds = ValueKind.allCases.filter(\.isArithmetic)
        guard depth > 0, choices.chance(70) else {
            return choices.chance(70) ? .keyPath(path(kind: choices.pick(kinds), throughParent: choices.chance(15))) : .constant(constant(choices.pick(kinds)))
        }
        if choices.chance(10) { return .negated(numericExpression(depth: depth - 1)) }
        return .arithmetic(choices.pick(ArithmeticOperator.allCases), numericExpression(depth: depth - 1), numericExpression(depth: depth - 1))
    }

    /// `ANY children.x op c`, `ALL …`, `NONE …`, or unmodified (any).
    private mutating func toMany() -> PredicateComparison {
        let kind = choices.pick(ValueKind.allCases)
        let left = PredicateExpression.keyPath([.key("children"), .key(choices.chance(50) ? kind.indexed : kind.plain)])
        var comparison: PredicateComparison
        if kind == .string && choices.chance(40) {
            comparison = stringOperator(on: left)
        } else {
            let op = choices.pick([ComparisonOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .in])
            let right: PredicateExpression = op == .in ? .list((0..<choices.next(4)).map { _ in .constant(constant(kind)) }) : .constant(constant(kind))
            comparison = PredicateComparison(left, op, right, options: kind == .string ? options() : [])
        }
        comparison.modifier = choices.pick([.any, .all, .none, .direct])
        return comparison
    }

    /// `children.@count op n`, or `children.@sum.x op c` and the others.
    private mutating func aggregate() -> PredicateComparison {
        let op = choices.pick([ComparisonOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
        if choices.chance(40) {
            return PredicateComparison(.keyPath([.key("children"), .count]), op, .constant(.integer(Int64(choices.next(4)))))
        }
        let kind = choices.pick(ValueKind.allCases.filter(\.isArithmetic))
        let function = choices.pick([KeyPathComponent.sum, .average, .minimum, .maximum])
        return PredicateComparison(.keyPath([.key("children"), function, .key(choices.chance(50) ? kind.indexed : kind.plain)]), op, .constant(constant(kind)))
    }

    /// `SUBQUERY(children, $c, <comparison of $c>).@count op n`.
    private mutating func subquery() -> PredicateComparison {
        let kind = choices.pick(ValueKind.allCases)
        let element = PredicateExpression.variable("c", [.key(choices.chance(50) ? kind.indexed : kind.plain)])
        let inner: PredicateComparison = kind == .string && choices.chance(40)
            ? stringOperator(on: element)
            : PredicateComparison(element, choices.pick([.equal, .notEqual, .less, .greater]), .constant(constant(kind)))
        let query = PredicateSubquery(.keyPath([.key("children")]), variable: "c", where: .comparison(inner))
        return PredicateComparison(.subquery(query, [.count]), choices.pick([.equal, .greater, .less]), .constant(.integer(Int64(choices.next(3)))))
    }

    // MARK: - Parts

    /// The objects a relationship links to, compared with items:
    /// `parent == %@`, `parent IN %@`, `ANY children == %@`,
    /// `children CONTAINS %@`, `%@ IN children`.
    private mutating func relatedObjects() -> PredicateComparison {
        let one = PredicateExpression.constant(.object(choices.pick(items)))
        switch choices.next(5) {
        case 0: return PredicateComparison(.keyPath([.key("parent")]), .equal, one)
        case 1:
            let some = (0..<(1 + choices.next(3))).map { _ in PredicateExpression.constant(.object(choices.pick(items))) }
            return PredicateComparison(.keyPath([.key("parent")]), .in, .list(some))
        case 2: return PredicateComparison(.keyPath([.key("children")]), .equal, one, modifier: .any)
        case 3: return PredicateComparison(.keyPath([.key("children")]), .contains, one)
        default: return PredicateComparison(one, .in, .keyPath([.key("children")]))
        }
    }

    /// An attribute of `kind`, indexed or not, of the item or its parent.
    private mutating func path(kind: ValueKind, throughParent: Bool) -> [KeyPathComponent] {
        let attribute = KeyPathComponent.key(choices.chance(50) ? kind.indexed : kind.plain)
        return throughParent && followsRelationships ? [.key("parent"), attribute] : [attribute]
    }

    /// A constant for a comparison with `kind`: mostly of that kind, so
    /// that equalities hit; sometimes of another kind, or nil.
    private mutating func constant(_ kind: ValueKind) -> PredicateValue {
        switch choices.next(10) {
        case 0: return .null
        case 1, 2:
            let other = choices.pick(ValueKind.allCases)
            return PredicateValue(other.value(choices.next(other.count)))
        default:
            return PredicateValue(kind.value(choices.next(kind.count)))
        }
    }

    private func mirrored(_ op: ComparisonOperator) -> ComparisonOperator {
        switch op {
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: op
        }
    }
}
