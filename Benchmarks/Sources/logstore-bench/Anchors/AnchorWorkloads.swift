// Benchmark group "anchors": workloads other projects published figures for
// (GRDB's performance tests, the RealmVsSwiftData comparison, Lighter's
// Northwind fetch), run here on LogStore and on GRDB side by side, with the
// published figures beside them, labelled as measured elsewhere.

import Foundation
import GRDB
import LogStore

enum AnchorWorkloads: BenchmarkGroup {
    static let name = "anchors"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "Anchors: published workloads of GRDB, RealmVsSwiftData and Lighter, LogStore beside GRDB 7.10.0 on SQLite (WAL)")
        try IntegerRows.run(context, into: &report)
        try SimpleUsers.run(context, into: &report)
        try NorthwindOrders.run(context, into: &report)
        report.note("settings on both sides: writes durable at commit (LogStore .fsyncEveryCommit with compaction .manual; SQLite WAL, synchronous=FULL, wal_autocheckpoint=0, so neither engine's maintenance runs inside a clock); statements cached; the same indexes (the key or rowid, and what each workload names); dates as REAL seconds since the reference date in SQLite")
        report.note("reads run against SQLite twice, at its defaults and with cache_size at least twice the database, each warmed by the untimed load whose answer is checked; LogStore's store is opened read-only before the clock, its committed state in memory as after any open")
        report.note("every round, both engines' answers are compared by content (every value, in order) with a digest of the values written; a mismatch ends the run")
        report.note("figures labelled 'published elsewhere' were measured by those projects on their machines with their versions; they are context for the scale of the numbers, not a comparison with this machine")
        return report
    }
}

/// What the anchor workloads share: how each side is opened, timed and checked.
enum Anchor {
    /// A GRDB database for writes and reads: WAL, synchronous FULL, no
    /// automatic checkpoint (LogStore runs with manual compaction), `schema` created.
    static func database(_ path: String, schema: [String]) throws -> any DatabaseWriter {
        let writer = try GRDBPeople.open(path, synchronousFull: true, pool: false)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            for statement in schema { try db.execute(sql: statement) }
        }
        return writer
    }

    /// A second, read-only connection to `path` whose page cache holds at
    /// least twice the database's pages, after a checkpoint moved the WAL in.
    static func cachedReader(_ path: String, of writer: any DatabaseWriter) throws -> DatabaseQueue {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let kibibytes = ((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1024
        var configuration = Configuration()
        configuration.readonly = true
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(2 * kibibytes + 1024)") }
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// The same rows in a LogStore file, opened read-only, and in a SQLite
    /// database, reached through its writer at SQLite's defaults and through
    /// ``cachedReader(_:of:)``: what the read workloads read.
    struct ReadDataSet {
        let store: Store
        let database: any DatabaseWriter
        let cached: DatabaseQueue
        private let storePath: String
        private let sqlitePath: String

        /// `fill` inserts the rows into a context, saved with `.deferredToOS`; `insert` writes them into the database.
        init(_ name: String, model: Model, schema: [String], _ context: BenchmarkContext,
             fill: (ObjectContext) throws -> Void, insert: (Database) throws -> Void) throws {
            storePath = context.scratch.freshPath("\(name).logstore")
            sqlitePath = context.scratch.freshPath("\(name).sqlite")
            do {
                let writing = try Store(path: storePath, model: model, options: JournalOptions(durability: .deferredToOS, compaction: .manual))
                defer { writing.close() }
                let objects = writing.newContext()
                try fill(objects)
                try objects.save()
            }
            store = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
            database = try Anchor.database(sqlitePath, schema: schema)
            try database.write(insert)
            cached = try Anchor.cachedReader(sqlitePath, of: database)
        }

        func remove(_ context: BenchmarkContext) {
            store.close()
            try? cached.close()
            try? (database as? DatabaseQueue)?.close()
            context.scratch.remove(storePath)
            SQLiteFiles.remove(sqlitePath)
        }
    }

    /// The durable options every LogStore write here runs with.
    static let durable = JournalOptions(durability: .fsyncEveryCommit, compaction: .manual)

    static func check(_ found: ResultDigest, _ expected: ResultDigest, _ what: String) throws {
        guard found == expected else { throw BenchmarkError("\(what) returned \(found), not the \(expected) written") }
    }

    /// One read case: `load` is timed `loads` times in a row (each result
    /// freed inside the clock); `digest`, untimed, runs first every round, so
    /// it warms the case and checks its answer.
    struct Read {
        let name: String
        let load: () throws -> Void
        let digest: () throws -> ResultDigest
    }

    /// The seconds each case took for `loads` loads, one per round.
    static func measure(_ cases: [Read], loads: Int, expected: ResultDigest, repetitions: Int) throws -> [[Double]] {
        var seconds = Array(repeating: [Double](), count: cases.count)
        for _ in 0..<repetitions {
            for (index, read) in cases.enumerated() {
                try check(try read.digest(), expected, read.name)
                seconds[index].append(try Stopwatch.seconds { for _ in 0..<loads { try read.load() } })
            }
        }
        return seconds
    }
}

extension GroupReport {
    /// Adds the median of `seconds` in milliseconds, with its range.
    @discardableResult
    mutating func addSeconds(_ name: String, _ seconds: [Double]) -> Figure {
        add(name, Rates(samples: seconds), scale: 1000, unit: "ms")
    }

    /// Adds `slower ÷ faster` as "how many times faster LogStore is" when the numerator is GRDB's time.
    mutating func compareTimes(_ name: String, grdb: Figure, logStore: Figure) {
        compare("\(name): GRDB time ÷ LogStore time (above 1: LogStore faster)", grdb, over: logStore)
    }

    /// A figure published elsewhere, with its machine and source.
    mutating func published(_ name: String, _ value: String) {
        fact("published elsewhere, other machine: \(name)", value)
    }
}
