// App writes 2: how long single durable saves take, p50 to max, LogStore with
// and without a compaction running beside SQLite with and without its checkpoints.

import Foundation
import LogStore

/// Single durable saves, each timed on its own: an app's user waits for the
/// slow ones, which a rate hides. Save `i` inserts a new person when `i` is
/// even and sets the age of a person picked at random when it is odd.
enum SaveLatency {
    /// What every case saves, and when it stops.
    private struct Workload {
        let saves: Int
        let timeBox: Duration
        let keys: [Int64]
        let templates: [PersonValues]
    }

    static func run(_ data: AppWritesData, into report: inout GroupReport) throws {
        let context = data.context
        let saves = context.scaled(full: 10_000, quick: 300)
        let workload = Workload(
            saves: saves, timeBox: context.scaled(full: .seconds(60), quick: .seconds(5)),
            keys: data.randomKeys(min(data.size, saves / 2), seed: 23_002), templates: PersonValues.make(1_000, seed: 23_003))
        context.log("app-writes: latency of \(saves.formatted()) single durable saves, 4 cases between two of the machine's")
        let machineBefore = try machineRun(data, workload)
        let quiet = try logStoreRun(data, workload, compacting: false)
        let checkpointing = try sqliteRun(data, workload, automaticCheckpoints: true)
        let compacting = try logStoreRun(data, workload, compacting: true)
        let uncheckpointed = try sqliteRun(data, workload, automaticCheckpoints: false)
        let machineAfter = try machineRun(data, workload)

        let size = data.size.formatted()
        let quietFigures = add("LogStore .fsyncEveryCommit, manual compaction, none running, \(size) people", quiet.latencies, to: &report)
        let compactingFigures = add("LogStore .fsyncEveryCommit, compactions running back to back", compacting.latencies, to: &report)
        let checkpointingFigures = add("SQLite synchronous=FULL, automatic checkpoints (wal_autocheckpoint=1000)", checkpointing, to: &report)
        let uncheckpointedFigures = add("SQLite synchronous=FULL, wal_autocheckpoint=0", uncheckpointed, to: &report)
        add("machine: pwrite of 100 bytes + fdatasync, before the cases", machineBefore, to: &report)
        add("machine: the same, after the cases", machineAfter, to: &report)
        for (index, (name, _)) in LatencyPercentiles.reported.enumerated() {
            report.compare("2. \(name): LogStore, compaction running ÷ SQLite, automatic checkpoints", compactingFigures[index], over: checkpointingFigures[index])
            report.compare("2. \(name): LogStore, no compaction ÷ SQLite, wal_autocheckpoint=0", quietFigures[index], over: uncheckpointedFigures[index])
        }
        let compactions = compacting.compactions
        let longestPause = compactions.map { $0.pauseDuration.seconds }.max() ?? 0
        let mean = compactions.map { $0.duration.seconds }.reduce(0, +) / Double(max(compactions.count, 1))
        report.fact("2. compactions during the compacting run", "\(compactions.count) finished, \(formatted(mean)) s each on average, longest pause of saves \(formatted(longestPause * 1e3)) ms (CompactionReport.pauseDuration)")
        report.note("2: latency is the time `save` (LogStore) or `writer.write` (SQLite) took for one save, each case one run of up to \(saves.formatted()) saves (at most \(workload.timeBox) of them), fresh copies of both files; percentiles are nearest-rank over every save of the run; afterwards each side's count, updated people and inserted people are read back and compared with the values written")
        report.note("2: the ratios are of latencies: below 1, LogStore's saves took less time")
        report.note("2: in the compacting run a thread calls `store.compact()` again as soon as the last one returns, so every save has a compaction under way; in the SQLite run with automatic checkpoints, the commit that takes the WAL past 1000 pages runs the checkpoint inside its own save, so both are counted where they land. The runs without (manual compaction, wal_autocheckpoint=0, SQLite checkpointed afterwards, untimed) show the saves alone")
    }

    /// Adds `latencies`' percentiles, in milliseconds, and returns their figures.
    @discardableResult
    private static func add(_ label: String, _ latencies: [Double], to report: inout GroupReport) -> [Figure] {
        let percentiles = LatencyPercentiles(latencies)
        let figures = LatencyPercentiles.reported.map { name, fraction in
            report.add("2. \(label): \(name)", value: percentiles.at(fraction) * 1e3, unit: "ms")
        }
        report.fact("2. \(label)", "\(percentiles.count.formatted()) saves timed")
        return figures
    }

