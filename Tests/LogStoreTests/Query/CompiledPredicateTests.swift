// How compiled tests are joined (CompiledPredicate.joined, RawTest.joined):
// decoded tests answer as a loop over the parts would, raw-byte tests in
// three-valued logic (nil: the bytes cannot tell); both evaluate the parts
// in order until one decides, nested as deep as the logarithm of the parts.

import Foundation
import Testing
@testable import LogStore

@Suite("Compiled predicates")
struct CompiledPredicateTests {
    /// Every list of up to `length` answers drawn from `answers`.
    static func lists<Answer>(of answers: [Answer], upTo length: Int) -> [[Answer]] {
        (0...length).flatMap { count in
            (0..<Int(pow(Double(answers.count), Double(count)))).map { number in
                var rest = number
                return (0..<count).map { _ in
                    defer { rest /= answers.count }
                    return answers[rest % answers.count]
                }
            }
        }
    }

    @Test("AND and OR joined answer as a loop over the parts does, evaluating the same parts in the same order")
    func andOrMatchALoop() {
        for answers in Self.lists(of: [true, false], upTo: 7) {
            for isAnd in [true, false] {
                var called: [Int] = []
                let tests: [(Int) -> Bool] = answers.indices.map { index in { _ in called.append(index); return answers[index] } }
                let joined = CompiledPredicate.joined(tests[...], empty: { _ in isAnd }) { first, rest in
                    isAnd ? { first($0) && rest($0) } : { first($0) || rest($0) }
                }
                let answer = joined(0)
                // The loop: stops at the first part that decides.
                let decisive = answers.firstIndex(of: !isAnd)
                #expect(answer == (decisive == nil ? isAnd : !isAnd), "\(answers), \(isAnd ? "AND" : "OR")")
                #expect(called == Array(0..<(decisive.map { $0 + 1 } ?? answers.count)), "\(answers)")
            }
        }
    }

    @Test("Raw-byte tests joined by AND and OR: decided by the first deciding part, else nil if a part could not tell, evaluated in order until one decides")
    func rawJoinsDecideAsKleeneLogic() {
        let bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        for answers in Self.lists(of: [true, false, nil] as [Bool?], upTo: 5) {
            for decisive in [false, true] {
                var called: [Int] = []
                let tests: [RawTest.Test] = answers.indices.map { index in { _ in called.append(index); return answers[index] } }
                let joined = RawTest.joined(tests, decidedBy: decisive)
                let deciding = answers.firstIndex(of: decisive)
                let expected: Bool? = deciding != nil ? decisive : answers.contains(nil) ? nil : !decisive
                let label = "\(answers), \(decisive ? "OR" : "AND")"
                #expect(joined(bytes) == expected, "\(label)")
                #expect(called == Array(0..<(deciding.map { $0 + 1 } ?? answers.count)), "\(label)")
            }
        }
    }

    @Test("An AND of 200,000 parts runs on a thread with a 256 KiB stack: the closures nest log2 of the parts deep")
    func manyPartsNestShallow() {
        let tests: [(Int) -> Bool] = (0..<200_000).map { part in { $0 != part - 1 } }
        nonisolated(unsafe) let joined = CompiledPredicate.joined(tests[...], empty: { _ in true }) { first, rest in { first($0) && rest($0) } }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answers: [Bool] = []
        // Nested one inside the next, 200,000 calls deep would need far more
        // than this stack and crash the test process.
        let thread = Thread {
            answers = [joined(-5), joined(7)]
            done.signal()
        }
        thread.stackSize = 256 << 10
        thread.start()
        done.wait()
        #expect(answers == [true, false])
    }
}
