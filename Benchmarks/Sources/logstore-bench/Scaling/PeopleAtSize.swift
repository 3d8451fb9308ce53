// The Person workloads at one size: the same people in a LogStore file and a
// SQLite database (index on age in both), and every workload run on both.

import Foundation
import GRDB
import LogStore

/// One size of the scaling runs: builds both data sets in child processes
/// (measuring their peak memory), then runs each workload side by side.
struct PeopleAtSize {
    let size: Int
    let people: [PersonValues]
    let model: Model
    let context: BenchmarkContext
    let limits: MachineLimits
    let recordBytes: Double
    let storePath: String
    let sqlitePath: String

    init(size: Int, context: BenchmarkContext, limits: MachineLimits, recordBytes: Double) throws {
        self.size = size
        self.people = ScalingPeople.make(size)
        self.model = try PersonModel.make(indexingAge: true)
        self.context = context
        self.limits = limits
        self.recordBytes = recordBytes
        storePath = context.scratch.freshPath("people-\(size).logstore")
        sqlitePath = context.scratch.freshPath("people-\(size).sqlite")
    }

    private var label: String { size.formatted() }
    private var repetitions: Int { context.repetitions }
    /// How long a fast query is repeated for one sample.
    private var minimumSample: Duration { context.scaled(full: .milliseconds(300), quick: .milliseconds(100)) }

    private func sideBySide(_ workload: Workload, check: ResultCheck = .bothStoresAgree) -> SideBySide {
        context.log("scaling \(label): \(workload.rawValue)")
        return SideBySide(workload: workload, size: size, repetitions: repetitions, check: check)
    }

    private func row(_ workload: Workload, _ runs: (logStore: [CaseRun], sqlite: [CaseRun])) -> ScalingRow {
        SideBySide(workload: workload, size: size, repetitions: repetitions, check: .bothStoresAgree)
            .row(runs, limits: limits, recordBytes: recordBytes)
    }

    /// Runs everything and adds the rows to `report`.
    func run(into report: inout ScalingReport) throws {
        defer {
            context.scratch.remove(storePath)
            SQLiteFiles.remove(sqlitePath)
        }
        report.memory.append(try buildDataSets())
        report.rows.append(try openAndQuery())
        report.rows.append(try bulkInsert())
        do {
            let store = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
            defer { store.close() }
            let database = try GRDBPeople(path: sqlitePath, synchronousFull: true, pool: true)
            defer { database.close() }
            report.rows.append(try lookups(store, database))
            report.rows.append(try rangeFetch(store, database))
            report.rows.append(try scan(store, database))
            report.rows.append(try count(store, database))
        }
        report.rows.append(try changeTenPercent(.update))
        report.rows.append(try changeTenPercent(.delete))
        report.rows += try writes()
    }

    // MARK: - Data sets, memory, open

