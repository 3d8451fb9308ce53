// How compiled tests are joined (CompiledPredicate.joined): the same answers
// and the same order of evaluation as a loop over the parts, at a depth that
// grows with the logarithm of the parts.

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

    @Test("The raw-byte conjunction answers as a loop does: false at the first false, nil at the first nil before any false, else true")
    func rawConjunctionMatchesALoop() {
        for answers in Self.lists(of: [true, false, nil] as [Bool?], upTo: 5) {
            var called: [Int] = []
            let tests: [(Int) -> Bool?] = answers.indices.map { index in { _ in called.append(index); return answers[index] } }
            let joined = CompiledPredicate.joined(tests[...], empty: { _ in true }) { first, rest in
                { input in
                    guard let answer = first(input) else { return nil }
                    return answer ? rest(input) : false
                }
            }
            let stop = answers.firstIndex { $0 != true }
            #expect(joined(0) == (stop.map { answers[$0] } ?? true), "\(answers)")
            #expect(called == Array(0..<(stop.map { $0 + 1 } ?? answers.count)), "\(answers)")
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
