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
            return joined(tests[...], empty: { _ in true }) { first, rest in { first($0) && rest($0) } }
        case .or(let parts):
            let tests: [(Subject) -> Bool] = parts.map { compile($0) }
            return joined(tests[...], empty: { _ in false }) { first, rest in { first($0) || rest($0) } }
        case .comparison(let comparison):
            if let test: (Subject) -> Bool = attributeComparison(comparison) { return test }
            // Made once: the case is boxed, and making it in the closure
            // allocated at every record.
            let node = BoundPredicate.comparison(comparison)
            return { PredicateEvaluation.evaluate(node, $0) }
        }
    }

    /// `tests` joined left to right by `join` (AND, OR), or `empty` when
    /// there are none: as a balanced tree of closures, each half calling
    /// the other, so that a test of many parts nests only log2 of them
    /// deep. A loop over an array of the closures copied each one,
    /// retaining its context, at every record tested.
    static func joined<Test>(_ tests: ArraySlice<Test>, empty: Test, _ join: (_ first: Test, _ rest: Test) -> Test) -> Test {
        guard tests.count > 1 else { return tests.first ?? empty }
        let middle = tests.startIndex + tests.count / 2
        return join(joined(tests[..<middle], empty: empty, join), joined(tests[middle...], empty: empty, join))
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
        guard comparison.modifier == .direct, case .constant(.value(let right)) = comparison.right,
              let accepts = OrderTest(comparison.operator) else { return nil }
        let options = comparison.options
        // An integer against an integer is StoredValue.order's integer case
        // (Booleans as 0 and 1); a scan asks it of every record.
        if let integer = IntegerTest(comparison) {
            return { value in
                if let number = value.integer { return integer.accepts(number) }
                return accepts(Comparing.order(value, right, options))
            }
        }
        return { value in accepts(Comparing.order(value, right, options)) }
    }

    /// Which orders of (value, constant) a comparison operator accepts; a
    /// value that does not compare with the constant passes only `!=`.
    struct OrderTest {
        let ascending: Bool, same: Bool, descending: Bool, unordered: Bool

        init?(_ comparisonOperator: ComparisonOperator) {
            switch comparisonOperator {
            case .equal: (ascending, same, descending, unordered) = (false, true, false, false)
            case .notEqual: (ascending, same, descending, unordered) = (true, false, true, true)
            case .less: (ascending, same, descending, unordered) = (true, false, false, false)
            case .lessOrEqual: (ascending, same, descending, unordered) = (true, true, false, false)
            case .greater: (ascending, same, descending, unordered) = (false, false, true, false)
            case .greaterOrEqual: (ascending, same, descending, unordered) = (false, true, true, false)
            default: return nil
            }
        }

        @inline(__always)
        func callAsFunction(_ order: ComparisonResult?) -> Bool {
            switch order {
            case .orderedAscending?: ascending
            case .orderedSame?: same
            case .orderedDescending?: descending
            case nil: unordered
            }
        }
    }

    /// `attribute op constant` with an integer constant and no options,
    /// for an integer value: ``valueTest(_:)``'s integer case, which a
    /// raw-byte test also applies to an integer it reads without decoding
    /// the value.
    struct IntegerTest {
        let constant: Int64
        let accepts: OrderTest

        init?(_ comparison: BoundComparison) {
            guard comparison.modifier == .direct, comparison.options.isEmpty,
                  case .constant(.value(let right)) = comparison.right, let constant = right.integer,
                  let accepts = OrderTest(comparison.operator) else { return nil }
            self.constant = constant
            self.accepts = accepts
        }

        @inline(__always)
        func accepts(_ integer: Int64) -> Bool { accepts(StoredValue.compare(integer, constant)) }
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
