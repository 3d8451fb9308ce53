// App writes 2: how long single durable saves take, p50 to max, LogStore with
// and without a compaction running beside SQLite with and without its checkpoints.

import Foundation
import LogStore

/// Single durable saves, each timed on its own: an app's user waits for the
/// slow ones, which a rate hides. Save `i` inserts a new person when `i` is
/// even and sets the age of a person picked at random when it is odd.
///
/// The cases take turns, a block of saves each, every case on its own
/// store kept open throughout: a disk whose fsyncs slow down when a
/// neighbour writes then slows every case alike.
enum SaveLatency {
    /// What every case saves, and when it stops.
    private struct Workload {
        let saves: Int
        let block: Int
        let timeBox: Duration
        let keys: [Int64]
        let templates: [PersonValues]

        /// Save `index`: an insert when even, an update when odd.
        func save(_ index: Int, insert: (PersonValues) throws -> Void, update: (Int) throws -> Void) throws {
            if index % 2 == 0 {
                try insert(AppWritesData.newPerson(index / 2, from: templates))
            } else {
                try update(index / 2)
            }
        }
    }

    /// One case, open over all the blocks.
    private struct Case {
        let label: String
        let save: (Int) throws -> Void
        /// Runs a block of saves; the compacting case has its compactions run meanwhile.
        var around: (() throws -> Void) throws -> Void = { try $0() }
        /// Checks, untimed, what the saves so far left in the store.
        var check: (_ saves: Int) throws -> Void = { _ in }
        let close: () -> Void
    }

    static func run(_ data: AppWritesData, into report: inout GroupReport) throws {
        let context = data.context
        let saves = context.scaled(full: 10_000, quick: 300)
        let workload = Workload(
            saves: saves, block: context.scaled(full: 500, quick: 50), timeBox: context.scaled(full: .seconds(240), quick: .seconds(10)),
            keys: data.randomKeys(min(data.size, saves / 2), seed: 23_002), templates: PersonValues.make(1_000, seed: 23_003))
        let size = data.size.formatted()
        var compactions: [CompactionReport] = []
        var cases: [Case] = []
        defer { for opened in cases { opened.close() } }
        cases.append(try machineCase(data))
        cases.append(try logStoreCase("LogStore .fsyncEveryCommit, manual compaction, none running, \(size) people", data, workload, compactions: nil))
        cases.append(try sqliteCase("SQLite synchronous=FULL, automatic checkpoints (wal_autocheckpoint=1000)", data, workload, automaticCheckpoints: true))
        cases.append(try logStoreCase("LogStore .fsyncEveryCommit, compactions running back to back", data, workload, compactions: { compactions += $0 }))
        cases.append(try sqliteCase("SQLite synchronous=FULL, wal_autocheckpoint=0", data, workload, automaticCheckpoints: false))
        context.log("app-writes: latency of up to \(saves.formatted()) single durable saves, \(cases.count) cases taking turns by \(workload.block)")

        let latencies = try takingTurns(cases, workload)
        let done = latencies[0].count
        for opened in cases { try opened.check(done) }
        let figures = zip(cases, latencies).map { opened, measured in add(opened.label, measured, to: &report) }
        for (index, (name, _)) in LatencyPercentiles.reported.enumerated() {
            report.compare("2. \(name): LogStore, compaction running ÷ SQLite, automatic checkpoints", figures[3][index], over: figures[2][index])
            report.compare("2. \(name): LogStore, no compaction ÷ SQLite, wal_autocheckpoint=0", figures[1][index], over: figures[4][index])
        }
        let longestPause = compactions.map { $0.pauseDuration.seconds }.max() ?? 0
        let mean = compactions.map { $0.duration.seconds }.reduce(0, +) / Double(max(compactions.count, 1))
        report.fact("2. saves per case", "\(done.formatted()) (up to \(saves.formatted()), or as many as \(workload.timeBox) allows all cases together)")
        report.fact("2. compactions during the compacting case", "\(compactions.count) finished, \(formatted(mean)) s each on average, longest pause of saves \(formatted(longestPause * 1e3)) ms (CompactionReport.pauseDuration)")
        report.note("2: latency is the time `save` (LogStore) or `writer.write` (SQLite) took for one save; the cases take turns, \(workload.block) saves at a time, each on fresh copies of both files kept open throughout; percentiles are nearest-rank over every save of a case; afterwards each side's count, updated people and inserted people are read back and compared with the values written. The machine's case appends 100 bytes and fdatasyncs them, timed the same way: what the disk gave in the same minutes")
        report.note("2: the ratios are of latencies: below 1, LogStore's saves took less time")
        report.note("2: during the compacting case's turns a thread calls `store.compact()` again as soon as the last one returns (a compaction still under way when its turn ends is waited for, untimed), so its saves have a compaction under way; in the SQLite case with automatic checkpoints, the commit that takes the WAL past 1000 pages runs the checkpoint inside its own save, so both are counted where they land. The cases without (manual compaction, wal_autocheckpoint=0 with SQLite checkpointed afterwards, untimed) show the saves alone")
    }

