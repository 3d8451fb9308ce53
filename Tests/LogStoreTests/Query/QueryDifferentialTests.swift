// Differential tests of every query path (issue 21 point 4): random stores
// and requests, each answered by every plan that can answer it (forced one
// by one), with the compiled and raw-byte fast paths on and off, as
// objects, IDs and a count, all held against the objects filtered and
// sorted in memory by the one order of values. The generators and the
// check are shared with the query-plans fuzz target (Fuzz/Targets).
//
// Replay or explore:
//   LOGSTORE_DIFF_SEED=N swift test --filter QueryDifferentialTests       # the case a failure names
//   LOGSTORE_DIFF_SECONDS=1800 swift test --filter QueryDifferentialTests # a long run from a random seed

import Foundation
import LogStoreFuzzTargets
import Testing
@_spi(QueryPlans) @testable import LogStore

@Suite("Query plans agree with in-memory evaluation")
struct QueryDifferentialTests {
    /// Seeds and duration from the environment. Without them, a fixed run
    /// of a few seconds, so the suite stays quick and repeatable.
    struct Settings {
        var firstSeed: UInt64
        /// Cases run at least, and at most (unless `seconds` asks for more).
        var minimumCases: Int
        var maximumCases: Int
        var seconds: Double

        static func fromEnvironment() -> Settings {
            let environment = ProcessInfo.processInfo.environment
            let seed = environment["LOGSTORE_DIFF_SEED"].flatMap { UInt64($0) }
            let seconds = environment["LOGSTORE_DIFF_SECONDS"].flatMap(Double.init)
            if let seed, seconds == nil {
                // Replaying the case a failure named.
                return Settings(firstSeed: seed, minimumCases: 1, maximumCases: 1, seconds: 0)
            }
            if let seconds {
                return Settings(firstSeed: seed ?? UInt64.random(in: 0...UInt64(UInt32.max)), minimumCases: 1, maximumCases: .max, seconds: seconds)
            }
            return Settings(firstSeed: 1, minimumCases: 40, maximumCases: 400, seconds: 3)
        }
    }

    static let size = QueryDifferential.Size(items: 24, requests: 12)

    @Test("Every plan, fast path and fetch form returns what filtering and sorting in memory returns")
    func everyPlanAgrees() throws {
        let settings = Settings.fromEnvironment()
        var differential = QueryDifferential()
        let started = Date()
        try withTemporaryDirectory { directory in
            var seed = settings.firstSeed
            while differential.cases < settings.maximumCases
                && (differential.cases < settings.minimumCases || Date().timeIntervalSince(started) < settings.seconds) {
                let path = directory + "/case-\(seed).logstore"
                try differential.run(Choices(seed: seed), size: Self.size, at: path, label: "LOGSTORE_DIFF_SEED=\(seed)")
                try? FileManager.default.removeItem(atPath: path)
                seed &+= 1
            }
        }
        print("query plans: \(differential.summary) (seeds \(settings.firstSeed)…)")
        for failure in differential.failures.prefix(5) { Issue.record(Comment(rawValue: failure)) }
        #expect(differential.failures.count == 0, "requests disagreed; replay one with the seed it names")
        // A run that forced no plan of some kind, or never had unsaved
        // changes, would pass without testing what it claims to.
        if settings.minimumCases > 1 {
            for kind in ["full scan", "index lookup", "index order"] {
                #expect(differential.plansForced[kind, default: 0] > 0, "no request could use \(kind)")
            }
            #expect(differential.requestsWithPendingChanges > 0)
            #expect(differential.unparsable * 4 < differential.requests, "most generated predicates should parse back")
        }
    }
}
