// Benchmark 2: durable commits per second: .fsyncEveryCommit against
// pwrite + fdatasync and SQLite, and .groupCommit with 8 committer threads.

import Foundation
import LogStore

/// Durable commits of small transactions, beside the cheapest durable write
/// there is (`pwrite` + `fdatasync` of the same frame sizes) and SQLite.
enum CommitThroughput: BenchmarkGroup {
    static let name = "commit"
    static let payloadSize = 200
    static let committers = 8

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "2. Durable commits per second, against pwrite + fdatasync and SQLite")
        let payloads = context.corpus.slices(1024, of: payloadSize, seed: 2)
        let workload = Workload(
            duration: context.scaled(full: .seconds(2), quick: .milliseconds(300)),
            payloads: payloads, frameSizes: try frameSizes(of: payloads, context), context: context)
        let sqliteSettings = try SQLiteCommitter.settings(at: context.scratch.freshPath("settings.sqlite"))
        let defaultWindow = Self.window(of: .groupCommit)
        let everyCommit = SyncCount(".fsyncEveryCommit"), group = SyncCount(".groupCommit (default, \(defaultWindow) window)")
        let groupNoWindow = SyncCount(".groupCommit(window: .zero)")

        context.log("commit: 6 cases of \(workload.duration) each, \(context.repetitions) rounds")
        let rates = try measureInRounds(repetitions: context.repetitions, [
            journalCase(.fsyncEveryCommit, threads: 1, workload, counting: everyCommit),
            plainCase(workload),
            sqliteCase(workload),
            journalCase(.groupCommit, threads: committers, workload, counting: group),
            journalCase(.groupCommit(window: .zero), threads: committers, workload, counting: groupNoWindow),
            sqliteCase(workload, automaticCheckpoints: true),
        ])

        let single = report.add("LogStore \(everyCommit.label), 1 thread", rates[0], unit: "commits/s")
        let plain = report.add("plain pwrite + fdatasync, 1 thread", rates[1], unit: "commits/s")
        let sqlite = report.add("SQLite (GRDB), WAL, synchronous=FULL, 1 thread", rates[2], unit: "commits/s")
        let grouped = report.add("LogStore \(group.label), \(committers) threads", rates[3], unit: "commits/s")
        let groupedNoWindow = report.add("LogStore \(groupNoWindow.label), \(committers) threads", rates[4], unit: "commits/s")
        report.compare("\(everyCommit.label) ÷ pwrite + fdatasync", single, over: plain, target: .atLeast(0.8))
        report.compare("\(group.label) ÷ \(everyCommit.label)", grouped, over: single, target: .atLeast(3))
        report.compare("\(groupNoWindow.label) ÷ \(everyCommit.label)", groupedNoWindow, over: single)
        let sqliteCheckpointing = report.add("SQLite (GRDB), WAL, synchronous=FULL, automatic checkpoints, 1 thread", rates[5], unit: "commits/s")
        report.compare("\(everyCommit.label) ÷ SQLite", single, over: sqlite)
        report.compare("\(everyCommit.label) ÷ SQLite, automatic checkpoints", single, over: sqliteCheckpointing)
        for count in [everyCommit, group, groupNoWindow] {
            report.add("\(count.label): commits per fdatasync", value: Double(count.commits) / Double(max(count.syncs, 1)), unit: "commits/sync")
            report.fact("\(count.label), all runs", "\(count.commits) commits, \(count.syncs) fdatasyncs (journal.statistics)")
        }
        report.fact("SQLite", sqliteSettings)
        let sizes = workload.frameSizes
        report.fact("frame sizes", "\(sizes.min() ?? 0) to \(sizes.max() ?? 0) bytes, mean \(sizes.reduce(0, +) / max(sizes.count, 1))")
        report.note("a transaction is one insert of one .data field of \(payloadSize) bytes of text-like records; SQLite inserts the same bytes as a BLOB, one row per write transaction; the plain baseline writes frames of the journal's own sizes (read from a journal of the same payloads) and fdatasyncs each")
        report.note("after each run, untimed, the journal's transactions and SQLite's rows are read back and each payload compared with the one committed")
        report.note("each case commits in a loop for \(workload.duration) per run; the \(committers) group-commit threads share one journal")
        return report
    }

    /// What every case of a run commits, and for how long.
    private struct Workload {
        let duration: Duration
        let payloads: [Data]
        let frameSizes: [Int]
        let context: BenchmarkContext
    }

    /// The commits and fdatasyncs of one journal case over all its runs.
    private final class SyncCount {
        let label: String
        var commits = 0
        var syncs = 0

        init(_ label: String) { self.label = label }
    }

    private static func journalCase(_ durability: Durability, threads: Int, _ workload: Workload, counting count: SyncCount) -> () throws -> Sample {
        {
            let journal = try workload.context.scratch.freshJournal("commit.logstore", durability: durability)
            defer {
                journal.close()
                workload.context.scratch.remove(journal.path)
            }
            let records = DataRecords(journal), payloads = workload.payloads
            let payload: @Sendable (_ thread: Int, _ iteration: Int) -> Data = { thread, iteration in payloads[(iteration * threads + thread) % payloads.count] }
            let sample = try CommitterThreads.run(count: threads, for: workload.duration) { thread, iteration throws(LogStoreError) in
                try records.append(key: UInt64(thread) << 32 | UInt64(iteration), payload(thread, iteration))
            }
            count.commits += journal.statistics.framesWritten
            count.syncs += journal.statistics.syncs
            // Untimed: every committed transaction read back, its payload the one appended under its key.
            var committed = 0
            for transaction in try journal.transactions() {
                guard case .insert(let record, let fields)? = transaction.changes.first, transaction.changes.count == 1,
                      case .data(let body)? = fields.first?.value,
                      body == payload(Int(record.key >> 32), Int(record.key & 0xFFFF_FFFF))
                else { throw BenchmarkError("the journal's transaction \(transaction.sequence) is not the insert that was committed") }
                committed += 1
            }
            guard committed == Int(sample.work) else { throw BenchmarkError("the journal holds \(committed) transactions after \(Int(sample.work)) commits") }
            return sample
        }
    }

    private static func plainCase(_ workload: Workload) -> () throws -> Sample {
        {
            let file = try PlainFile(path: workload.context.scratch.freshPath("commit.plain"))
            defer { workload.context.scratch.remove(file.path) }
            let sizes = workload.frameSizes
            let frame = [UInt8](repeating: 0x5A, count: sizes.max() ?? 0)
            var commits = 0
            return try frame.withUnsafeBytes { bytes in
                try Stopwatch.repeatFor(workload.duration) {
                    try file.append(UnsafeRawBufferPointer(rebasing: bytes[0..<sizes[commits % sizes.count]]))
                    try file.synchronize()
                    commits += 1
                }
            }
        }
    }

    private static func sqliteCase(_ workload: Workload, automaticCheckpoints: Bool = false) -> () throws -> Sample {
        {
            let database = try SQLiteCommitter(path: workload.context.scratch.freshPath("commit.sqlite"), automaticCheckpoints: automaticCheckpoints)
            defer { try? database.remove() }
            var commits = 0
            let sample = try Stopwatch.repeatFor(workload.duration) {
                try database.insert(workload.payloads[commits % workload.payloads.count])
                commits += 1
            }
            // Untimed: every row read back, its body the one inserted.
            let bodies = try database.bodies()
            guard bodies.count == commits, bodies.enumerated().allSatisfy({ $0.element == workload.payloads[$0.offset % workload.payloads.count] }) else {
                throw BenchmarkError("SQLite holds \(bodies.count) rows after \(commits) commits, or other bodies than were inserted")
            }
            return sample
        }
    }

    /// The sizes of the frames the journal writes for `payloads`, read from a
    /// journal file made of them.
    private static func frameSizes(of payloads: [Data], _ context: BenchmarkContext) throws -> [Int] {
        let journal = try context.scratch.freshJournal("frame-sizes.logstore", durability: .deferredToOS)
        defer { context.scratch.remove(journal.path) }
        let records = DataRecords(journal)
        for (index, payload) in payloads.enumerated() { try records.append(key: UInt64(index + 1), payload) }
        journal.close()
        return try StoredFrame.read(path: journal.path).map(\.size)
    }

    /// "1 ms": the gathering window of a group-commit mode, for labels.
    private static func window(of durability: Durability) -> String {
        guard case .groupCommit(let window) = durability else { return "no" }
        return String(format: "%g ms", window.seconds * 1e3)
    }
}
