// Benchmark 6: the object layer against GRDB on SQLite (WAL), same records,
// same run: bulk inserts, durable single saves, lookups by ID, updates and
// deletes, file size and memory.

import CBenchSystem
import Foundation
import GRDB
import LogStore

/// Person records through LogStore's managed objects and through GRDB.
enum ObjectThroughput: BenchmarkGroup {
    static let name = "objects"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "6. Objects: LogStore's managed objects against GRDB 7.10.0 on SQLite (WAL)")
        let large = context.scaled(full: 1_000_000, quick: 20_000)
        let small = context.scaled(full: 100_000, quick: 5_000)
        let people = PersonValues.make(large, seed: 6)
        let model = try PersonModel.make()

        for count in [small, large] {
            try bulkInsert(Array(people.prefix(count)), model: model, context, into: &report)
        }
        try singleSaves(model: model, context, into: &report)
        try dataSet(people, model: model, context, into: &report)
        report.note("a Person has firstName, lastName, age (Int64), orderingValue (Double) and dateCreated (Date); LogStore inserts through a typed ManagedObject subclass and saves once; GRDB inserts Codable records (record.insert) or executes one cached prepared statement, in one transaction")
        report.note("lookups: distinct keys in a seeded random order; every round each case's first names and ordering values are compared, in order, with the stored ones; SQLite runs at its defaults and with a page cache or an mmap at least as large as the database and LogStore's block cache, each connection warmed by reading every page first")
        report.note(EngineMemory.note)
        report.note("writes: GRDB's database is in WAL mode with synchronous=FULL, so each commit fsyncs as LogStore's .fsyncEveryCommit does, and wal_autocheckpoint=0 with a checkpoint after the clock stops, as LogStore runs with manual compaction and compacts nothing inside the clock; the single saves also run with each engine's default maintenance on the clock (LogStore's default compaction policy, timed until a compaction its saves started has finished; SQLite's automatic checkpoints), and that pair carries the target; after every timed write, untimed, each engine's people are read back and compared with what was written (keys and every value)")
        return report
    }

    // MARK: - Bulk inserts

    private static func bulkInsert(_ people: [PersonValues], model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let count = people.count
        context.log("objects: insert \(count) people in one save, 3 engines")
        let repetitions = count >= 1_000_000 ? 3 : context.repetitions
        let expected = PeopleContents.expected(people)
        let rates = try measureInRounds(repetitions: repetitions, [
            {
                let path = context.scratch.freshPath("insert.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model, options: JournalOptions(compaction: .manual))
                defer { store.close() }
                let sample = try Sample.timing(work: Double(count)) {
                    try PersonModel.insert(people, into: store.newContext())
                }
                try PeopleContents.check("LogStore", try PeopleContents.of(store), expected)
                return sample
            },
            {
                try sqliteInsertSample(people, named: "insert-records.sqlite", expected, context) { try $0.insertRecords(people) }
            },
            {
                try sqliteInsertSample(people, named: "insert-statement.sqlite", expected, context) { try $0.insertWithStatement(people) }
            },
        ])
        let label = count.formatted()
        let logStore = report.add("LogStore insert + save, \(label) people", rates[0], unit: "records/s")
        let records = report.add("GRDB Codable insert, \(label) people", rates[1], unit: "records/s")
        let statement = report.add("GRDB cached statement, \(label) people", rates[2], unit: "records/s")
        report.compare("LogStore ÷ GRDB Codable insert, \(label)", logStore, over: records, target: .atLeast(3))
        report.compare("LogStore ÷ GRDB cached statement, \(label)", logStore, over: statement, target: .atLeast(2))
    }

    /// `insert` into a new durable database, timed; the checkpoint after
    /// it untimed, then every row checked against `expected`.
    private static func sqliteInsertSample(_ people: [PersonValues], named name: String, _ expected: ResultDigest, _ context: BenchmarkContext, _ insert: (GRDBPeople) throws -> Void) throws -> Sample {
        let database = try durableDatabase(context.scratch.freshPath(name))
        defer { database.remove() }
        let sample = Sample(work: Double(people.count), seconds: try Stopwatch.seconds { try insert(database) })
        _ = try database.fileSize()
        try PeopleContents.check("SQLite", try PeopleContents.of(database), expected)
        return sample
    }

    /// A GRDB database that commits as durably as `.fsyncEveryCommit`
    /// (synchronous=FULL) and checkpoints only when asked
    /// (wal_autocheckpoint=0), as LogStore under `.manual` compacts only
    /// when asked: the clock holds each engine's commit, and neither's
    /// maintenance.
    private static func durableDatabase(_ path: String) throws -> GRDBPeople {
        let database = try GRDBPeople(path: path, synchronousFull: true)
        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        return database
    }

    // MARK: - Durable single saves

    private static func singleSaves(model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        // Quick: few, as each is an fsync and the disk is shared.
        let count = context.scaled(full: 10_000, quick: 400)
        let threads = 8
        let people = PersonValues.make(count, seed: 66)
        let expected = PeopleContents.expected(people)
        context.log("objects: \(count) single-record saves, 7 cases")
        func sqliteCase(_ name: String, _ insert: @escaping (PersonValues, Database) throws -> Void) -> () throws -> Sample {
            {
                try sqliteInsertSample(people, named: name, expected, context) { database in
                    for values in people { try database.writer.write { db in try insert(values, db) } }
                }
            }
        }
        // LogStore's single saves, durable, under `compaction`; with the
        // default policy the clock runs until a compaction the saves
        // started has finished.
        func logStoreCase(_ name: String, compaction: CompactionPolicy) -> () throws -> Sample {
            {
                let path = context.scratch.freshPath(name)
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model, options: JournalOptions(compaction: compaction))
                defer { store.close() }
                let objects = store.newContext()
                let sample = try Sample.timing(work: Double(count)) {
                    for values in people { try PersonModel.insert([values], into: objects) }
                    try store.waitUntilQuiescent()
                }
                try PeopleContents.check("LogStore", try PeopleContents.of(store), expected)
                return sample
            }
        }
        let rates = try measureInRounds(repetitions: context.repetitions, [
            logStoreCase("saves.logstore", compaction: .manual),
            {
                let path = context.scratch.freshPath("saves-group.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model, options: JournalOptions(durability: .groupCommit, compaction: .manual))
                defer { store.close() }
                let contexts = ContextPerThread(store: store, count: threads)
                let perThread = count / threads
                let sample = try Sample.timing(work: Double(perThread * threads)) {
                    try ThreadsAtOnce.run(count: threads) { thread in
                        for index in 0..<perThread {
                            try PersonModel.insert([people[thread * perThread + index]], into: contexts[thread])
                        }
                    }
                }
                let saved = try store.newContext().count("Person")
                guard saved == perThread * threads else { throw BenchmarkError("LogStore holds \(saved) people after \(perThread * threads) group-commit saves") }
                return sample
            },
            sqliteCase("saves-records.sqlite") { values, db in
                let record = values.grdb
                try record.insert(db)
            },
            sqliteCase("saves-statement.sqlite") { values, db in try GRDBPeople.insert([values], db) },
            logStoreCase("saves-default.logstore", compaction: JournalOptions().compaction),
            {
                // SQLite as apps run it: automatic checkpoints, each inside
                // the commit that triggers it, so on the clock.
                let database = try GRDBPeople(path: context.scratch.freshPath("saves-checkpoints.sqlite"), synchronousFull: true)
                defer { database.remove() }
                let sample = Sample(work: Double(count), seconds: try Stopwatch.seconds {
                    for values in people { try database.writer.write { db in try GRDBPeople.insert([values], db) } }
                })
                try PeopleContents.check("SQLite", try PeopleContents.of(database), expected)
                return sample
            },
            {
                let file = try PlainFile(path: context.scratch.freshPath("saves.plain"))
                defer { context.scratch.remove(file.path) }
                let record = [UInt8](repeating: 0x61, count: 100)
                return try Sample.timing(work: Double(count)) {
                    for _ in 0..<count {
                        try record.withUnsafeBytes { try file.append($0) }
                        try file.synchronize()
                    }
                }
            },
        ])
        let single = report.add("LogStore save of one new person, .fsyncEveryCommit, manual compaction", rates[0], unit: "saves/s")
        let group = report.add("LogStore saves from \(threads) threads, .groupCommit", rates[1], unit: "saves/s")
        let sqlite = report.add("GRDB Codable insert of one person, synchronous=FULL, wal_autocheckpoint=0", rates[2], unit: "saves/s")
        let statement = report.add("GRDB cached statement insert of one person, synchronous=FULL, wal_autocheckpoint=0", rates[3], unit: "saves/s")
        let singleDefault = report.add("LogStore save of one new person, .fsyncEveryCommit, default compaction policy, until quiescent", rates[4], unit: "saves/s")
        let statementDefault = report.add("GRDB cached statement insert of one person, synchronous=FULL, automatic checkpoints", rates[5], unit: "saves/s")
        let plain = report.add("plain pwrite of 100 bytes + fdatasync", rates[6], unit: "saves/s")
        // The target holds each engine as apps run it, its maintenance on
        // the clock: SQLite's automatic checkpoints let its write-ahead log
        // be reused, where a commit's fdatasync need not record a new file
        // size, so turning them off costs SQLite more than it saves.
        report.compare("LogStore ÷ GRDB cached statement, synchronous=FULL, each engine's default maintenance", singleDefault, over: statementDefault, target: .atLeast(1))
        report.compare("LogStore ÷ GRDB Codable, synchronous=FULL, neither engine's maintenance", single, over: sqlite)
        report.compare("LogStore ÷ GRDB cached statement, synchronous=FULL, neither engine's maintenance", single, over: statement)
        report.compare("LogStore ÷ pwrite + fdatasync", single, over: plain, target: .atLeast(0.8))
        report.compare("LogStore .groupCommit, \(threads) threads ÷ .fsyncEveryCommit", group, over: single, target: .atLeast(3))
    }

    // MARK: - A data set: lookups, updates, deletes, size, memory

    private static func dataSet(_ people: [PersonValues], model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let count = people.count
        let label = count.formatted()
        context.log("objects: a data set of \(label) people for lookups, updates, deletes, size and memory")
        let data = try PeopleDataSet(people, model: model, named: "people", context)
        defer { data.remove(context) }
        let storePath = data.storePath, database = data.database

        // File size.
        let storeSize = try FileManager.default.attributesOfItem(atPath: storePath)[.size] as? Int ?? 0
        let sqliteSize = try database.fileSize()
        let storeBytes = report.add("LogStore file, \(label) people", value: Double(storeSize) / 1e6, unit: "MB")
        let sqliteBytes = report.add("SQLite file, \(label) people (after a checkpoint)", value: Double(sqliteSize) / 1e6, unit: "MB")
        report.compare("LogStore file ÷ SQLite file", storeBytes, over: sqliteBytes, target: .atMost(0.5))

        // Memory: resident bytes the committed state takes, per record.
        let before = HeapInUse.bytes()
        let opened = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
        let after = HeapInUse.bytes()
        let perRecord = Double(after - before) / Double(count)
        let rawPerRecord = Double(people.reduce(0) { $0 + $1.rawSize }) / Double(count)
        report.add("heap in use by the open store, per record", value: perRecord, unit: "bytes")
        report.add("raw values per record", value: rawPerRecord, unit: "bytes")
        let overhead = perRecord - rawPerRecord
        report.add("overhead beyond the raw values", value: overhead, unit: "bytes", target: .atMost(150))

        try lookups(people, opened, data, context, into: &report)
        opened.close()
        try changes(people, model: model, data, context, into: &report)
    }

    // MARK: - Lookups by ID

    /// A person's values a lookup reads: what both engines must return.
    private struct LookedUp: Equatable {
        var firstName: String
        var orderingValue: Double
    }

    /// Distinct keys in 1...count, `count` of them at most, in a seeded random order.
    private static func distinctKeys(_ wanted: Int, of count: Int, seed: UInt64) -> [Int64] {
        var random = SeededRandom(seed: seed)
        return Array(Array(1...Int64(count)).shuffled(using: &random).prefix(wanted))
    }

    private static func lookups(_ people: [PersonValues], _ store: Store, _ data: PeopleDataSet, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let lookups = min(people.count, context.scaled(full: 100_000, quick: 10_000))
        let keys = distinctKeys(lookups, of: people.count, seed: 606)
        let ids = keys.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
        let expected = keys.map { LookedUp(firstName: people[Int($0) - 1].firstName, orderingValue: people[Int($0) - 1].orderingValue) }
        let readers = try SQLiteReaders(path: data.sqlitePath)
        defer { readers.close() }

        /// One pass of `body` over the keys, timed, its answers checked after the clock.
        func sample(_ engine: String, _ body: (inout [LookedUp]) throws -> Void) throws -> Sample {
            var found: [LookedUp] = []
            found.reserveCapacity(lookups)
            let seconds = try Stopwatch.seconds { try body(&found) }
            guard found == expected else { throw BenchmarkError("\(engine) looked up other values than were stored (\(found.count) people, first \(found.first.map { "\($0)" } ?? "none"), expected \(expected.first.map { "\($0)" } ?? "none"))") }
            return Sample(work: Double(lookups), seconds: seconds)
        }
        func logStoreLookups(_ found: inout [LookedUp]) throws {
            // The context and its objects are freed inside the clock.
            let objects = store.newContext()
            for id in ids {
                let person = try objects.object(with: id) as! BenchPerson
                found.append(LookedUp(firstName: person.firstName ?? "", orderingValue: person.orderingValue))
            }
        }
        func columnLookups(_ database: GRDBPeople, _ found: inout [LookedUp]) throws {
            try database.writer.read { db in
                let statement = try db.cachedStatement(sql: "SELECT firstName, orderingValue FROM person WHERE id = ?")
                for key in keys {
                    guard let row = try Row.fetchOne(statement, arguments: [key]) else { continue }
                    found.append(LookedUp(firstName: row[0], orderingValue: row[1]))
                }
            }
        }
        func recordLookups<Record: FetchableRecord>(_ type: Record.Type, _ database: GRDBPeople, _ found: inout [LookedUp], _ values: (Record) -> LookedUp) throws {
            try database.writer.read { db in
                let statement = try db.cachedStatement(sql: "SELECT * FROM person WHERE id = ?")
                for key in keys {
                    if let record = try Record.fetchOne(statement, arguments: [key]) { found.append(values(record)) }
                }
            }
        }
        let styles: [(String, (GRDBPeople, inout [LookedUp]) throws -> Void)] = [
            ("cached statement, two columns", columnLookups),
            ("cached statement, Codable record", { try recordLookups(GRDBPerson.self, $0, &$1) { LookedUp(firstName: $0.firstName, orderingValue: $0.orderingValue) } }),
            ("cached statement, init(row:) record", { try recordLookups(GRDBPersonRow.self, $0, &$1) { LookedUp(firstName: $0.firstName, orderingValue: $0.orderingValue) } }),
        ]
        var cases: [() throws -> Sample] = [{ try sample("LogStore", logStoreLookups) }]
        for (memory, database) in readers.variants {
            for (_, lookup) in styles { cases.append({ try sample(memory.label, { try lookup(database, &$0) }) }) }
        }
        context.log("objects: \(lookups.formatted()) lookups, \(cases.count) cases")
        let rates = try measureInRounds(repetitions: context.repetitions, cases)

        let logStore = report.add("LogStore object(with:) + read firstName and orderingValue, fresh context, \(lookups.formatted()) distinct keys", rates[0], unit: "lookups/s")
        for (variant, (memory, _)) in readers.variants.enumerated() {
            for (style, (name, _)) in styles.enumerated() {
                let grdb = report.add("GRDB by primary key, \(name), \(memory.label)", rates[1 + variant * styles.count + style], unit: "lookups/s")
                let target: Target? = memory == .defaults && style == 0 ? .atLeast(5) : nil
                report.compare("LogStore lookup ÷ GRDB \(name), \(memory.label)", logStore, over: grdb, target: target)
            }
        }

        let lookupOnce = { (database: GRDBPeople) in
            var found: [LookedUp] = []
            try columnLookups(database, &found)
        }
        let logStoreMemory = try EngineMemory.measure(
            open: { try Store(path: data.storePath, model: store.model, options: JournalOptions(access: .readOnly)) },
            workload: { opened in
                let objects = opened.newContext()
                for id in ids { keep((try objects.object(with: id) as! BenchPerson).firstName) }
            },
            close: { $0.close() })
        logStoreMemory.add(to: &report, engine: "LogStore (open read-only)", after: "the lookups")
        for (memory, added) in try readers.memory(lookupOnce) {
            added.add(to: &report, engine: "\(memory.label) (open, warmed)", after: "the lookups")
        }
    }

    // MARK: - Updates and deletes

    /// Updates or deletes a tenth of the people in one save (transaction),
    /// committed durably on fresh copies of both files.
    private static func changes(_ people: [PersonValues], model: Model, _ data: PeopleDataSet, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let count = people.count
        let targets = distinctKeys(count / 10, of: count, seed: 607)
        let updated = targets.sorted()
        let remaining = Array(Set(1...Int64(count)).subtracting(targets)).sorted()
        context.log("objects: update and delete \(targets.count.formatted()) people in one save, 6 cases")

        func logStoreCase(_ change: @escaping (ObjectContext, BenchPerson) throws -> Void, expecting expected: [Int64], in request: LogStore.FetchRequest) -> () throws -> Sample {
            {
                let copy = try copyFile(data.storePath, context)
                defer { context.scratch.remove(copy) }
                let store = try Store(path: copy, model: model, options: JournalOptions(compaction: .manual))
                defer { store.close() }
                let ids = targets.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
                let sample = try Sample.timing(work: Double(targets.count)) {
                    // The context and its objects are freed inside the clock.
                    let objects = store.newContext()
                    for id in ids { try change(objects, try objects.object(with: id) as! BenchPerson) }
                    try objects.save()
                }
                let found = try store.newContext().fetchIDs(request).map { Int64($0.key) }.sorted()
                guard found == expected else { throw BenchmarkError("LogStore: \(found.count) people match \(request.predicate.map { "\($0)" } ?? "all") after the save, not \(expected.count)") }
                return sample
            }
        }
        func sqliteCase(_ change: @escaping (Database) throws -> Void, expecting expected: [Int64], in query: String) -> () throws -> Sample {
            {
                let copy = try copyFile(data.sqlitePath, context)
                let database = try durableDatabase(copy)
                defer { database.remove() }
                let sample = try Sample.timing(work: Double(targets.count)) { try database.writer.write(change) }
                _ = try database.fileSize()
                let found = try database.writer.read { db in try Int64.fetchAll(db, sql: query) }
                guard found == expected else { throw BenchmarkError("SQLite: \(found.count) rows match \(query) after the commit, not \(expected.count)") }
                return sample
            }
        }
        let agedPast100 = LogStore.FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 101"))
        let everyone = LogStore.FetchRequest(entityName: "Person")
        let agedPast100SQL = "SELECT id FROM person WHERE age = 101 ORDER BY id", everyoneSQL = "SELECT id FROM person ORDER BY id"
        // The data set's file after a checkpoint: the copies start from it alone.
        _ = try data.database.fileSize()
        let rates = try measureInRounds(repetitions: min(context.repetitions, 3), [
            logStoreCase({ _, person in person.age = 101 }, expecting: updated, in: agedPast100),
            logStoreCase({ objects, person in try objects.delete(person) }, expecting: remaining, in: everyone),
            sqliteCase({ db in
                let statement = try db.cachedStatement(sql: "UPDATE person SET age = ? WHERE id = ?")
                for key in targets { try statement.execute(arguments: [101, key]) }
            }, expecting: updated, in: agedPast100SQL),
            sqliteCase({ db in
                for key in targets {
                    var person = people[Int(key) - 1].grdb
                    person.id = key
                    person.age = 101
                    try person.update(db)
                }
            }, expecting: updated, in: agedPast100SQL),
            sqliteCase({ db in
                let statement = try db.cachedStatement(sql: "DELETE FROM person WHERE id = ?")
                for key in targets { try statement.execute(arguments: [key]) }
            }, expecting: remaining, in: everyoneSQL),
            sqliteCase({ db in
                for key in targets { _ = try GRDBPerson.deleteOne(db, key: key) }
            }, expecting: remaining, in: everyoneSQL),
        ])
        let names = ["LogStore update 10% (\(targets.count.formatted())) in one save", "LogStore delete 10% in one save",
                     "GRDB cached UPDATE … SET age = ? WHERE id = ?, one transaction", "GRDB Codable record.update one by one, one transaction",
                     "GRDB cached DELETE … WHERE id = ?, one transaction", "GRDB deleteOne one by one, one transaction"]
        let figures = zip(names, rates).map { report.add($0, $1, unit: "records/s") }
        // LogStore's figure over GRDB's, by their places in `names`.
        let ratios: [(String, Int, Int, Target?)] = [
            ("LogStore update ÷ GRDB cached UPDATE", 0, 2, .atLeast(3)), ("LogStore update ÷ GRDB record.update", 0, 3, nil),
            ("LogStore delete ÷ GRDB cached DELETE", 1, 4, .atLeast(3)), ("LogStore delete ÷ GRDB deleteOne", 1, 5, nil),
        ]
        for (name, logStore, grdb, target) in ratios { report.compare(name, figures[logStore], over: figures[grdb], target: target) }
        report.note("updates and deletes: each round runs on fresh copies of both files, written to disk before the clock starts (SQLite's after a checkpoint, so the copy is the database file alone); LogStore (.fsyncEveryCommit, manual compaction) looks the people up in a fresh context, changes them and saves once, the context freed inside the clock; GRDB commits one transaction with synchronous=FULL and wal_autocheckpoint=0, and checkpoints after the clock; after each round, untimed, both engines' IDs aged 101 (updates) or remaining (deletes) are compared with the expected ones")
    }

    /// A copy of the file at `path`, on disk before the clock starts:
    /// otherwise the timed commit's fsync also wrote out the whole copy.
    private static func copyFile(_ path: String, _ context: BenchmarkContext) throws -> String {
        let copy = context.scratch.freshPath("copy-" + URL(fileURLWithPath: path).lastPathComponent)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try synchronizeFile(at: copy)
        return copy
    }
}

