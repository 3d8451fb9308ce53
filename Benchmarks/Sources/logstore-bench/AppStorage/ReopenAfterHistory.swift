// Reopening a store after a long history of small saves and no compaction:
// open plus a first query in a fresh process, warm and cold, beside SQLite's
// database after the same history and beside the same store compacted.

import Foundation
import GRDB
import LogStore

/// People inserted in one save, then many single-record saves that each
/// change one person's age; the files closed, then opened in child
/// processes (Scaling/Probe.swift, `reopen-logstore` and `reopen-sqlite`)
/// that fetch the IDs of people aged ``queriedAge``.
enum ReopenAfterHistory {
    /// The age the first query after the open asks for.
    static let queriedAge: Int64 = 50

    /// One save of the history: person `key` gets age `age`.
    private struct AgeChange {
        var key: Int64
        var age: Int64
    }

    static func measure(_ context: BenchmarkContext, into report: inout GroupReport) throws {
        let records = context.scaled(full: 100_000, quick: 5_000)
        let saves = context.scaled(full: 100_000, quick: 5_000)
        let people = PersonValues.make(records, seed: 23)
        var random = SeededRandom(seed: 24)
        let changes = (0..<saves).map { _ in AgeChange(key: Int64(1 + random.next() % UInt64(records)), age: Int64(random.next() % 100)) }
        var ages = people.map(\.age)
        for change in changes { ages[Int(change.key) - 1] = change.age }
        let expected = ResultDigest(keySet: ages.indices.filter { ages[$0] == queriedAge }.map { Int64($0 + 1) })

        let historyPath = context.scratch.freshPath("history.logstore")
        let compactedPath = context.scratch.freshPath("history-compacted.logstore")
        let sqlitePath = context.scratch.freshPath("history.sqlite")
        defer {
            context.scratch.remove(historyPath)
            context.scratch.remove(compactedPath)
            SQLiteFiles.remove(sqlitePath)
        }
        context.log("app-storage: a history of \(records.formatted()) people inserted and \(saves.formatted()) single-record saves, in both engines")
        try writeHistory(people, changes, logStore: historyPath, sqlite: sqlitePath)
        try FileManager.default.copyItem(atPath: historyPath, toPath: compactedPath)
        do {
            let store = try Store(path: compactedPath, model: try PersonModel.make(indexingAge: true), options: JournalOptions(compaction: .manual))
            defer { store.close() }
            _ = try store.compact()
        }
        for path in [historyPath, compactedPath] + SQLiteFiles.paths(of: sqlitePath) where FileManager.default.fileExists(atPath: path) {
            try synchronizeFile(at: path)
        }

        /// One open and first query in a child process, its answer checked;
        /// the seconds the child took inside go to `inside[kind, path]`.
        var resident: [Probe.Kind: Int] = [:]
        var inside: [String: [Double]] = [:]
        func reopen(_ kind: Probe.Kind, _ path: String, cold: Bool) -> () throws -> Double {
            {
                if cold { _ = PageCache.drop() }
                let (result, seconds) = try Probe.run(kind, path: path)
                guard result.digest == expected else {
                    throw BenchmarkError("reopen after history: \(kind.rawValue) on \(path) found \(result.digest?.description ?? "nothing") for age == \(queriedAge), not \(expected)")
                }
                if !cold { resident[kind] = result.residentBytes }
                inside[kind.rawValue + path, default: []].append(result.seconds ?? .nan)
                return seconds
            }
        }
        func nothing(cold: Bool) -> () throws -> Double {
            {
                if cold { _ = PageCache.drop() }
                return try Probe.run(.nothing).seconds
            }
        }

        let canDrop = PageCache.drop()
        let label = "\(records.formatted()) people + \(saves.formatted()) saves"
        for cold in canDrop ? [false, true] : [false] {
            let cache = cold ? "cold page cache" : "warm page cache"
            context.log("app-storage: reopen after history, \(cache), 4 cases, \(context.repetitions) rounds")
            let times = try secondsInRounds(repetitions: context.repetitions, [
                nothing(cold: cold),
                reopen(.reopenLogStore, historyPath, cold: cold),
                reopen(.reopenLogStore, compactedPath, cold: cold),
                reopen(.reopenSQLite, sqlitePath, cold: cold),
            ])
            report.add("reopen: process start and exit alone, \(cache)", times[0], scale: 1e3, unit: "ms")
            let history = report.add("reopen: LogStore open + age == \(queriedAge) IDs, journal of \(label), \(cache)", times[1], scale: 1e3, unit: "ms")
            let compacted = report.add("reopen: LogStore open + age == \(queriedAge) IDs, the same store compacted, \(cache)", times[2], scale: 1e3, unit: "ms")
            let sqlite = report.add("reopen: GRDB open + age = \(queriedAge) ids, database after the same history, \(cache)", times[3], scale: 1e3, unit: "ms")
            report.compare("reopen: LogStore journal ÷ SQLite, time, \(cache)", history, over: sqlite)
            report.compare("reopen: LogStore compacted ÷ SQLite, time, \(cache)", compacted, over: sqlite)
            // The process start is most of a small open: the same opens as
            // timed inside the child.
            func insideChild(_ kind: Probe.Kind, _ path: String, _ name: String) -> Figure {
                report.add("reopen: \(name), open + query inside the child, \(cache)",
                           Rates(samples: inside.removeValue(forKey: kind.rawValue + path) ?? []), scale: 1e3, unit: "ms")
            }
            let historyInside = insideChild(.reopenLogStore, historyPath, "LogStore journal")
            let compactedInside = insideChild(.reopenLogStore, compactedPath, "LogStore compacted")
            let sqliteInside = insideChild(.reopenSQLite, sqlitePath, "GRDB")
            report.compare("reopen: LogStore journal ÷ SQLite, inside the child, \(cache)", historyInside, over: sqliteInside)
            report.compare("reopen: LogStore compacted ÷ SQLite, inside the child, \(cache)", compactedInside, over: sqliteInside)
            report.compare("reopen: LogStore journal ÷ LogStore compacted, inside the child, \(cache)", historyInside, over: compactedInside)
        }
        if !canDrop { report.note("reopen: cold page cache not measured: /proc/sys/vm/drop_caches is not writable (it needs root)") }
        for (name, kind) in [("LogStore (journal)", Probe.Kind.reopenLogStore), ("SQLite", .reopenSQLite)] {
            report.add("reopen: resident memory added by open + query, \(name), last warm run", value: Double(resident[kind] ?? 0) * 1e-6, unit: "MB")
        }
        report.fact("reopen: files", "LogStore journal \(bytesOnDisk([historyPath]).formatted()) bytes, compacted \(bytesOnDisk([compactedPath]).formatted()) bytes; SQLite \(bytesOnDisk(SQLiteFiles.paths(of: sqlitePath)).formatted()) bytes (every file, closed)")
        report.fact("reopen: first query answer", "\(expected.count) IDs of people aged \(queriedAge), the same from every engine every round (checked against the history applied in the parent)")
        report.note("reopen: \(records.formatted()) people (PersonValues, an index on age in both engines) inserted in one save, then \(saves.formatted()) saves of one changed age each (a random person, a random age), the same in both engines; LogStore with .deferredToOS and compaction .manual, so the file is the journal of every save; SQLite in WAL with synchronous=NORMAL (neither fsyncs at commit), its WAL checkpointed automatically as by default and on close; a copy of the LogStore file compacted shows what the history costs")
        report.note("reopen: each sample is a child process (logstore-bench --probe) that opens the file read-write, as an app does (LogStore with compaction .manual, GRDB's DatabaseQueue), fetches the IDs of people aged \(queriedAge) and exits, timed by the parent from start to exit (the process start alone is the floor under those figures) and, inside the child, from before the open to after the query's answer (the model is made before); cold: sync and drop_caches before each child, so the executable is read from disk too; the resident memory is what open + query added to the child (VmRSS)")
    }

    /// The same history written to a new store at `logStore` and a new database at `sqlite`, both closed after.
    private static func writeHistory(_ people: [PersonValues], _ changes: [AgeChange], logStore: String, sqlite: String) throws {
        let store = try Store(path: logStore, model: try PersonModel.make(indexingAge: true), options: JournalOptions(durability: .deferredToOS, compaction: .manual))
        defer { store.close() }
        try PersonModel.insert(people, into: store)
        let objects = store.newContext()
        for change in changes {
            let person = try objects.object(with: ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64(change.key))) as! BenchPerson
            person.age = change.age
            try objects.save()
        }

        let database = try GRDBPeople(path: sqlite, synchronousFull: false, indexingAge: true)
        defer { database.close() }
        try database.insertWithStatement(people)
        for change in changes {
            try database.writer.write { db in
                try db.cachedStatement(sql: "UPDATE person SET age = ? WHERE id = ?").execute(arguments: [change.age, change.key])
            }
        }
    }
}
