// What the scaling runs found: one row per workload and size, each store's
// median and spread, the ratio, and the fraction of the machine's limit.

/// One run of one case: the work done (in the workload's unit), the
/// operations it made, the seconds, and what it returned.
struct CaseRun: Sendable {
    var work: Double
    var operations: Double
    var seconds: Double
    var digest: ResultDigest
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

    init(_ runs: [CaseRun], limit: Double) {
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
}

/// Memory and file size of each store holding `size` people.
struct MemoryRow: Encodable, Sendable {
    var size: Int
    /// Peak resident bytes of a process inserting `size` people in one save,
    /// beyond what it held before (the input values).
    var logStorePeakInsert: Int
    var sqlitePeakInsert: Int
    /// Resident bytes a new process gains by opening the store and running
    /// its first query, per record.
    var logStoreResidentPerRecord: Double
    var sqliteResidentPerRecord: Double
    /// File bytes per record.
    var logStoreFilePerRecord: Double
    var sqliteFilePerRecord: Double
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
