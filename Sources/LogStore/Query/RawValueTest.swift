// Comparisons decided on a record's encoded bytes before it is decoded,
// and predicates made of them: a scan reads every record, and most fail.

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

/// A predicate as one test of a record's encoded bytes, made of
/// ``RawStringTest`` and ``RawValueTest`` for its comparisons.
enum RawTest {
    /// A test of one record's encoded values: its answer, or nil when the
    /// record must be decoded to tell.
    typealias Test = (UnsafeRawBufferPointer) -> Bool?

    /// `predicate` as one test on bytes, made once; nil when one of its
    /// comparisons cannot be decided on bytes (one that reads through a
    /// relationship, or compares two attributes), and its records must be
    /// decoded. Where the test answers nil for a record, the decoded test
    /// answers.
    static func compile(_ predicate: BoundPredicate) -> Test? {
        switch predicate {
        case .constant(let value):
            return { _ in value }
        case .not(let inner):
            guard let test = compile(inner) else { return nil }
            return { bytes in test(bytes).map { !$0 } }
        case .and(let parts):
            return compile(parts).map { joined($0, decidedBy: false) }
        case .or(let parts):
            return compile(parts).map { joined($0, decidedBy: true) }
        case .comparison(let comparison):
            if let test = RawStringTest.test(for: comparison) { return test.evaluate }
            return RawValueTest.test(for: comparison)?.evaluate
        }
    }

    /// Each of `parts` as a test, or nil if one cannot be.
    private static func compile(_ parts: [BoundPredicate]) -> [Test]? {
        var tests: [Test] = []
        for part in parts {
            guard let test = compile(part) else { return nil }
            tests.append(test)
        }
        return tests
    }

    /// `tests` joined by AND (decided by a false part) or OR (by a true
    /// one), in order until one decides: a part that cannot tell (nil)
    /// leaves the answer open, and a later part may still decide it; if
    /// none does, the answer is nil when one could not tell. They call one
    /// another (``CompiledPredicate/joined(_:empty:_:)``): a loop over an
    /// array of them copied each, retaining what it holds, at every record
    /// of a scan.
    static func joined(_ tests: [Test], decidedBy decisive: Bool) -> Test {
        CompiledPredicate.joined(tests[...], empty: { _ in !decisive }) { first, rest in
            { bytes in
                let answer = first(bytes)
                if answer == decisive { return decisive }
                let later = rest(bytes)
                if later == decisive { return decisive }
                return answer == nil || later == nil ? nil : !decisive
            }
        }
    }
}
