// A bound predicate turned into closures, for testing many records: each
// node is decided once, not on every record, and the common comparisons of
// an attribute with a constant take a direct path.

import Foundation

enum CompiledPredicate {
    static func compile<Subject: PredicateSubject>(_ predicate: BoundPredicate) -> (Subject) -> Bool {
        switch predicate {
        case .constant(let value):
            return { _ in value }
        case .not(let inner):
            let test: (Subject) -> Bool = compile(inner)
            return { !test($0) }
        case .and(let parts):
            let tests: [(Subject) -> Bool] = parts.map { compile($0) }
            return { subject in
                for test in tests where !test(subject) { return false }
                return true
            }
        case .or(let parts):
            let tests: [(Subject) -> Bool] = parts.map { compile($0) }
            return { subject in
                for test in tests where test(subject) { return true }
                return false
            }
        case .comparison(let comparison):
            if let test: (Subject) -> Bool = attributeComparison(comparison) { return test }
            return { PredicateEvaluation.evaluate(.comparison(comparison), $0) }
        }
    }

    /// `attribute op constant`, without building operands per record.
    private static func attributeComparison<Subject: PredicateSubject>(_ comparison: BoundComparison) -> ((Subject) -> Bool)? {
        guard comparison.modifier == .direct, case .path(let path) = comparison.left, let slot = path.directAttribute,
              case .constant(let constant) = comparison.right else { return nil }
        let type = path.entity.attributes[slot].type
        if case .string = type, case .value(.string(let needle)) = constant,
           let test: (Subject) -> Bool = stringComparison(comparison, slot: slot, needle: needle) {
            return test
        }
        guard let test = valueTest(comparison) else { return nil }
        return { subject in test(subject.attribute(slot)) }
    }

    /// `attribute op constant` for `==`, `!=`, `<`, `<=`, `>`, `>=` as a
    /// test of the attribute's stored value: what both a decoded record and
    /// a raw-byte test (RawValueTest.swift) apply.
    static func valueTest(_ comparison: BoundComparison) -> ((StoredValue) -> Bool)? {
        guard comparison.modifier == .direct, case .constant(.value(let right)) = comparison.right else { return nil }
        let options = comparison.options
        // Which orders of (value, constant) the operator accepts; a value
        // that does not compare with the constant passes only `!=`.
        let accepts: (ascending: Bool, same: Bool, descending: Bool, unordered: Bool)
        switch comparison.operator {
        case .equal: accepts = (false, true, false, false)
        case .notEqual: accepts = (true, false, true, true)
        case .less: accepts = (true, false, false, false)
        case .lessOrEqual: accepts = (true, true, false, false)
        case .greater: accepts = (false, false, true, false)
        case .greaterOrEqual: accepts = (false, true, true, false)
        default: return nil
        }
        func accepted(_ order: ComparisonResult?) -> Bool {
            switch order {
            case .orderedAscending?: accepts.ascending
            case .orderedSame?: accepts.same
            case .orderedDescending?: accepts.descending
            case nil: accepts.unordered
            }
        }
        // An integer against an integer is StoredValue.order's integer case
        // (Booleans as 0 and 1); a scan asks it of every record.
        if options.isEmpty, let constant = right.integer {
            return { value in
                if let integer = value.integer { return accepted(StoredValue.compare(integer, constant)) }
                return accepted(Comparing.order(value, right, options))
            }
        }
        return { value in accepted(Comparing.order(value, right, options)) }
    }

    /// String operators against a constant: the constant is folded once,
    /// and ASCII text is compared byte by byte, case folded in place,
    /// instead of allocating a lowercased copy of every value.
    private static func stringComparison<Subject: PredicateSubject>(_ comparison: BoundComparison, slot: Int, needle: String) -> ((Subject) -> Bool)? {
        let options = comparison.options
        // An empty search string matches nothing (Comparing.search).
        if needle.isEmpty && [.beginsWith, .endsWith, .contains].contains(comparison.operator) { return { _ in false } }
        let folded = Comparing.fold(needle, options)
        let asciiNeedle = needle.utf8.allSatisfy { $0 < 0x80 } ? Array(folded.utf8) : nil
        let caseOnly = options == .caseInsensitive
        func text(_ subject: Subject) -> String? {
            if case .string(let text) = subject.attribute(slot) { return text }
            return nil
        }
        switch comparison.operator {
        case .beginsWith:
            if options.isEmpty { return { text($0)?.hasPrefix(needle) ?? false } }
            return { subject in
                guard let value = text(subject) else { return false }
                if caseOnly, let asciiNeedle, let answer = ASCIIFolding.hasPrefix(value, asciiNeedle) { return answer }
                return Comparing.fold(value, options).hasPrefix(folded)
            }
        case .equal where !options.isEmpty:
            return { subject in
                guard let value = text(subject) else { return false }
                if caseOnly, let asciiNeedle, let answer = ASCIIFolding.equals(value, asciiNeedle) { return answer }
                return Comparing.fold(value, options) == folded
            }
        case .endsWith, .contains:
            let test: (String, String) -> Bool = comparison.operator == .endsWith ? { $0.hasSuffix($1) } : { $0.contains($1) }
            if options.isEmpty { return { text($0).map { test($0, needle) } ?? false } }
            return { subject in text(subject).map { test(Comparing.fold($0, options), folded) } ?? false }
        default:
            return nil
        }
    }
}

/// Case-insensitive comparisons of ASCII text with an already lowercased
/// ASCII needle. Each answers nil when the text is not plain ASCII where it
/// matters, and the caller folds it the general way.
enum ASCIIFolding {
    static func hasPrefix(_ text: String, _ needle: [UInt8]) -> Bool? {
        text.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            guard bytes.count >= needle.count else { return bytes.allSatisfy { $0 < 0x80 } ? false : nil }
            for index in needle.indices {
                let byte = bytes[index]
                guard byte < 0x80 else { return nil }
                if lowercase(byte) != needle[index] { return false }
            }
            // A combining mark right after the prefix would join its last
            // character, and so would "\n" after "\r".
            if bytes.count > needle.count, bytes[needle.count] >= 0x80 || (needle.last == 0x0D && bytes[needle.count] == 0x0A) { return nil }
            return true
        } ?? nil
    }

    static func equals(_ text: String, _ needle: [UInt8]) -> Bool? {
        text.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            guard bytes.count == needle.count else { return false }
            for index in needle.indices where lowercase(bytes[index]) != needle[index] { return false }
            return true
        } ?? nil
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }
}
