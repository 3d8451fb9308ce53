// The app-writes group: the write workloads an app database is judged on,
// LogStore beside SQLite (GRDB) on the same people with the same durability.

import Foundation

/// Small durable updates, save latency with and without maintenance
/// running, and concurrent writers, on one data set of people (10^6 in a
/// full run) that each run copies afresh.
enum AppWrites: BenchmarkGroup {
    static let name = "app-writes"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        let data = try AppWritesData(size: context.scaled(full: 1_000_000, quick: 10_000), context)
        defer { data.remove() }
        var report = GroupReport(name: name, title: "App writes: small durable updates, save latency, concurrent writers; LogStore beside SQLite (GRDB 7.10.0) at \(data.size.formatted()) people")
        report.fact("SQLite", try data.sqliteSettings())
        report.fact("LogStore", "durability as each figure says; compaction .manual except where a compaction is the subject")
        try SmallUpdates.run(data, into: &report)
        try SaveLatency.run(data, into: &report)
        try ConcurrentWriters.run(data, into: &report)
        report.note("both engines start every run from copies of the same \(data.size.formatted()) people (LogStore's file compacted into a snapshot, SQLite's checkpointed), age indexed on both sides, the copies flushed to disk before any clock starts; SQLite's page cache is set larger than its file, as LogStore holds its records in memory")
        report.note("where maintenance is not the subject, LogStore runs with manual compaction and SQLite with wal_autocheckpoint=0, and SQLite's checkpoint runs after the clock stops; its \"quiescent\" figure counts that checkpoint too")
        return report
    }
}
