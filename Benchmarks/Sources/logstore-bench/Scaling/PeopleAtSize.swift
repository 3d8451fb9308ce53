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

    /// Lookups per sample, each key once.
    private var lookupCount: Int { min(size, context.scaled(full: 100_000, quick: 20_000)) }

    /// Runs everything and adds the rows to `report`.
    func run(into report: inout ScalingReport) throws {
        defer {
            context.scratch.remove(storePath)
            SQLiteFiles.remove(sqlitePath)
        }
        report.memory.append(try buildDataSets())
        let memories = SQLiteMemory.variants(databaseBytes: Int(report.memory.last!.sqliteFilePerRecord * Double(size)))
        report.rows.append(try openAndQuery(memories))
        report.rows += try coldReads()
        report.rows.append(try bulkInsert())
        do {
            let store = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
            defer { store.close() }
            let keys = PersonQueries.distinctKeys(lookupCount, of: size, seed: PersonQueries.lookupSeed)
            let logStore = try LogStorePersonReads(store, lookupKeys: keys)
            try logStore.warm()
            // One connection per budget, each warmed: SQLite's page cache
            // is per connection, as LogStore's block cache is per store.
            let sqlite = try memories.map { SQLitePersonReads(reader: try $0.openForReading(sqlitePath), keys: keys) }
            defer { for reads in sqlite { try? (reads.reader as? DatabaseQueue)?.close() } }
            for reads in sqlite { try reads.warm() }
            for workload in [Workload.lookup, .rangeFetch, .scan, .count] {
                report.rows.append(try read(workload, logStore, zip(memories, sqlite).map { ($0, $1) }))
            }
        }
        report.rows.append(try changeTenPercent(.update))
        report.rows.append(try changeTenPercent(.delete))
        report.rows += try writes(memories)
    }

    // MARK: - Data sets, memory, open

    /// Builds the two files in child processes, each alone in its process,
    /// so their peak memory is their own.
    private func buildDataSets() throws -> MemoryRow {
        context.log("scaling \(label): building both data sets in child processes")
        let logStoreBuild = try Probe.run(.buildLogStore, path: storePath, count: size)
        let sqliteBuild = try Probe.run(.buildSQLite, path: sqlitePath, count: size)
        let importPath = context.scratch.freshPath("import-\(size).logstore")
        let logStoreImport = try Probe.run(.importLogStore, path: importPath, count: size)
        context.scratch.remove(importPath)
        let logStoreOpen = try Probe.run(.openLogStore, path: storePath, count: size)
        let sqliteOpen = try Probe.run(.openSQLite, path: sqlitePath, count: size)
        func fileSize(_ path: String) -> Double {
            Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
        return MemoryRow(
            size: size,
            logStorePeakInsert: logStoreBuild.result.peakBytes ?? 0, sqlitePeakInsert: sqliteBuild.result.peakBytes ?? 0,
            logStoreSavePeak: logStoreBuild.result.savePeakBytes,
            logStorePeakBatchImport: logStoreImport.result.peakBytes ?? 0, logStoreBatchImportSeconds: logStoreImport.result.seconds ?? 0,
            logStoreResidentPerRecord: Double(logStoreOpen.result.residentBytes ?? 0) / Double(size),
            sqliteResidentPerRecord: Double(sqliteOpen.result.residentBytes ?? 0) / Double(size),
            logStoreFilePerRecord: fileSize(storePath) / Double(size),
            sqliteFilePerRecord: fileSize(sqlitePath) / Double(size),
            logStoreIndexFramePerRecord: Double(try StoreInspector.info(path: storePath).snapshot?.indexRawBytes ?? 0) / Double(size))
    }

    /// A new process opening each file and running its first query, SQLite
    /// with each budget set (a new process has nothing to warm); each
    /// engine's resident memory is the last run's.
    private func openAndQuery(_ memories: [SQLiteMemory]) throws -> ScalingRow {
        var resident: [String: ResidentMemory] = [:]
        func probe(_ kind: Probe.Kind, _ path: String, _ memory: SQLiteMemory?) throws -> CaseRun {
            let (result, seconds) = try Probe.run(kind, path: path, count: size, memory.map { [$0.argument] } ?? [])
            resident[memory?.argument ?? "logstore"] = ResidentMemory(total: result.totalResidentBytes ?? 0, added: result.residentBytes ?? 0)
            return CaseRun(work: 1, operations: 1, seconds: seconds, digest: result.digest ?? ResultDigest())
        }
        let side = sideBySide(.openAndQuery)
        let runs = try side.run(
            logStore: { try probe(.openLogStore, storePath, nil) },
            sqlite: memories.map { memory in (memory, { try probe(.openSQLite, sqlitePath, memory) }) })
        return side.row(runs, limits: limits, recordBytes: recordBytes) { resident[$0?.argument ?? "logstore"] }
    }

    /// Open + first query, and 1,000 lookups right after open, each in a
    /// new process after the kernel's page cache is dropped: what a user
    /// waits for after a reboot. SQLite at its defaults (nothing is warm).
    private func coldReads() throws -> [ScalingRow] {
        guard PageCache.drop() else {
            context.log("scaling \(label): cannot drop the page cache (not root?); no cold runs")
            return []
        }
        func cold(_ kind: Probe.Kind, _ path: String, lookups: Bool) throws -> CaseRun {
            guard PageCache.drop() else { throw BenchmarkError("dropping the page cache failed part way") }
            let (result, seconds) = try Probe.run(kind, path: path, count: size)
            let work = lookups ? Double(Probe.coldLookups) : 1
            return CaseRun(work: work, operations: work, seconds: lookups ? result.seconds ?? 0 : seconds, digest: result.digest ?? ResultDigest())
        }
        let open = try sideBySide(.openAndQueryCold).run(
            logStore: { try cold(.openLogStore, storePath, lookups: false) },
            sqlite: { try cold(.openSQLite, sqlitePath, lookups: false) })
        let lookups = try sideBySide(.lookupCold).run(
            logStore: { try cold(.lookupsAfterOpenLogStore, storePath, lookups: true) },
            sqlite: { try cold(.lookupsAfterOpenSQLite, sqlitePath, lookups: true) })
        return [row(.openAndQueryCold, open), row(.lookupCold, lookups)]
    }

    // MARK: - Bulk insert

    /// One save of every person (one per million) into a new store under
    /// the default compaction policy, timed until the compaction it starts
    /// has finished as well; SQLite checkpoints inside its commit.
    private func bulkInsert() throws -> ScalingRow {
        let work = Double(size)
        let runs = try sideBySide(.bulkInsert).run(
            logStore: {
                let path = context.scratch.freshPath("bulk.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model)
                defer { store.close() }
                return try CaseRun.timedUntilQuiescent(store, work: work, { try PersonModel.insert(people, into: store) },
                                                       digest: { try PersonSample.inserted(store) })
            },
            sqlite: {
                let database = try GRDBPeople(path: context.scratch.freshPath("bulk.sqlite"), synchronousFull: true, indexingAge: true)
                defer { database.remove() }
                return try CaseRun.timed(work: work, { try database.insertWithStatement(people) },
                                         digest: { try database.writer.read(PersonSample.inserted) })
            })
        return row(.bulkInsert, runs)
    }

    // MARK: - Reads

    /// A read workload on LogStore and on SQLite with each memory budget,
    /// every case warmed before; only the query is timed, its results freed
    /// on the clock (LogStore's context within it) and digested off it.
    private func read(_ workload: Workload, _ logStore: LogStorePersonReads, _ sqlite: [(SQLiteMemory, SQLitePersonReads)]) throws -> ScalingRow {
        let side = sideBySide(workload)
        let runs = try side.run(
            logStore: { try timedRead(workload, logStore) },
            sqlite: sqlite.map { memory, reads in (memory, { try timedRead(workload, reads) }) })
        context.log("scaling \(label): \(workload.rawValue), resident memory of each engine in a child process")
        var row = try side.row(runs, limits: limits, recordBytes: recordBytes) { memory in try resident(workload, memory) }
        if workload == .rangeFetch, let defaults = sqlite.first?.1 {
            row.sqliteVariants.append(try codableRangeFetch(defaults, against: runs.logStore))
        }
        return row
    }

    /// The range fetch through GRDB's Codable record (GRDBPerson) on SQLite
    /// at its defaults, after the other cases, each run's answer compared
    /// with LogStore's: what an app that does not hand-write init(row:) gets.
    private func codableRangeFetch(_ reads: SQLitePersonReads, against logStore: [CaseRun]) throws -> SQLiteVariantFigures {
        context.log("scaling \(label): range-fetch, GRDB's Codable records")
        let matches = Double(people.count { (100...200).contains($0.age) })
        let runs = try logStore.map { logStoreRun in
            let run = try CaseRun.repeated(work: matches, for: minimumSample, reads.rangeFetchCodable, digest: PersonQueries.digest(sortedByLastName:))
            guard run.digest == logStoreRun.digest else {
                throw BenchmarkError("range-fetch at \(size.formatted()) records: LogStore and SQLite's Codable records disagree (LogStore: \(logStoreRun.digest); SQLite: \(run.digest))")
            }
            return run
        }
        let limit = Workload.rangeFetch.limit(limits, recordBytes: recordBytes).rate
        let figures = StoreFigures(runs, limit: limit)
        let logStoreMedian = StoreFigures(logStore, limit: limit).median
        return SQLiteVariantFigures(memory: SQLiteVariantFigures.codableKind, kind: SQLiteVariantFigures.codableKind,
                                    figures: figures, ratio: logStoreMedian / figures.median, resident: nil)
    }

    /// One sample of `workload`: its query repeated for `minimumSample`,
    /// only the query on the clock.
    private func timedRead(_ workload: Workload, _ reads: some PersonReading) throws -> CaseRun {
        let matches = Double(people.count { (100...200).contains($0.age) })
        switch workload {
        case .lookup:
            let work = Double(lookupCount)
            var run = try CaseRun.repeated(work: work, for: minimumSample, reads.lookup, digest: PersonQueries.digest(names:))
            run.operations *= work
            return run
        case .rangeFetch: return try CaseRun.repeated(work: matches, for: minimumSample, reads.rangeFetch, digest: PersonQueries.digest(sortedByLastName:))
        case .scan: return try CaseRun.repeated(work: Double(size), for: minimumSample, reads.scan, digest: { ResultDigest(keySet: $0) })
        default: return try CaseRun.repeated(work: matches, for: minimumSample, reads.count, digest: { ResultDigest(count: $0) })
        }
    }

    /// Resident memory of a child that opens the store (nil) or the database
    /// with `memory`, warms it and runs `workload` once.
    private func resident(_ workload: Workload, _ memory: SQLiteMemory?) throws -> ResidentMemory {
        var arguments = [workload.rawValue, String(lookupCount)]
        if let memory { arguments.append(memory.argument) }
        let result = try Probe.run(memory == nil ? .readLogStore : .readSQLite, path: memory == nil ? storePath : sqlitePath,
                                   count: size, arguments).result
        return ResidentMemory(total: result.totalResidentBytes ?? 0, added: result.residentBytes ?? 0)
    }

    // MARK: - Updates and deletes

    /// Updates (age = 1000, outside the data's range) or deletes a random
    /// tenth of the records in one durable save, on fresh copies of both
    /// files; LogStore's clock runs until a compaction the save started has
    /// finished, and its context is freed within it.
    private func changeTenPercent(_ workload: Workload) throws -> ScalingRow {
        let keys = PersonQueries.distinctKeys(size / 10, of: size, seed: 8_002)
        let work = Double(keys.count)
        let updating = workload == .update
        let runs = try sideBySide(workload).run(
            logStore: {
                let copy = try copied(storePath)
                defer { context.scratch.remove(copy) }
                let store = try Store(path: copy, model: model)
                defer { store.close() }
                let ids = keys.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
                return try CaseRun.timedUntilQuiescent(store, work: work, {
                    let objects = store.newContext()
                    for id in ids {
                        let person = try objects.object(with: id) as! BenchPerson
                        if updating { person.age = 1000 } else { try objects.delete(person) }
                    }
                    try objects.save()
                }, digest: { _ in try PersonSample.changed(store, updating: updating) })
            },
            sqlite: {
                let copy = try copied(sqlitePath)
                let database = try GRDBPeople(path: copy, synchronousFull: true)
                defer { database.remove() }
                return try CaseRun.timed(work: work, {
                    try database.writer.write { db in
                        if updating {
                            let statement = try db.cachedStatement(sql: "UPDATE person SET age = ? WHERE id = ?")
                            for key in keys { try statement.execute(arguments: [1000, key]) }
                        } else {
                            let statement = try db.cachedStatement(sql: "DELETE FROM person WHERE id = ?")
                            for key in keys { try statement.execute(arguments: [key]) }
                        }
                    }
                }, digest: { _ in try database.writer.read { db in try PersonSample.changed(db, updating: updating) } })
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
    /// on one copy of each file that the saves grow. LogStore runs under the
    /// default compaction policy, its clock going on until a compaction the
    /// saves started has finished ("quiescent"); SQLite checkpoints inside
    /// its commits. The people saved are aged 1000 and over, so the rounds'
    /// saves can be read back and compared.
    private func writes(_ memories: [SQLiteMemory]) throws -> [ScalingRow] {
        let storeCopy = try copied(storePath), sqliteCopy = try copied(sqlitePath)
        defer {
            context.scratch.remove(storeCopy)
            SQLiteFiles.remove(sqliteCopy)
        }
        let saves = context.scaled(full: 1_000, quick: 200)
        let newPeople = PersonValues.make(saves, seed: 8_003, ages: 1000).map { person in
            var person = person
            person.age += PersonSample.savedAge
            return person
        }
        var rows: [ScalingRow] = []
        for (workload, durable) in [(Workload.durableSaves, true), (.deferredSaves, false)] {
            // One connection for every round, as a running app keeps it: its
            // write-ahead log grows in the first round and is then reused
            // from its start after each checkpoint, where a commit's
            // fdatasync need not record a new file size. A connection per
            // round would start every round with a fresh log.
            let database = try GRDBPeople(path: sqliteCopy, synchronousFull: durable)
            defer { database.close() }
            let runs = try sideBySide(workload).run(
                logStore: {
                    let store = try Store(path: storeCopy, model: model, options: JournalOptions(durability: durable ? .fsyncEveryCommit : .deferredToOS))
                    defer { store.close() }
                    var latencies: [Double] = []
                    latencies.reserveCapacity(saves)
                    var run = try CaseRun.timedUntilQuiescent(store, work: Double(saves), operations: Double(saves), {
                        let objects = store.newContext()
                        for values in newPeople { latencies.append(try Stopwatch.seconds { try PersonModel.insert([values], into: objects) }) }
                    }, digest: { _ in try PersonSample.saved(store) })
                    run.latencies = latencies
                    return run
                },
                sqlite: {
                    var latencies: [Double] = []
                    latencies.reserveCapacity(saves)
                    var run = try CaseRun.timed(work: Double(saves), operations: Double(saves), {
                        for values in newPeople {
                            latencies.append(try Stopwatch.seconds { try database.writer.write { db in try GRDBPeople.insert(CollectionOfOne(values), db) } })
                        }
                    }, digest: { _ in try database.writer.read(PersonSample.saved) })
                    run.latencies = latencies
                    return run
                })
            rows.append(row(workload, runs))
        }
        rows += try ConcurrentAccess(people: people, model: model, context: context, size: size)
            .run(storePath: storeCopy, sqlitePath: sqliteCopy, memories: memories.filter { if case .mmap = $0 { false } else { true } },
                 limits: limits, recordBytes: recordBytes)
        return rows
    }
}
