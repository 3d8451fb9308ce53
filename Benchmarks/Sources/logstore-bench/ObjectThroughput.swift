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
        report.note("GRDB's database is in WAL mode with GRDB's default synchronous=NORMAL for bulk work, and synchronous=FULL for the durable single saves; LogStore uses .fsyncEveryCommit unless stated")
        return report
    }

    // MARK: - Bulk inserts

    private static func bulkInsert(_ people: [PersonValues], model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let count = people.count
        context.log("objects: insert \(count) people in one save, 3 engines")
        let repetitions = count >= 1_000_000 ? 3 : context.repetitions
        let rates = try measureInRounds(repetitions: repetitions, [
            {
                let path = context.scratch.freshPath("insert.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model)
                defer { store.close() }
                return try Sample.timing(work: Double(count)) {
                    try PersonModel.insert(people, into: store.newContext())
                }
            },
            {
                let database = try GRDBPeople(path: context.scratch.freshPath("insert-records.sqlite"), synchronousFull: false)
                defer { database.remove() }
                return Sample(work: Double(count), seconds: try Stopwatch.seconds { try database.insertRecords(people) })
            },
            {
                let database = try GRDBPeople(path: context.scratch.freshPath("insert-statement.sqlite"), synchronousFull: false)
                defer { database.remove() }
                return Sample(work: Double(count), seconds: try Stopwatch.seconds { try database.insertWithStatement(people) })
            },
        ])
        let label = count.formatted()
        let logStore = report.add("LogStore insert + save, \(label) people", rates[0], unit: "records/s")
        let records = report.add("GRDB Codable insert, \(label) people", rates[1], unit: "records/s")
        let statement = report.add("GRDB cached statement, \(label) people", rates[2], unit: "records/s")
        report.compare("LogStore ÷ GRDB Codable insert, \(label)", logStore, over: records, target: .atLeast(3))
        report.compare("LogStore ÷ GRDB cached statement, \(label)", logStore, over: statement, target: .atLeast(2))
    }

    // MARK: - Durable single saves

    private static func singleSaves(model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let count = context.scaled(full: 10_000, quick: 1_000)
        let threads = 8
        let people = PersonValues.make(count, seed: 66)
        context.log("objects: \(count) single-record saves, 4 cases")
        let rates = try measureInRounds(repetitions: context.repetitions, [
            {
                let path = context.scratch.freshPath("saves.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model)
                defer { store.close() }
                let objects = store.newContext()
                return try Sample.timing(work: Double(count)) {
                    for values in people { try PersonModel.insert([values], into: objects) }
                }
            },
            {
                let path = context.scratch.freshPath("saves-group.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model, options: JournalOptions(durability: .groupCommit))
                defer { store.close() }
                let contexts = ContextPerThread(store: store, count: threads)
                let perThread = count / threads
                return try Sample.timing(work: Double(perThread * threads)) {
                    try ThreadsAtOnce.run(count: threads) { thread in
                        for index in 0..<perThread {
                            try PersonModel.insert([people[thread * perThread + index]], into: contexts[thread])
                        }
                    }
                }
            },
            {
                let database = try GRDBPeople(path: context.scratch.freshPath("saves.sqlite"), synchronousFull: true)
                defer { database.remove() }
                return try Sample.timing(work: Double(count)) {
                    for values in people {
                        try database.writer.write { db in
                            let record = values.grdb
                            try record.insert(db)
                        }
                    }
                }
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
        let single = report.add("LogStore save of one new person, .fsyncEveryCommit", rates[0], unit: "saves/s")
        let group = report.add("LogStore saves from \(threads) threads, .groupCommit", rates[1], unit: "saves/s")
        let sqlite = report.add("GRDB insert of one person, synchronous=FULL", rates[2], unit: "saves/s")
        let plain = report.add("plain pwrite of 100 bytes + fdatasync", rates[3], unit: "saves/s")
        report.compare("LogStore ÷ GRDB synchronous=FULL", single, over: sqlite, target: .atLeast(1))
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
        report.compare("LogStore file ÷ SQLite file", storeBytes, over: sqliteBytes)
        let storeFraction = Double(storeSize) / Double(sqliteSize)
        report.add("target: LogStore file at most 0.5 of SQLite's", value: storeFraction, unit: storeFraction <= 0.5 ? "met" : "NOT MET")

        // Memory: resident bytes the committed state takes, per record.
        let before = HeapInUse.bytes()
        let opened = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
        let after = HeapInUse.bytes()
        let perRecord = Double(after - before) / Double(count)
        let rawPerRecord = Double(people.reduce(0) { $0 + $1.rawSize }) / Double(count)
        report.add("heap in use by the open store, per record", value: perRecord, unit: "bytes")
        report.add("raw values per record", value: rawPerRecord, unit: "bytes")
        let overhead = perRecord - rawPerRecord
        report.add("overhead beyond the raw values (target < 150)", value: overhead, unit: overhead < 150 ? "bytes: met" : "bytes: NOT MET")

        // Lookups by ID in a fresh context.
        let lookups = context.scaled(full: 100_000, quick: 10_000)
        var random = SeededRandom(seed: 606)
        let keys = (0..<lookups).map { _ in UInt64(random.next() % UInt64(count)) + 1 }
        let ids = try opened.newContext().fetchIDs("Person")
        let byKey = Dictionary(uniqueKeysWithValues: ids.map { ($0.key, $0) })
        let lookupIDs = keys.compactMap { byKey[$0] }
        guard lookupIDs.count == lookups else { throw BenchmarkError("the store has \(ids.count) people, not keys 1 to \(count)") }
        let lookupRates = try measureInRounds(repetitions: context.repetitions, [
            {
                let objects = opened.newContext()
                var total = 0
                let seconds = try Stopwatch.seconds {
                    for id in lookupIDs { total += (try objects.object(with: id)["firstName"] as? String)?.utf8.count ?? 0 }
                }
                keep(total)
                return Sample(work: Double(lookups), seconds: seconds)
            },
            {
                var total = 0
                let seconds = try Stopwatch.seconds {
                    try database.writer.read { db in
                        let statement = try db.cachedStatement(sql: "SELECT firstName FROM person WHERE id = ?")
                        for key in keys { total += try String.fetchOne(statement, arguments: [Int64(key)])?.utf8.count ?? 0 }
                    }
                }
                keep(total)
                return Sample(work: Double(lookups), seconds: seconds)
            },
            {
                var total = 0
                let seconds = try Stopwatch.seconds {
                    try database.writer.read { db in
                        for key in keys { total += try GRDBPerson.fetchOne(db, key: Int64(key))?.firstName.utf8.count ?? 0 }
                    }
                }
                keep(total)
                return Sample(work: Double(lookups), seconds: seconds)
            },
        ])
        opened.close()
        let lookup = report.add("LogStore object(with:) + read firstName, fresh context", lookupRates[0], unit: "lookups/s")
        let cached = report.add("GRDB cached statement by primary key", lookupRates[1], unit: "lookups/s")
        let fetchOne = report.add("GRDB Codable fetchOne by primary key", lookupRates[2], unit: "lookups/s")
        report.compare("LogStore lookup ÷ GRDB cached statement", lookup, over: cached, target: .atLeast(5))
        report.compare("LogStore lookup ÷ GRDB fetchOne", lookup, over: fetchOne)

        // Update 10% and delete 10%, one save (transaction) each, on copies.
        let changed = count / 10
        let targets = Array(Set(keys.prefix(changed * 3))).prefix(changed).map { $0 }
        let changeRates = try measureInRounds(repetitions: min(context.repetitions, 3), [
            {
                let copy = try copyFile(storePath, context)
                defer { context.scratch.remove(copy) }
                let store = try Store(path: copy, model: model)
                defer { store.close() }
                let objects = store.newContext()
                return try Sample.timing(work: Double(targets.count)) {
                    for key in targets { try objects.object(with: byKey[key]!)["age"] = Int64(101) }
                    try objects.save()
                }
            },
            {
                let copy = try copyFile(storePath, context)
                defer { context.scratch.remove(copy) }
                let store = try Store(path: copy, model: model)
                defer { store.close() }
                let objects = store.newContext()
                return try Sample.timing(work: Double(targets.count)) {
                    for key in targets { try objects.delete(try objects.object(with: byKey[key]!)) }
                    try objects.save()
                }
            },
            {
                let seconds = try database.inRolledBackTransaction { db in
                    for key in targets {
                        var person = people[Int(key) - 1].grdb
                        person.id = Int64(key)
                        person.age = 101
                        try person.update(db)
                    }
                }
                return Sample(work: Double(targets.count), seconds: seconds)
            },
            {
                let seconds = try database.inRolledBackTransaction { db in
                    for key in targets { _ = try GRDBPerson.deleteOne(db, key: Int64(key)) }
                }
                return Sample(work: Double(targets.count), seconds: seconds)
            },
        ])
        let update = report.add("LogStore update 10% (\(targets.count.formatted())) in one save", changeRates[0], unit: "records/s")
        let delete = report.add("LogStore delete 10% in one save", changeRates[1], unit: "records/s")
        let grdbUpdate = report.add("GRDB record.update one by one, one transaction", changeRates[2], unit: "records/s")
        let grdbDelete = report.add("GRDB deleteOne one by one, one transaction", changeRates[3], unit: "records/s")
        report.compare("LogStore update ÷ GRDB update", update, over: grdbUpdate, target: .atLeast(3))
        report.compare("LogStore delete ÷ GRDB delete", delete, over: grdbDelete, target: .atLeast(3))
        report.note("GRDB's updates and deletes run in a transaction that is rolled back afterwards, so every round starts from the same data; LogStore's run on a fresh copy of the store, opened before the clock starts; both write with their default durability (LogStore fsyncs its one save, GRDB's rollback skips the commit)")
    }

    private static func copyFile(_ path: String, _ context: BenchmarkContext) throws -> String {
        let copy = context.scratch.freshPath("copy.logstore")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        // On disk before the clock starts: otherwise the timed save's one
        // fdatasync also wrote out the whole copy, tens of megabytes.
        guard let handle = FileHandle(forWritingAtPath: copy) else { throw BenchmarkError("cannot open \(copy) to flush it") }
        defer { try? handle.close() }
        try handle.synchronize()
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
