// App writes 3: several threads saving at once, each save durable: LogStore's
// group commit and fsync-every-commit beside SQLite's one writer at a time.

import Foundation
import GRDB
import LogStore

/// Four threads each insert one new person per durable save for a fixed
/// time. LogStore lets their fsyncs be shared (`.groupCommit`); SQLite
/// serializes writers, each commit fsyncing the WAL.
enum ConcurrentWriters {
    static let threads = 4
    /// Thread `t`'s save `i` inserts new person `t * perThread + i`.
    private static let perThread = 10_000_000

    static func run(_ data: AppWritesData, into report: inout GroupReport) throws {
        let context = data.context
        let duration = context.scaled(full: Duration.seconds(2), quick: .milliseconds(300))
        let templates = PersonValues.make(1_000, seed: 23_004)
        var sqliteQuiescent: [Double] = []
        context.log("app-writes: \(threads) writers for \(duration), 3 cases, \(context.repetitions) rounds")
        let rates = try measureInRounds(repetitions: context.repetitions, [
            { try logStoreSample(data, durability: .groupCommit, duration, templates) },
            { try logStoreSample(data, durability: .fsyncEveryCommit, duration, templates) },
            {
                let database = try data.openSQLiteCopy(pool: true, automaticCheckpoints: false)
                defer { database.remove() }
                let writer = database.writer
                let counts = try saving(for: duration, templates) { person in
                    try writer.write { db in try GRDBPeople.insert(CollectionOfOne(person), db) }
                }
                let checkpoint = try AppWritesData.checkpoint(database)
                let count = try writer.read { db in try GRDBPerson.fetchCount(db) }
                try check(counts, data, templates, count: count, inserted: try StoredPerson.inserted(in: database), engine: "SQLite")
                let sample = Sample(work: Double(counts.perThread.reduce(0, +)), seconds: counts.seconds)
                sqliteQuiescent.append(sample.work / (sample.seconds + checkpoint))
                return sample
            },
        ])
        let size = data.size.formatted()
        let group = report.add("3. LogStore .groupCommit, \(threads) threads saving, \(size) people", rates[0], unit: "saves/s")
        let everyCommit = report.add("3. LogStore .fsyncEveryCommit, \(threads) threads saving", rates[1], unit: "saves/s")
        let sqlite = report.add("3. SQLite DatabasePool, synchronous=FULL, \(threads) threads saving", rates[2], unit: "saves/s")
        report.add("3. SQLite: the same, its untimed checkpoint counted (quiescent)", Rates(samples: sqliteQuiescent), unit: "saves/s")
        report.compare("3. LogStore .groupCommit ÷ SQLite, \(threads) writers", group, over: sqlite)
        report.compare("3. LogStore .fsyncEveryCommit ÷ SQLite, \(threads) writers", everyCommit, over: sqlite)
        report.compare("3. LogStore .groupCommit ÷ .fsyncEveryCommit, \(threads) writers", group, over: everyCommit)
        report.note("3: each of \(threads) threads inserts one new person per durable save for \(duration) (LogStore: a fresh context per save; SQLite: the writer connection's cached INSERT in `writer.write`, which GRDB serializes), on fresh copies of both files; afterwards each side's count must be the data set plus every save, and the inserted people, read back, must be exactly the ones each thread saved, field by field")
    }

    private static func logStoreSample(_ data: AppWritesData, durability: Durability, _ duration: Duration, _ templates: [PersonValues]) throws -> Sample {
        let store = try data.openStoreCopy(durability: durability)
        defer { data.remove(store) }
        let counts = try saving(for: duration, templates) { try AppWritesData.saveNew($0, in: store) }
        try check(counts, data, templates, count: try store.newContext().count("Person"), inserted: try StoredPerson.inserted(in: store), engine: "LogStore \(durability)")
        return Sample(work: Double(counts.perThread.reduce(0, +)), seconds: counts.seconds)
    }

    /// Runs the threads, each saving its own new people through `save` until `duration` has passed.
    private static func saving(for duration: Duration, _ templates: [PersonValues],
                               _ save: @escaping @Sendable (PersonValues) throws -> Void) throws -> ThreadCounts.Result {
        try ThreadCounts.run(threads: threads, for: duration) { thread, running in
            var saves = 0
            while running() {
                try save(AppWritesData.newPerson(thread * perThread + saves, from: templates))
                saves += 1
            }
            return saves
        }
    }

    /// Throws unless the engine holds the data set plus exactly the people each thread saved.
    private static func check(_ counts: ThreadCounts.Result, _ data: AppWritesData, _ templates: [PersonValues],
                              count: Int, inserted: [StoredPerson], engine: String) throws {
        let saves = counts.perThread.reduce(0, +)
        guard count == data.size + saves else {
            throw BenchmarkError("\(engine) holds \(count) people after \(saves) saves into \(data.size), not \(data.size + saves)")
        }
        let expected = counts.perThread.enumerated().flatMap { thread, saved in
            (0..<saved).map { StoredPerson(key: 0, AppWritesData.newPerson(thread * perThread + $0, from: templates)) }
        }
        try StoredPerson.requireEqual(inserted, expected, "\(engine), the people \(threads) threads inserted")
    }
}
