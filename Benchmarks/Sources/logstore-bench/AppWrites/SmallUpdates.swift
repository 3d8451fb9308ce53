// App writes 1: many small durable transactions, each setting the age of one
// person picked at random, LogStore .fsyncEveryCommit beside SQLite synchronous=FULL.

import Foundation
import LogStore

/// One save per changed field, as an app saves after each edit: the cost
/// of durability on a large data set, beside the machine's own fsync rate.
enum SmallUpdates {
    static func run(_ data: AppWritesData, into report: inout GroupReport) throws {
        let context = data.context
        let count = min(data.size, context.scaled(full: 10_000, quick: 200))
        let timeBox = context.scaled(full: Duration.seconds(10), quick: .seconds(1))
        let keys = data.randomKeys(count, seed: 23_001)
        let syncDuration = context.scaled(full: Duration.seconds(1), quick: .milliseconds(200))
        var sqliteQuiescent: [Double] = [], updatesPerRun: [Int] = []
        // The sample of `latencies`, after checking the engine's people against the values written.
        func checked(_ latencies: [Double], _ engine: String, read: ([Int64]) throws -> [StoredPerson]) throws -> Sample {
            let done = Array(keys.prefix(latencies.count))
            try StoredPerson.requireEqual(try read(done), data.updated(done), "\(engine) after \(done.count) updates")
            updatesPerRun.append(done.count)
            return Sample(work: Double(done.count), seconds: latencies.reduce(0, +))
        }
        context.log("app-writes: up to \(count.formatted()) one-field updates, one durable save each, \(context.repetitions) rounds")
        // LogStore's updates under `compaction`; the last save's latency
        // includes waiting for a compaction the saves started.
        func logStoreCase(_ compaction: CompactionPolicy) -> () throws -> Sample {
            {
                let store = try data.openStoreCopy(durability: .fsyncEveryCommit, compaction: compaction)
                defer { data.remove(store) }
                let ids = AppWritesData.ids(keys, in: store)
                var latencies = try AppWritesData.timeBoxed(count, timeBox) { index in
                    try AppWritesData.saveAge(AppWritesData.newAge(index), of: ids[index], in: store)
                }
                latencies[latencies.count - 1] += try Stopwatch.seconds { try store.waitUntilQuiescent() }
                return try checked(latencies, "LogStore") { try StoredPerson.read($0, from: store) }
            }
        }
        // SQLite's updates; without automatic checkpoints, the one after
        // the clock is timed for the quiescent figure.
        func sqliteCase(automaticCheckpoints: Bool) -> () throws -> Sample {
            {
                let database = try data.openSQLiteCopy(automaticCheckpoints: automaticCheckpoints)
                defer { database.remove() }
                let latencies = try AppWritesData.timeBoxed(count, timeBox) { index in
                    try AppWritesData.saveAge(AppWritesData.newAge(index), of: keys[index], in: database)
                }
                let checkpoint = try AppWritesData.checkpoint(database)
                let sample = try checked(latencies, "SQLite") { try StoredPerson.read($0, from: database) }
                if !automaticCheckpoints { sqliteQuiescent.append(sample.work / (sample.seconds + checkpoint)) }
                return sample
            }
        }
        let rates = try measureInRounds(repetitions: context.repetitions, [
            logStoreCase(.manual),
            sqliteCase(automaticCheckpoints: false),
            { try MachineLimits.syncedWriteSample(for: syncDuration, context) },
            logStoreCase(JournalOptions().compaction),
            sqliteCase(automaticCheckpoints: true),
        ])
        let size = data.size.formatted()
        let logStore = report.add("1. LogStore: age of one person, one save each, .fsyncEveryCommit, manual compaction, \(size) people", rates[0], unit: "saves/s")
        let sqlite = report.add("1. SQLite: cached UPDATE, one transaction each, synchronous=FULL, wal_autocheckpoint=0, \(size) people", rates[1], unit: "saves/s")
        report.add("1. SQLite: the same, its untimed checkpoint counted (quiescent)", Rates(samples: sqliteQuiescent), unit: "saves/s")
        let machine = report.add("1. machine: pwrite of 100 bytes + fdatasync", rates[2], unit: "per s")
        let logStoreDefault = report.add("1. LogStore: the same, default compaction policy, until quiescent", rates[3], unit: "saves/s")
        let sqliteDefault = report.add("1. SQLite: the same, automatic checkpoints (wal_autocheckpoint=1000)", rates[4], unit: "saves/s")
        report.compare("1. LogStore ÷ SQLite, one-field durable updates, each engine's default maintenance", logStoreDefault, over: sqliteDefault)
        report.compare("1. LogStore ÷ SQLite, one-field durable updates, neither engine's maintenance", logStore, over: sqlite)
        report.compare("1. LogStore ÷ pwrite + fdatasync", logStore, over: machine)
        report.compare("1. SQLite ÷ pwrite + fdatasync", sqlite, over: machine)
        report.fact("1. updates per run", "\(updatesPerRun.min() ?? 0) to \(updatesPerRun.max() ?? 0) (up to \(count.formatted()), or as many as \(timeBox) allows)")
        report.note("1: distinct people picked at random; each update is its own durable transaction (LogStore: a fresh context, object(with:), set age, save; SQLite: `UPDATE person SET age = ? WHERE id = ?` through the connection's cached statement in `writer.write`); every run on fresh copies of both files, opened before the clock starts; afterwards the updated people are read back on both sides and compared with the values written, field by field; with each engine's default maintenance, LogStore's clock runs until a compaction its saves started has finished, and SQLite's automatic checkpoints run inside the commits that trigger them")
    }
}
