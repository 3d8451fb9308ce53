// What the scaling runs found: one row per workload and size, each store's
// median and spread, the ratio, and the fraction of the machine's limit.

/// One run of one case: the work done (in the workload's unit), the
/// operations it made, the seconds, and what it returned.
struct CaseRun: Sendable {
    var work: Double
    var operations: Double
    var seconds: Double
    var digest: ResultDigest
    /// Seconds until the store was quiescent (a compaction the work started
    /// had finished), when that is measured; SQLite's checkpoints run inside
    /// its commits, so its runs leave this nil.
    var quiescentSeconds: Double?
    /// Each operation's own seconds, where the workload timed them one by
    /// one (single saves); empty elsewhere.
    var latencies: [Double] = []
}

/// The nearest-rank percentiles of one store's operation latencies over
/// every round of a workload, in seconds: what a rate hides, the slow ones.
struct LatencyFigures: Encodable, Sendable {
    var count: Int
    var p50: Double
    var p99: Double
    var p999: Double
    var maximum: Double

    /// Nil when no run timed its operations one by one.
    init?(_ runs: [CaseRun]) {
        let percentiles = LatencyPercentiles(runs.flatMap(\.latencies))
        guard percentiles.count > 0 else { return nil }
        count = percentiles.count
        p50 = percentiles.at(0.5)
        p99 = percentiles.at(0.99)
        p999 = percentiles.at(0.999)
        maximum = percentiles.at(1)
    }
}

/// One store's figures for a workload at a size.
struct StoreFigures: Encodable, Sendable {
    /// Median throughput, in the workload's unit.
    var median: Double
    var minimum: Double
    var maximum: Double
    /// Median seconds per operation.
    var latency: Double
    /// Throughput ÷ the machine's limit for the workload.
    var fractionOfLimit: Double

    init(_ runs: [CaseRun], limit: Double, untilQuiescent: Bool = false) {
        let runs = untilQuiescent ? runs.map { run in CaseRun(work: run.work, operations: run.operations, seconds: run.quiescentSeconds ?? run.seconds, digest: run.digest) } : runs
        let rates = Rates(samples: runs.map { $0.work / $0.seconds })
        median = rates.median
        minimum = rates.minimum
        maximum = rates.maximum
        latency = Rates(samples: runs.map { $0.seconds / $0.operations }).median
        fractionOfLimit = median / limit
    }
}

/// A workload at one size on both stores.
struct ScalingRow: Encodable, Sendable {
    var workload: Workload
    var size: Int
    var unit: String
    var operation: String
    var logStore: StoreFigures
    var sqlite: StoreFigures
    /// LogStore's median throughput ÷ SQLite's.
    var ratio: Double
    var limit: Double
    var limitBasis: String
    var repetitions: Int
    /// How the results were checked: both stores' answers compared, or
    /// each checked against the values the harness wrote.
    var check: String
    /// The memory SQLite ran with for `sqlite` (its defaults, unless the
    /// workload says otherwise).
    var sqliteMemory = SQLiteMemory.defaults.label
    /// Each store's resident memory after the workload, measured in a child
    /// process of its own; nil for the workloads that write.
    var logStoreResident: ResidentMemory?
    var sqliteResident: ResidentMemory?
    /// The same workload on SQLite with more memory (a page cache or an mmap
    /// at least as large as the database, warmed), each against LogStore's
    /// same runs; empty for the workloads that write.
    var sqliteVariants: [SQLiteVariantFigures] = []
    /// For the workloads that save: the figures with LogStore's clock
    /// stopped once a compaction its saves started had finished (SQLite's
    /// are its own, its checkpoints running inside its commits); nil where
    /// nothing was left running.
    var quiescent: QuiescentFigures?
    /// For the single saves: every save's latency, over all rounds.
    var logStoreLatencies: LatencyFigures?
    var sqliteLatencies: LatencyFigures?
}

/// A row's figures with LogStore timed until quiescent.
struct QuiescentFigures: Encodable, Sendable {
    var logStore: StoreFigures
    var sqlite: StoreFigures
    var ratio: Double
}

/// SQLite's figures for a read workload with one memory budget.
struct SQLiteVariantFigures: Encodable, Sendable {
    /// The variant, with its budget, as the table shows it.
    var memory: String
    /// The variant's name without the budget, the same at every size (for charts).
    var kind: String
    var figures: StoreFigures
    /// LogStore's median throughput ÷ this variant's.
    var ratio: Double
    var resident: ResidentMemory?

    /// The range fetch's extra case: GRDB's Codable record instead of init(row:).
    static let codableKind = "SQLite defaults, Codable records"
}

/// The resident memory of a child process that opened one store, warmed
/// it as the workload does, and ran the workload once.
struct ResidentMemory: Codable, Sendable {
    /// VmRSS after the workload.
    var total: Int
    /// VmRSS after the workload minus VmRSS before the store was opened
    /// (the process had its inputs by then): the store's own memory.
    var added: Int
}

/// Memory and file size of each store holding `size` people.
struct MemoryRow: Encodable, Sendable {
    var size: Int
    /// Peak resident bytes of a process inserting `size` people in one save,
    /// beyond what it held before (the input values).
    var logStorePeakInsert: Int
    var sqlitePeakInsert: Int
    /// Of that insert, the peak resident bytes while its save ran beyond
    /// what the process held just before it (the objects in the context
    /// included): what saving N objects needs on top of them; nil where the
    /// peak could not be reset (/proc/self/clear_refs).
    var logStoreSavePeak: Int?
    /// Peak resident bytes of a process importing `size` people with a
    /// `BatchInsertRequest` (values, no objects) under the default automatic
    /// compaction, then compacting, beyond what it held before (the input
    /// values); and the seconds that took. Beside `sqlitePeakInsert`.
    var logStorePeakBatchImport: Int
    var logStoreBatchImportSeconds: Double
    /// Resident bytes a new process gains by opening the store and running
    /// its first query, per record.
    var logStoreResidentPerRecord: Double
    var sqliteResidentPerRecord: Double
    /// File bytes per record.
    var logStoreFilePerRecord: Double
    var sqliteFilePerRecord: Double
    /// Raw bytes of LogStore's snapshot index per record: in format 4 one
    /// frame of at most 256 MiB, so it said where compaction stopped; in
    /// format 5 (what compactions write) its index blocks, catalog and root,
    /// with no such limit. The name is kept so that results compare.
    var logStoreIndexFramePerRecord: Double
}

/// A size the run left out or could not finish, and why.
struct SkippedSize: Encodable, Sendable {
    var size: Int
    var reason: String
}

/// Everything the scaling runs found.
struct ScalingReport: Encodable, Sendable {
    var sizes: [Int] = []
    var limits: MachineLimits?
    var recordBytes: Double = 0
    var rows: [ScalingRow] = []
    var memory: [MemoryRow] = []
    var skipped: [SkippedSize] = []
    /// Sizes that failed part way (an error, or the stores disagreeing);
    /// the run goes on with the next size and exits with status 1.
    var failed: [SkippedSize] = []
    var notes: [String] = []
}