    /// Builds the two files in child processes, each alone in its process,
    /// so their peak memory is their own.
    private func buildDataSets() throws -> MemoryRow {
        context.log("scaling \(label): building both data sets in child processes")
        let logStoreBuild = try Probe.run(.buildLogStore, path: storePath, count: size)
        let sqliteBuild = try Probe.run(.buildSQLite, path: sqlitePath, count: size)
        let logStoreOpen = try Probe.run(.openLogStore, path: storePath, count: size)
        let sqliteOpen = try Probe.run(.openSQLite, path: sqlitePath, count: size)
        func fileSize(_ path: String) -> Double {
            Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
        return MemoryRow(
            size: size,
            logStorePeakInsert: logStoreBuild.result.peakBytes ?? 0, sqlitePeakInsert: sqliteBuild.result.peakBytes ?? 0,
            logStoreResidentPerRecord: Double(logStoreOpen.result.residentBytes ?? 0) / Double(size),
            sqliteResidentPerRecord: Double(sqliteOpen.result.residentBytes ?? 0) / Double(size),
            logStoreFilePerRecord: fileSize(storePath) / Double(size),
            sqliteFilePerRecord: fileSize(sqlitePath) / Double(size))
    }

    private func openAndQuery() throws -> ScalingRow {
        let runs = try sideBySide(.openAndQuery).run(
            logStore: { try Self.probeRun(.openLogStore, storePath, size) },
            sqlite: { try Self.probeRun(.openSQLite, sqlitePath, size) })
        return row(.openAndQuery, runs)
    }

    private static func probeRun(_ kind: Probe.Kind, _ path: String, _ size: Int) throws -> CaseRun {
        let (result, seconds) = try Probe.run(kind, path: path, count: size)
        return CaseRun(work: 1, operations: 1, seconds: seconds, digest: result.digest ?? ResultDigest())
    }

    // MARK: - Bulk insert

    private func bulkInsert() throws -> ScalingRow {
        let work = Double(size)
        let runs = try sideBySide(.bulkInsert).run(
            logStore: {
                let path = context.scratch.freshPath("bulk.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model, options: JournalOptions(compaction: .manual))
                defer { store.close() }
                return try CaseRun.timed(work: work, { try PersonModel.insert(people, into: store) },
                                         digest: { try ResultDigest(count: store.newContext().count("Person")) })
            },
            sqlite: {
                let database = try GRDBPeople(path: context.scratch.freshPath("bulk.sqlite"), synchronousFull: true, indexingAge: true)
                defer { database.remove() }
                return try CaseRun.timed(work: work, { try database.insertWithStatement(people) },
                                         digest: { try ResultDigest(count: database.writer.read { db in try GRDBPerson.fetchCount(db) }) })
            })
        return row(.bulkInsert, runs)
    }

    // MARK: - Reads

    /// Distinct keys in a random order: every lookup misses the context's
    /// identity map, as a first touch does.
    private func randomKeys(_ count: Int, seed: UInt64) -> [Int64] {
        var random = SeededRandom(seed: seed)
        var keys = Array(1...Int64(size))
        keys.shuffle(using: &random)
        return Array(keys.prefix(count))
    }

    private func lookups(_ store: Store, _ database: GRDBPeople) throws -> ScalingRow {
        let keys = randomKeys(min(size, context.scaled(full: 100_000, quick: 20_000)), seed: 8_001)
        let ids = keys.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
        let work = Double(keys.count)
        func digest(_ names: [String]) -> ResultDigest {
            var digest = ResultDigest()
            for name in names { digest.add(name) }
            return digest
        }
        let runs = try sideBySide(.lookup).run(
            logStore: {
                let objects = store.newContext()
                return try CaseRun.timed(work: work, operations: work, {
                    var names: [String] = []
                    names.reserveCapacity(ids.count)
                    for id in ids { names.append((try objects.object(with: id) as! BenchPerson).firstName ?? "") }
                    return names
                }, digest: digest)
            },
            sqlite: {
                try CaseRun.timed(work: work, operations: work, {
                    try database.writer.read { db in
                        let statement = try db.cachedStatement(sql: "SELECT firstName FROM person WHERE id = ?")
                        var names: [String] = []
                        names.reserveCapacity(keys.count)
                        for key in keys { names.append(try String.fetchOne(statement, arguments: [key]) ?? "") }
                        return names
                    }
                }, digest: digest)
            })
        return row(.lookup, runs)
    }

    private func rangeFetch(_ store: Store, _ database: GRDBPeople) throws -> ScalingRow {
        let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age BETWEEN {100, 200}"),
                                   sortDescriptors: [SortKey("lastName")])
        let matches = Double(people.count { (100...200).contains($0.age) })
        // The order of ties in lastName is each store's own: compare the
        // names in order and the IDs as a set.
        func digest(_ rows: [(key: Int64, lastName: String)]) -> ResultDigest {
            var digest = ResultDigest()
            for row in rows { digest.add(row.lastName) }
            digest.add(ResultDigest(keySet: rows.map(\.key)))
            return digest
        }
        let runs = try sideBySide(.rangeFetch).run(
            logStore: {
                try CaseRun.repeated(work: matches, for: minimumSample) {
                    let objects = try store.newContext().fetch(request, as: BenchPerson.self)
                    return digest(objects.map { (Int64($0.objectID.key), $0.lastName ?? "") })
                }
            },
            sqlite: {
                try CaseRun.repeated(work: matches, for: minimumSample) {
                    let records = try database.writer.read { db in
                        try GRDBPerson.fetchAll(db.cachedStatement(sql: "SELECT * FROM person WHERE age BETWEEN 100 AND 200 ORDER BY lastName"))
                    }
                    return digest(records.map { ($0.id ?? 0, $0.lastName) })
                }
            })
        return row(.rangeFetch, runs)
    }

    private func scan(_ store: Store, _ database: GRDBPeople) throws -> ScalingRow {
        let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("lastName BEGINSWITH[c] 'sm'"))
        let runs = try sideBySide(.scan).run(
            logStore: {
                try CaseRun.repeated(work: Double(size), for: minimumSample) {
                    ResultDigest(keySet: try store.newContext().fetchIDs(request).map { Int64($0.key) })
                }
            },
            sqlite: {
                try CaseRun.repeated(work: Double(size), for: minimumSample) {
                    // LIKE is case-insensitive for ASCII, as BEGINSWITH[c] is here.
                    ResultDigest(keySet: try database.writer.read { db in
                        try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM person WHERE lastName LIKE 'sm%'"))
                    })
                }
            })
        return row(.scan, runs)
    }

