// Space reclaimed after deleting half the records: file sizes before, after
// the delete and after LogStore's compaction beside SQLite's VACUUM.

import Foundation
import GRDB
import LogStore

/// A settled data set (LogStore compacted, SQLite checkpointed), every
/// other person deleted in one durable save or transaction, then LogStore
/// compacted and SQLite vacuumed; each round on fresh copies.
enum SpaceReclaimed {
    /// The file sizes and timings of one round of one engine.
    private struct Round {
        var bytesAfterDelete = 0
        var bytesAfterReclaim = 0
        var deleteSeconds = 0.0
        var reclaimSeconds = 0.0
    }

    static func measure(_ context: BenchmarkContext, into report: inout GroupReport) throws {
        let records = context.scaled(full: 1_000_000, quick: 10_000)
        let people = PersonValues.make(records, seed: 25)
        // Every other person: keys 2, 4, 6 …; the odd keys stay.
        let deleted = Array(stride(from: Int64(2), through: Int64(records), by: 2))
        let live = records - deleted.count
        let model = try PersonModel.make(indexingAge: true)
        let storeBase = context.scratch.freshPath("reclaim.logstore")
        let sqliteBase = context.scratch.freshPath("reclaim.sqlite")
        defer {
            context.scratch.remove(storeBase)
            SQLiteFiles.remove(sqliteBase)
        }

        /// The database and its WAL; not the shared-memory index, which
        /// exists only while the database is open (32 KiB here).
        func sqliteBytes(_ path: String) -> Int { bytesOnDisk([path, path + "-wal"]) }

        context.log("app-storage: \(records.formatted()) people in both engines, then every other one deleted and the space reclaimed, \(context.repetitions) rounds")
        let journalBytes: Int
        do {
            let store = try Store(path: storeBase, model: model, options: JournalOptions(compaction: .manual))
            defer { store.close() }
            try PersonModel.insert(people, into: store)
            journalBytes = bytesOnDisk([storeBase])
            _ = try store.compact()
        }
        do {
            let database = try GRDBPeople(path: sqliteBase, synchronousFull: true, indexingAge: true)
            defer { database.close() }
            try database.insertWithStatement(people)
            _ = try database.fileSize()
        }
        let storeBefore = bytesOnDisk([storeBase])
        let sqliteBefore = sqliteBytes(sqliteBase)

        func copy(_ path: String) throws -> String {
            let copy = context.scratch.freshPath("copy-" + URL(fileURLWithPath: path).lastPathComponent)
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try synchronizeFile(at: copy)
            return copy
        }

        func logStoreRound() throws -> (Round, [StoredPerson]) {
            let path = try copy(storeBase)
            defer { context.scratch.remove(path) }
            var round = Round()
            do {
                let store = try Store(path: path, model: model, options: JournalOptions(compaction: .manual))
                defer { store.close() }
                let ids = deleted.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
                round.deleteSeconds = try Stopwatch.seconds {
                    let objects = store.newContext()
                    for id in ids { try objects.delete(try objects.object(with: id)) }
                    try objects.save()
                }
                round.bytesAfterDelete = bytesOnDisk([path])
                round.reclaimSeconds = try Stopwatch.seconds { _ = try store.compact() }
                round.bytesAfterReclaim = bytesOnDisk([path])
            }
            let reopened = try Store(path: path, model: model, options: JournalOptions(access: .readOnly))
            defer { reopened.close() }
            return (round, try StoredPerson.all(in: reopened))
        }

        func sqliteRound() throws -> (Round, [StoredPerson]) {
            let path = try copy(sqliteBase)
            let database = try GRDBPeople(path: path, synchronousFull: true, indexingAge: true)
            defer { database.remove() }
            var round = Round()
            // No checkpoint inside the delete's clock, as LogStore's save
            // starts no compaction: the WAL is checkpointed after, untimed.
            try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            round.deleteSeconds = try Stopwatch.seconds {
                try database.writer.write { db in
                    let statement = try db.cachedStatement(sql: "DELETE FROM person WHERE id = ?")
                    for key in deleted { try statement.execute(arguments: [key]) }
                }
            }
            _ = try database.fileSize()
            round.bytesAfterDelete = sqliteBytes(path)
            // VACUUM in WAL mode writes the new database into the WAL; the
            // file shrinks only when a checkpoint copies it back.
            round.reclaimSeconds = try Stopwatch.seconds {
                try database.writer.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM")
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
            }
            _ = try database.fileSize()
            round.bytesAfterReclaim = sqliteBytes(path)
            database.close()
            let reopened = try GRDBPeople(path: path, synchronousFull: true, indexingAge: true)
            defer { reopened.close() }
            return (round, try StoredPerson.all(in: reopened))
        }

        let expected = StoredPerson.expected(people, keeping: { $0 % 2 == 1 })
        var logStoreRounds: [Round] = [], sqliteRounds: [Round] = []
        for _ in 0..<context.repetitions {
            let (logStore, logStoreRows) = try logStoreRound()
            let (sqlite, sqliteRows) = try sqliteRound()
            try StoredPerson.requireEqual(logStoreRows, expected, "LogStore after delete and compaction")
            try StoredPerson.requireEqual(sqliteRows, expected, "SQLite after delete and VACUUM")
            logStoreRounds.append(logStore)
            sqliteRounds.append(sqlite)
        }

        let label = "\(deleted.count.formatted()) of \(records.formatted())"
        for (engine, rounds, reclaim) in [("LogStore", logStoreRounds, "compact()"), ("SQLite", sqliteRounds, "VACUUM + checkpoint")] {
            report.add("reclaim: \(engine) delete \(label) in one durable save", Rates(samples: rounds.map(\.deleteSeconds)), unit: "s")
            report.add("reclaim: \(engine) \(reclaim) after the delete", Rates(samples: rounds.map(\.reclaimSeconds)), unit: "s")
        }
        let first = (logStore: logStoreRounds[0], sqlite: sqliteRounds[0])
        let stages: [(String, Int, Int, Int)] = [
            ("before, \(records.formatted()) live", storeBefore, sqliteBefore, records),
            ("after the delete, \(live.formatted()) live", first.logStore.bytesAfterDelete, first.sqlite.bytesAfterDelete, live),
            ("after compaction / VACUUM, \(live.formatted()) live", first.logStore.bytesAfterReclaim, first.sqlite.bytesAfterReclaim, live),
        ]
        for (stage, logStoreSize, sqliteSize, count) in stages {
            let logStore = report.add("reclaim: LogStore file \(stage)", value: Double(logStoreSize) * 1e-6, unit: "MB")
            let sqlite = report.add("reclaim: SQLite files \(stage)", value: Double(sqliteSize) * 1e-6, unit: "MB")
            report.add("reclaim: LogStore bytes per live record \(stage)", value: Double(logStoreSize) / Double(count), unit: "bytes")
            report.add("reclaim: SQLite bytes per live record \(stage)", value: Double(sqliteSize) / Double(count), unit: "bytes")
            report.compare("reclaim: LogStore ÷ SQLite file size \(stage)", logStore, over: sqlite)
        }
        report.fact("reclaim: LogStore file after the insert, before its compaction", "\(journalBytes.formatted()) bytes (the journal of one save)")
        report.note("reclaim: \(records.formatted()) people (PersonValues, an index on age in both engines) inserted in one save or transaction; \"before\" is LogStore's file compacted (what automatic compaction leaves) and SQLite's database checkpointed; then, on fresh copies each round, every other person (the even keys) deleted in one save or transaction, durable on both sides (LogStore .fsyncEveryCommit, SQLite WAL with synchronous=FULL and wal_autocheckpoint=0, the WAL checkpointed after the clock stops); then LogStore's compact() beside SQLite's VACUUM and the checkpoint that makes the file shrink (auto_vacuum is off, SQLite's default)")
        report.note("reclaim: sizes are the store's file, and SQLite's database and WAL after a checkpoint (its -shm index, present only while open, not counted), from the first round; times are medians of \(context.repetitions) rounds; after each round, both stores are reopened and every live person's ID and values are compared with the values inserted, so with each other")
    }
}

extension StoredPerson {
    /// The people inserted (key i + 1 for `people[i]`) whose key `keeping` keeps.
    static func expected(_ people: [PersonValues], keeping: (Int64) -> Bool) -> [StoredPerson] {
        people.enumerated().compactMap { index, values in keeping(Int64(index + 1)) ? StoredPerson(key: Int64(index + 1), values) : nil }
    }
}
