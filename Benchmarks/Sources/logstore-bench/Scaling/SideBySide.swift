// Running a workload on both stores: alternating, repeated, answers compared.

import LogStore

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
        try withoutActuallyEscaping(sqlite) { sqlite in
            let runs = try run(logStore: logStore, sqlite: [(SQLiteMemory.defaults, sqlite)])
            return (runs.logStore, runs.sqlite[0].runs)
        }
    }

    /// Runs LogStore's case and SQLite's, one per memory budget,
    /// `repetitions` times, each round starting one case later so drift
    /// falls on all, and checks every SQLite answer against LogStore's.
    func run(logStore: () throws -> CaseRun, sqlite: [(memory: SQLiteMemory, run: () throws -> CaseRun)]) throws -> VariantRuns {
        var runs = VariantRuns(logStore: [], sqlite: sqlite.map { ($0.memory, []) })
        let cases = sqlite.count + 1
        for round in 0..<repetitions {
            for step in 0..<cases {
                let index = (round + step) % cases
                if index == 0 { runs.logStore.append(try logStore()) } else { runs.sqlite[index - 1].runs.append(try sqlite[index - 1].run()) }
            }
            guard case .bothStoresAgree = check else { continue }
            for variant in runs.sqlite where variant.runs[round].digest != runs.logStore[round].digest {
                throw BenchmarkError("""
                    \(workload.rawValue) at \(size.formatted()) records, round \(round + 1): LogStore and SQLite (\(variant.memory.label)) disagree \
                    (LogStore: \(runs.logStore[round].digest); SQLite: \(variant.runs[round].digest))
                    """)
            }
        }
        return runs
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
        var row = ScalingRow(
            workload: workload, size: size, unit: workload.unit, operation: workload.operation,
            logStore: logStoreFigures, sqlite: sqliteFigures, ratio: logStoreFigures.median / sqliteFigures.median,
            limit: limit.rate, limitBasis: limit.basis, repetitions: repetitions, check: check.description)
        row.logStoreLatencies = LatencyFigures(logStore)
        row.sqliteLatencies = LatencyFigures(sqlite)
        if logStore.contains(where: { $0.quiescentSeconds != nil }) {
            let quiescent = StoreFigures(logStore, limit: limit.rate, untilQuiescent: true)
            row.quiescent = QuiescentFigures(logStore: quiescent, sqlite: sqliteFigures, ratio: quiescent.median / sqliteFigures.median)
        }
        return row
    }

    /// The row of a read workload: SQLite's first budget as `sqlite`, the
    /// others as variants, and each case's resident memory (`resident`
    /// maps a budget to SQLite's; nil for LogStore's).
    func row(_ runs: VariantRuns, limits: MachineLimits, recordBytes: Double, resident: (SQLiteMemory?) throws -> ResidentMemory?) rethrows -> ScalingRow {
        let first = runs.sqlite[0]
        var row = row(workload: workload, logStore: runs.logStore, sqlite: first.runs, limits: limits, recordBytes: recordBytes)
        row.sqliteMemory = first.memory.label
        row.logStoreResident = try resident(nil)
        row.sqliteResident = try resident(first.memory)
        let limit = workload.limit(limits, recordBytes: recordBytes).rate
        for variant in runs.sqlite.dropFirst() {
            let figures = StoreFigures(variant.runs, limit: limit)
            row.sqliteVariants.append(SQLiteVariantFigures(
                memory: variant.memory.label, kind: variant.memory.kind, figures: figures,
                ratio: row.logStore.median / figures.median, resident: try resident(variant.memory)))
        }
        return row
    }
}

/// LogStore's runs and SQLite's, one list per memory budget.
struct VariantRuns {
    var logStore: [CaseRun]
    var sqlite: [(memory: SQLiteMemory, runs: [CaseRun])]
}

extension CaseRun {
    /// Calls `body` (one operation doing `work`) until `minimum` has passed
    /// on the clock, at least once. Only `body` is timed: what it returns is
    /// freed, and digested, off the clock; the first and the last call's
    /// digests must be equal.
    static func repeated<Result>(work: Double, for minimum: Duration, _ body: () throws -> Result, digest: (Result) throws -> ResultDigest) throws -> CaseRun {
        var seconds = 0.0, calls = 0
        var first: ResultDigest?
        var last: Result?
        while calls == 0 || seconds < minimum.seconds {
            last = nil
            seconds += try Stopwatch.seconds { last = try body() }
            calls += 1
            if first == nil { first = try digest(last!) }
        }
        let final = try digest(last!)
        guard final == first else { throw BenchmarkError("a query returned \(final) after \(first!) on the same data") }
        return CaseRun(work: work * Double(calls), operations: Double(calls), seconds: seconds, digest: final)
    }

    /// One timed call of `body` on `store`, which does `work` in
    /// `operations`; a second clock goes on until a compaction the work
    /// started has finished (`quiescentSeconds`, where one was under way). What `body` returns is checked
    /// afterwards, untimed, by `digest`.
    static func timedUntilQuiescent<Result>(_ store: Store, work: Double, operations: Double = 1, _ body: () throws -> Result, digest: (Result) throws -> ResultDigest) throws -> CaseRun {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        let returned = clock.now
        // Nil when nothing was left running: the two clocks are the same.
        var quiescent: Double?
        if store.isCompactionDue {
            try store.waitUntilQuiescent()
            quiescent = (clock.now - start).seconds
        }
        return CaseRun(work: work, operations: operations, seconds: (returned - start).seconds, digest: try digest(result),
                       quiescentSeconds: quiescent)
    }

    /// One timed call of `body`, which does `work` in `operations` and
    /// returns what is checked afterwards, untimed, by `digest`.
    static func timed<Result>(work: Double, operations: Double = 1, _ body: () throws -> Result, digest: (Result) throws -> ResultDigest) throws -> CaseRun {
        var result: Result?
        let seconds = try Stopwatch.seconds { result = try body() }
        return CaseRun(work: work, operations: operations, seconds: seconds, digest: try digest(result!))
    }
}