    private func count(_ store: Store, _ database: GRDBPeople) throws -> ScalingRow {
        let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age BETWEEN {100, 200}"))
        let matches = Double(people.count { (100...200).contains($0.age) })
        let runs = try sideBySide(.count).run(
            logStore: {
                try CaseRun.repeated(work: matches, for: minimumSample) { ResultDigest(count: try store.newContext().count(for: request)) }
            },
            sqlite: {
                try CaseRun.repeated(work: matches, for: minimumSample) {
                    ResultDigest(count: try database.writer.read { db in
                        try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM person WHERE age BETWEEN 100 AND 200")) ?? -1
                    })
                }
            })
        return row(.count, runs)
    }

    // MARK: - Updates and deletes

    /// Updates (age = 1000, outside the data's range) or deletes a random
    /// tenth of the records in one save, on fresh copies of both files.
    private func changeTenPercent(_ workload: Workload) throws -> ScalingRow {
        let keys = randomKeys(size / 10, seed: 8_002)
        let work = Double(keys.count)
        let updating = workload == .update
        let runs = try sideBySide(workload).run(
            logStore: {
                let copy = try copied(storePath)
                defer { context.scratch.remove(copy) }
                let store = try Store(path: copy, model: model, options: JournalOptions(compaction: .manual))
                defer { store.close() }
                let objects = store.newContext()
                let ids = keys.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
                return try CaseRun.timed(work: work, {
                    for id in ids {
                        let person = try objects.object(with: id) as! BenchPerson
                        if updating { person.age = 1000 } else { try objects.delete(person) }
                    }
                    try objects.save()
                }, digest: { _ in
                    let fresh = store.newContext()
                    return ResultDigest(count: updating
                        ? try fresh.count(for: FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 1000")))
                        : try fresh.count("Person"))
                })
            },
            sqlite: {
                let copy = try copied(sqlitePath)
                let database = try GRDBPeople(path: copy, synchronousFull: true)
                defer { database.remove() }
                return try CaseRun.timed(work: work, {
                    try database.writer.write { db in
                        let statement = try db.cachedStatement(sql: updating
                            ? "UPDATE person SET age = 1000 WHERE id = ?" : "DELETE FROM person WHERE id = ?")
                        for key in keys { try statement.execute(arguments: [key]) }
                    }
                }, digest: { _ in
                    ResultDigest(count: try database.writer.read { db in
                        try Int.fetchOne(db, sql: updating ? "SELECT COUNT(*) FROM person WHERE age = 1000" : "SELECT COUNT(*) FROM person") ?? -1
                    })
                })
            })
        return row(workload, runs)
    }

    /// A copy of the file at `path`, written back to the disk before the
    /// clock starts so its writeback does not land inside a measurement.
    private func copied(_ path: String) throws -> String {
        let copy = context.scratch.freshPath("copy-" + URL(fileURLWithPath: path).lastPathComponent)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try synchronizeFile(at: copy)
        return copy
    }

    // MARK: - Writes on a live data set

    /// Single-record saves, durable and not, then 4 readers beside a writer,
    /// on one copy of each file that the saves grow.
    private func writes() throws -> [ScalingRow] {
        let storeCopy = try copied(storePath), sqliteCopy = try copied(sqlitePath)
        defer {
            context.scratch.remove(storeCopy)
            SQLiteFiles.remove(sqliteCopy)
        }
        let saves = context.scaled(full: 1_000, quick: 200)
        let newPeople = PersonValues.make(saves, seed: 8_003, ages: 1000)
        var rows: [ScalingRow] = []
        for (workload, durable) in [(Workload.durableSaves, true), (.deferredSaves, false)] {
            let runs = try sideBySide(workload).run(
                logStore: {
                    let store = try Store(path: storeCopy, model: model, options: JournalOptions(durability: durable ? .fsyncEveryCommit : .deferredToOS))
                    defer { store.close() }
                    let objects = store.newContext()
                    return try CaseRun.timed(work: Double(saves), operations: Double(saves), {
                        for values in newPeople { try PersonModel.insert([values], into: objects) }
                    }, digest: { _ in ResultDigest(count: try store.newContext().count("Person")) })
                },
                sqlite: {
                    let database = try GRDBPeople(path: sqliteCopy, synchronousFull: durable)
                    defer { database.close() }
                    return try CaseRun.timed(work: Double(saves), operations: Double(saves), {
                        for values in newPeople { try database.writer.write { db in try GRDBPeople.insert(CollectionOfOne(values), db) } }
                    }, digest: { _ in ResultDigest(count: try database.writer.read { db in try GRDBPerson.fetchCount(db) }) })
                })
            rows.append(row(workload, runs))
        }
        rows += try ConcurrentAccess(people: people, model: model, context: context, size: size)
            .run(storePath: storeCopy, sqlitePath: sqliteCopy, limits: limits, recordBytes: recordBytes)
        return rows
    }
}