/// One context per thread, each touched only by its own thread.
final class ContextPerThread: @unchecked Sendable {
    private let contexts: [ObjectContext]
    init(store: Store, count: Int) { contexts = (0..<count).map { _ in store.newContext() } }
    subscript(thread: Int) -> ObjectContext { contexts[thread] }
}

/// Runs `body` on `count` threads at once and waits for all of them.
enum ThreadsAtOnce {
    static func run(count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        let finished = DispatchGroup()
        let failures = FirstError()
        for thread in 0..<count {
            finished.enter()
            Thread {
                do { try body(thread) } catch { failures.record(error) }
                finished.leave()
            }.start()
        }
        finished.wait()
        if let error = failures.error { throw error }
    }

    private final class FirstError: @unchecked Sendable {
        private let lock = NSLock()
        private var first: (any Error)?
        func record(_ error: any Error) { lock.withLock { first = first ?? error } }
        var error: (any Error)? { lock.withLock { first } }
    }
}

/// Heap bytes in use, from glibc's allocator (`mallinfo2().uordblks`).
/// Resident set size would miss memory the allocator reuses from earlier
/// cases; bytes in use count exactly what the open store holds.
enum HeapInUse {
    // Small blocks (uordblks) and the large ones malloc maps separately
    // (hblkhd): arrays of a million records are the latter.
    static func bytes() -> Int {
        let info = mallinfo2()
        return Int(info.uordblks + info.hblkhd)
    }
}
