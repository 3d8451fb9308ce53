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

    /// The test, as a closure of one record's encoded values that answers
    /// nil when the record must be decoded to tell. Made once, calling it
    /// copies nothing; a method called on an element of an array of tests
    /// copied the test, retaining what it holds, at every record of a scan.
    var closure: (UnsafeRawBufferPointer) -> Bool? {
        switch self {
        case .string(let test): test.evaluate
        case .value(let test): test.evaluate
        }
    }

    /// `tests` as one test, made once: false when one of them is false, nil
    /// when one cannot tell before any is false, true when all are true.
    /// The tests are closures calling one another
    /// (``CompiledPredicate/joined(_:empty:_:)``), not a loop over them, for
    /// the reason ``closure`` gives.
    static func conjunction(_ tests: [RawTest]) -> (UnsafeRawBufferPointer) -> Bool? {
        CompiledPredicate.joined(tests.map(\.closure)[...], empty: { _ in true }) { first, rest in
            { bytes in
                guard let answer = first(bytes) else { return nil }
                return answer ? rest(bytes) : false
            }
        }
    }
}
