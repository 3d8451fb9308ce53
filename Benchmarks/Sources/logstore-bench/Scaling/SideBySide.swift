// Running a workload on both stores: alternating, repeated, answers compared.

/// How a workload's answers are checked.
enum ResultCheck {
    /// Each round, both stores must return equal digests.
    case bothStoresAgree
    /// The cases check their answers against the values the harness wrote
    /// (their timing differs, so their answers may); `description` says how.
    case eachAgainstWrittenValues(String)

    var description: String {
        switch self {
        case .bothStoresAgree: "LogStore's and SQLite's results compared every round (counts and contents)"
        case .eachAgainstWrittenValues(let how): how
        }
    }
}

/// The rounds of one workload at one size.
struct SideBySide {
    let workload: Workload
    let size: Int
    let repetitions: Int
    let check: ResultCheck

    /// Runs the two cases `repetitions` times, alternating which goes first
    /// so drift over the run falls on both, and checks their answers.
    func run(logStore: () throws -> CaseRun, sqlite: () throws -> CaseRun) throws -> (logStore: [CaseRun], sqlite: [CaseRun]) {
        var logStoreRuns: [CaseRun] = [], sqliteRuns: [CaseRun] = []
        for round in 0..<repetitions {
            if round % 2 == 0 {
                logStoreRuns.append(try logStore())
                sqliteRuns.append(try sqlite())
            } else {
                sqliteRuns.append(try sqlite())
                logStoreRuns.append(try logStore())
            }
            if case .bothStoresAgree = check, logStoreRuns[round].digest != sqliteRuns[round].digest {
                throw BenchmarkError("""
                    \(workload.rawValue) at \(size.formatted()) records, round \(round + 1): LogStore and SQLite disagree \
                    (LogStore: \(logStoreRuns[round].digest); SQLite: \(sqliteRuns[round].digest))
                    """)
            }
        }
        return (logStoreRuns, sqliteRuns)
    }

    /// The report's row for `runs`.
    func row(_ runs: (logStore: [CaseRun], sqlite: [CaseRun]), limits: MachineLimits, recordBytes: Double) -> ScalingRow {
        row(workload: workload, logStore: runs.logStore, sqlite: runs.sqlite, limits: limits, recordBytes: recordBytes)
    }

    /// The row of `workload` (which may differ from this run's own, when
    /// one run measures two workloads).
    func row(workload: Workload, logStore: [CaseRun], sqlite: [CaseRun], limits: MachineLimits, recordBytes: Double) -> ScalingRow {
        let limit = workload.limit(limits, recordBytes: recordBytes)
        let logStoreFigures = StoreFigures(logStore, limit: limit.rate)
        let sqliteFigures = StoreFigures(sqlite, limit: limit.rate)
        return ScalingRow(
            workload: workload, size: size, unit: workload.unit, operation: workload.operation,
            logStore: logStoreFigures, sqlite: sqliteFigures, ratio: logStoreFigures.median / sqliteFigures.median,
            limit: limit.rate, limitBasis: limit.basis, repetitions: repetitions, check: check.description)
    }
}

extension CaseRun {
    /// Calls `body` (one operation doing `work`) until `minimum` has passed,
    /// at least once; the digest is the first call's, and every later call
    /// must return the same.
    static func repeated(work: Double, for minimum: Duration, _ body: () throws -> ResultDigest) throws -> CaseRun {
        let clock = ContinuousClock()
        let start = clock.now
        let first = try body()
        var calls = 1
        while clock.now - start < minimum {
            let digest = try body()
            guard digest == first else { throw BenchmarkError("a query returned \(digest) after \(first) on the same data") }
            calls += 1
        }
        return CaseRun(work: work * Double(calls), operations: Double(calls), seconds: (clock.now - start).seconds, digest: first)
    }

    /// One timed call of `body`, which does `work` in `operations` and
    /// returns what is checked afterwards, untimed, by `digest`.
    static func timed<Result>(work: Double, operations: Double = 1, _ body: () throws -> Result, digest: (Result) throws -> ResultDigest) throws -> CaseRun {
        var result: Result?
        let seconds = try Stopwatch.seconds { result = try body() }
        return CaseRun(work: work, operations: operations, seconds: seconds, digest: try digest(result!))
    }
}