    /// Runs the cases' saves a block at a time, each case in turn, until
    /// every save is done or the time box is over; returns each case's latencies.
    private static func takingTurns(_ cases: [Case], _ workload: Workload) throws -> [[Double]] {
        let clock = ContinuousClock()
        let deadline = clock.now + workload.timeBox
        var latencies = Array(repeating: [Double](), count: cases.count)
        var done = 0
        while done < workload.saves, clock.now < deadline {
            let block = done..<min(done + workload.block, workload.saves)
            for (index, turn) in cases.enumerated() {
                try turn.around {
                    for save in block {
                        let start = clock.now
                        try turn.save(save)
                        latencies[index].append((clock.now - start).seconds)
                    }
                }
            }
            done = block.upperBound
        }
        return latencies
    }

    /// Adds `latencies`' percentiles, in milliseconds, and returns their figures.
    private static func add(_ label: String, _ latencies: [Double], to report: inout GroupReport) -> [Figure] {
        let percentiles = LatencyPercentiles(latencies)
        return LatencyPercentiles.reported.map { name, fraction in
            report.add("2. \(label): \(name)", value: percentiles.at(fraction) * 1e3, unit: "ms")
        }
    }

    /// `compactions`, when given, receives the reports of the compactions run during each turn.
    private static func logStoreCase(_ label: String, _ data: AppWritesData, _ workload: Workload,
                                     compactions: ((([CompactionReport]) -> Void))?) throws -> Case {
        let store = try data.openStoreCopy(durability: .fsyncEveryCommit)
        let ids = AppWritesData.ids(workload.keys, in: store)
        var opened = Case(label: label, save: { index in
            try workload.save(index, insert: { try AppWritesData.saveNew($0, in: store) },
                              update: { try AppWritesData.saveAge(AppWritesData.newAge($0), of: ids[$0], in: store) })
        }, close: { data.remove(store) })
        if let compactions {
            opened.around = { block in
                let running = BackgroundCompactions(store)
                do { try block() } catch {
                    _ = try? running.stop()
                    throw error
                }
                compactions(try running.stop())
            }
        }
        opened.check = { saves in
            let updated = try StoredPerson.read(Array(workload.keys.prefix(saves / 2)), from: store)
            try check(saves, data, workload, count: try store.newContext().count("Person"),
                      updated: updated, inserted: try StoredPerson.inserted(in: store), engine: label)
        }
        return opened
    }

    private static func sqliteCase(_ label: String, _ data: AppWritesData, _ workload: Workload, automaticCheckpoints: Bool) throws -> Case {
        let database = try data.openSQLiteCopy(automaticCheckpoints: automaticCheckpoints)
        var opened = Case(label: label, save: { index in
            try workload.save(index, insert: { try AppWritesData.saveNew($0, in: database) },
                              update: { try AppWritesData.saveAge(AppWritesData.newAge($0), of: workload.keys[$0], in: database) })
        }, close: { database.remove() })
        opened.check = { saves in
            if !automaticCheckpoints { _ = try AppWritesData.checkpoint(database) }
            let updated = try StoredPerson.read(Array(workload.keys.prefix(saves / 2)), from: database)
            try check(saves, data, workload, count: try database.writer.read { db in try GRDBPerson.fetchCount(db) },
                      updated: updated, inserted: try StoredPerson.inserted(in: database), engine: label)
        }
        return opened
    }

    /// The machine's own durable write, timed as the saves are.
    private static func machineCase(_ data: AppWritesData) throws -> Case {
        let file = try PlainFile(path: data.context.scratch.freshPath("latency.plain"))
        let record = [UInt8](repeating: 0x61, count: 100)
        return Case(label: "machine: pwrite of 100 bytes + fdatasync", save: { _ in
            try record.withUnsafeBytes { try file.append($0) }
            try file.synchronize()
        }, close: { data.context.scratch.remove(file.path) })
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