    private static func logStoreRun(_ data: AppWritesData, _ workload: Workload, compacting: Bool) throws -> (latencies: [Double], compactions: [CompactionReport]) {
        let store = try data.openStoreCopy(durability: .fsyncEveryCommit)
        defer { data.remove(store) }
        let ids = AppWritesData.ids(workload.keys, in: store)
        let compactions = compacting ? BackgroundCompactions(store) : nil
        let latencies = try timedSaves(
            workload, insert: { try AppWritesData.saveNew($0, in: store) },
            update: { try AppWritesData.saveAge(AppWritesData.newAge($0), of: ids[$0], in: store) })
        let reports = try compactions?.stop() ?? []
        let updated = try StoredPerson.read(Array(workload.keys.prefix(latencies.count / 2)), from: store)
        try check(latencies.count, data, workload, count: try store.newContext().count("Person"),
                  updated: updated, inserted: try StoredPerson.inserted(in: store), engine: "LogStore")
        return (latencies, reports)
    }

    private static func sqliteRun(_ data: AppWritesData, _ workload: Workload, automaticCheckpoints: Bool) throws -> [Double] {
        let database = try data.openSQLiteCopy(automaticCheckpoints: automaticCheckpoints)
        defer { database.remove() }
        let latencies = try timedSaves(
            workload, insert: { try AppWritesData.saveNew($0, in: database) },
            update: { try AppWritesData.saveAge(AppWritesData.newAge($0), of: workload.keys[$0], in: database) })
        if !automaticCheckpoints { _ = try AppWritesData.checkpoint(database) }
        let updated = try StoredPerson.read(Array(workload.keys.prefix(latencies.count / 2)), from: database)
        try check(latencies.count, data, workload, count: try database.writer.read { db in try GRDBPerson.fetchCount(db) },
                  updated: updated, inserted: try StoredPerson.inserted(in: database), engine: "SQLite")
        return latencies
    }

    /// The machine's own durable write, timed as the saves are: what the
    /// disk gave a 100-byte append + fdatasync in the same minutes.
    private static func machineRun(_ data: AppWritesData, _ workload: Workload) throws -> [Double] {
        let file = try PlainFile(path: data.context.scratch.freshPath("latency.plain"))
        defer { data.context.scratch.remove(file.path) }
        let record = [UInt8](repeating: 0x61, count: 100)
        return try AppWritesData.timeBoxed(workload.saves, workload.timeBox) { _ in
            try record.withUnsafeBytes { try file.append($0) }
            try file.synchronize()
        }
    }

    /// Each save's seconds, until all are done or the time box is over.
    private static func timedSaves(_ workload: Workload, insert: (PersonValues) throws -> Void, update: (Int) throws -> Void) throws -> [Double] {
        try AppWritesData.timeBoxed(workload.saves, workload.timeBox) { index in
            if index % 2 == 0 {
                try insert(AppWritesData.newPerson(index / 2, from: workload.templates))
            } else {
                try update(index / 2)
            }
        }
    }

    /// Throws unless the engine holds what `saves` saves wrote.
    private static func check(_ saves: Int, _ data: AppWritesData, _ workload: Workload, count: Int,
                              updated: [StoredPerson], inserted: [StoredPerson], engine: String) throws {
        let updates = saves / 2, inserts = saves - updates
        guard count == data.size + inserts else {
            throw BenchmarkError("\(engine) holds \(count) people after \(inserts) inserts into \(data.size), not \(data.size + inserts)")
        }
        try StoredPerson.requireEqual(updated, data.updated(Array(workload.keys.prefix(updates))), "\(engine), the people updated by \(saves) saves")
        try StoredPerson.requireEqual(inserted, AppWritesData.inserted(inserts, from: workload.templates), "\(engine), the people inserted by \(saves) saves")
    }
}

/// Compactions of a store back to back on a thread of their own until
/// stopped, so that saves made meanwhile always have one under way.
private final class BackgroundCompactions: @unchecked Sendable {
    private let lock = NSLock()
    private var stopping = false
    private var reports: [CompactionReport] = []
    private var failure: LogStoreError?
    private let finished = DispatchSemaphore(value: 0)

    init(_ store: Store) {
        let started = DispatchSemaphore(value: 0)
        Thread { [self] in
            started.signal()
            while !lock.withLock({ stopping }) {
                do throws(LogStoreError) {
                    let report = try store.compact()
                    lock.withLock { reports.append(report) }
                } catch {
                    lock.withLock { (failure, stopping) = (error, true) }
                }
            }
            finished.signal()
        }.start()
        started.wait()
    }

    /// Waits for the compaction under way, then returns every compaction's report.
    func stop() throws -> [CompactionReport] {
        lock.withLock { stopping = true }
        finished.wait()
        return try lock.withLock {
            if let failure { throw failure }
            return reports
        }
    }
}
