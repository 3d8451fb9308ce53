// The model's rules, checked against one object at save time.

import Foundation

/// Checks an object against its entity's rules, collecting every problem.
enum ObjectValidation {
    /// Problems of `object` whose attribute values, converted for storage,
    /// are `stored` (`.null` for nil and for values that did not convert,
    /// which the caller reported).
    static func problems(of object: ManagedObject, stored: [StoredValue], context: ObjectContext) -> [LogStoreError] {
        let entity = object.entity
        var problems: [LogStoreError] = []
        func fail(_ key: String, _ rule: String, _ violation: LogStoreError.Violation, _ value: (any Sendable)?) {
            var error = LogStoreError(.validationFailed, "\(entity.name).\(key) \(rule) (\(object.objectID))", entity: entity.name, attribute: key)
            error.objectID = object.objectID
            error.violation = violation
            error.offendingValue = value
            problems.append(error)
        }
        guard entity.hasAttributeRules || !entity.relationships.isEmpty else { return [] }
        for (index, attribute) in entity.attributes.enumerated() where entity.hasAttributeRules && !attribute.isTransient {
            guard case let value = stored[index], value != .null else {
                if !attribute.isOptional && !object.hasValue(at: index) { fail(attribute.name, "is required but has no value", .required, nil) }
                continue
            }
            for rule in attribute.rules where !satisfies(value, rule) {
                fail(attribute.name, "breaks the rule \"\(rule)\"", rule.violation, attribute.type.sendableValue(value))
            }
        }
        for (index, relationship) in entity.relationships.enumerated() {
            let targets = context.link(of: object, slot: entity.attributes.count + index).targets
            let definition = relationship.definition
            if !relationship.isToMany && !definition.isOptional && targets.isEmpty {
                fail(relationship.name, "is required but is empty", .required, nil)
            }
            if let minimum = definition.minimumCount, relationship.isToMany, targets.count < minimum {
                fail(relationship.name, "holds \(targets.count) objects, fewer than the minimum of \(minimum)", .countTooSmall, targets.count)
            }
            if let maximum = definition.maximumCount, relationship.isToMany, targets.count > maximum {
                fail(relationship.name, "holds \(targets.count) objects, more than the maximum of \(maximum)", .countTooLarge, targets.count)
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
