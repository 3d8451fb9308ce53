// The model's rules, checked against one object at save time.

import Foundation

/// Checks an object against its entity's rules, collecting every problem.
enum ObjectValidation {
    /// Problems of `object` whose attribute values, converted for storage,
    /// are `stored` (`.null` for nil and for values that did not convert,
    /// which the caller reported).
    static func problems(of object: ManagedObject, stored: [StoredValue], context: ObjectContext) -> [LogStoreError] {
        let entity = object.entity
        guard entity.hasAttributeRules || !entity.relationships.isEmpty else { return [] }
        return problems(of: entity, id: object.objectID, stored: stored, hasValue: object.hasValue(at:)) { index in
            context.link(of: object, slot: entity.attributes.count + index).targets.count
        }
    }

    /// Problems of a record of `entity` with the ID `id` whose attribute
    /// values, converted for storage, are `stored`, and whose relationship
    /// at each index holds `linkCount(index)` records: the one set of rules
    /// for objects saved by a context and for records a batch request
    /// writes without objects (`id` nil when the values are those of many
    /// records, as in a batch update). `hasValue(index)` tells an attribute that
    /// holds a value (a transformable one may hold one before it is stored);
    /// relationships are not checked when `linkCount` is nil.
    static func problems(of entity: EntityDescription, id: ObjectID?, stored: [StoredValue], hasValue: (Int) -> Bool, linkCount: ((Int) -> Int)?) -> [LogStoreError] {
        var problems: [LogStoreError] = []
        func fail(_ key: String, _ rule: String, _ violation: LogStoreError.Violation, _ value: (any Sendable)?) {
            var error = LogStoreError(.validationFailed, "\(entity.name).\(key) \(rule)" + (id.map { " (\($0))" } ?? ""), entity: entity.name, attribute: key)
            error.objectID = id
            error.violation = violation
            error.offendingValue = value
            problems.append(error)
        }
        guard entity.hasAttributeRules || !entity.relationships.isEmpty else { return [] }
        for (index, attribute) in entity.attributes.enumerated() where entity.hasAttributeRules && !attribute.isTransient {
            guard case let value = stored[index], value != .null else {
                if !attribute.isOptional && !hasValue(index) { fail(attribute.name, "is required but has no value", .required, nil) }
                continue
            }
            for rule in attribute.rules where !satisfies(value, rule) {
                fail(attribute.name, "breaks the rule \"\(rule)\"", rule.violation, attribute.type.sendableValue(value))
            }
        }
        guard let linkCount else { return problems }
        for (index, relationship) in entity.relationships.enumerated() {
            let count = linkCount(index)
            let definition = relationship.definition
            if !relationship.isToMany && !definition.isOptional && count == 0 {
                fail(relationship.name, "is required but is empty", .required, nil)
            }
            if let minimum = definition.minimumCount, relationship.isToMany, count < minimum {
                fail(relationship.name, "holds \(count) objects, fewer than the minimum of \(minimum)", .countTooSmall, count)
            }
            if let maximum = definition.maximumCount, relationship.isToMany, count > maximum {
                fail(relationship.name, "holds \(count) objects, more than the maximum of \(maximum)", .countTooLarge, count)
            }
        }
        return problems
    }

    /// Whether a number (of any kind, a Decimal too) is not on the
    /// `refused` side of `bound` by the one order of values; NaN, which
    /// compares with no bound, is outside every range. Other values pass.
    private static func within(_ value: StoredValue, _ bound: StoredValue, refusing refused: ComparisonResult) -> Bool {
        guard value.numeric != nil else { return true }
        return StoredValue.order(value, bound).map { $0 != refused } ?? false
    }

    static func satisfies(_ value: StoredValue, _ rule: ValidationRule) -> Bool {
        switch rule {
        case .minimum(let minimum): return within(value, .double(minimum), refusing: .orderedAscending)
        case .maximum(let maximum): return within(value, .double(maximum), refusing: .orderedDescending)
        case .earliest(let date):
            if case .date(let value) = value { return value >= date }
            return true
        case .latest(let date):
            if case .date(let value) = value { return value <= date }
            return true
        case .minimumLength(let count):
            if case .string(let text) = value { return text.count >= count }
            return true
        case .maximumLength(let count):
            if case .string(let text) = value { return text.count <= count }
            return true
        case .pattern(let pattern):
            guard case .string(let text) = value else { return true }
            guard let regex = try? Regex(pattern) else { return false }
            return (try? regex.wholeMatch(in: text)) != nil
        case .allowedStrings(let allowed):
            if case .string(let text) = value { return allowed.contains(text) }
            return true
        case .allowedIntegers(let allowed):
            switch value {
            case .int16(let number): return allowed.contains(Int64(number))
            case .int32(let number): return allowed.contains(Int64(number))
            case .int64(let number): return allowed.contains(number)
            default: return true
            }
        }
    }
}

extension ValidationRule {
    /// The kind of failure that breaking this rule is.
    var violation: LogStoreError.Violation {
        switch self {
        case .minimum, .earliest: .tooSmall
        case .maximum, .latest: .tooLarge
        case .minimumLength: .tooShort
        case .maximumLength: .tooLong
        case .pattern: .pattern
        case .allowedStrings, .allowedIntegers: .notAllowed
        }
    }
}
