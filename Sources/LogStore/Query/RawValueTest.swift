// Comparisons decided on a record's encoded bytes, before it is decoded: a
// scan reads every record, and most fail the test.

/// `attribute op constant` for an attribute that is not a string (a
/// number, date, Boolean, UUID, data): the one value is read from the
/// record's bytes and tested by the same closure a decoded record is
/// (``CompiledPredicate/valueTest(_:)``), without decoding the record into
/// an array of values first.
struct RawValueTest {
    let slot: Int
    let test: (StoredValue) -> Bool
    /// The same test's integer case, when the constant is an integer: an
    /// integer value is then compared as read, without making a value.
    let integer: CompiledPredicate.IntegerTest?

    /// The test for `comparison`, when it is such a comparison.
    static func test(for comparison: BoundComparison) -> RawValueTest? {
        guard case .path(let path) = comparison.left, let slot = path.directAttribute else { return nil }
        if case .string = path.entity.attributes[slot].type { return nil }
        return CompiledPredicate.valueTest(comparison).map {
            RawValueTest(slot: slot, test: $0, integer: CompiledPredicate.IntegerTest(comparison))
        }
    }

    /// The answer for one record's encoded values, or nil when the bytes
    /// end before the slot (a record saved before the attribute existed),
    /// and the record must be decoded.
    func evaluate(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        var reader = ByteReader(bytes)
        for _ in 0..<slot {
            guard (try? reader.skipTrustedValue()) != nil else { return nil }
        }
        if let integer, let number = try? reader.readTrustedInteger() { return integer.accepts(number) }
        guard let value = try? reader.readValue(trusted: true) else { return nil }
        return test(value)
    }
}

/// A test of one comparison on a record's encoded bytes.
enum RawTest {
    case string(RawStringTest)
    case value(RawValueTest)

    /// The tests a predicate is made of, when every one of them can be
    /// decided on bytes (one comparison, or several joined by AND); nil
    /// otherwise.
    static func tests(for predicate: BoundPredicate) -> [RawTest]? {
        switch predicate {
        case .and(let parts):
            var tests: [RawTest] = []
            for part in parts {
                guard let more = Self.tests(for: part) else { return nil }
                tests += more
            }
            return tests
        case .comparison(let comparison):
            if let test = RawStringTest.test(for: comparison) { return [.string(test)] }
            return RawValueTest.test(for: comparison).map { [.value($0)] }
        default:
            return nil
        }
    }

    /// The answer for one record's encoded values, or nil when the record
    /// must be decoded to tell.
    func evaluate(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        switch self {
        case .string(let test): test.evaluate(bytes)
        case .value(let test): test.evaluate(bytes)
        }
    }

    /// `tests` as one test, made once: false when one of them is false, nil
    /// when one cannot tell before any is false, true when all are true.
    /// Calling it copies no test; a loop over the array copied each one,
    /// retaining what it holds, at every record of a scan.
    static func conjunction(_ tests: [RawTest]) -> (UnsafeRawBufferPointer) -> Bool? {
        if tests.count == 1, case .value(let test) = tests[0] { return test.evaluate }
        if tests.count == 1, case .string(let test) = tests[0] { return test.evaluate }
        return { bytes in
            for test in tests {
                guard let answer = test.evaluate(bytes) else { return nil }
                if !answer { return false }
            }
            return true
        }
    }
}
