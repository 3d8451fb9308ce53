// Benchmark 8: snapshots and compaction. Opening 1,000,000 live records from
// a snapshot against replaying their journal and against GRDB's open and
// first query (warm, and cold in a fresh process); a read after open beside
// SQLite at each memory budget; open time as history grows, with and without automatic
// compaction; compaction throughput; space amplification; save latency
// during a background compaction.

import Foundation
import GRDB
import Synchronization
import LogStore

enum SnapshotThroughput: BenchmarkGroup {
    static let name = "snapshots"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "8. Snapshots and compaction: open time, history, compaction throughput, space, saves during compaction")
        let count = context.scaled(full: 1_000_000, quick: 50_000)
        let people = PersonValues.make(count, seed: 8, ages: 1000)
        let model = try PersonModel.make(indexingAge: true)
        context.log("snapshots: \(count.formatted()) people in both engines")
        let data = try PeopleDataSet(people, model: model, named: "snapshot", context)
        defer { data.remove(context) }
        let journalPath = data.storePath
        let snapshotPath = context.scratch.freshPath("snapshot-compacted.logstore")
        defer { context.scratch.remove(snapshotPath) }

        // 1. Compaction throughput: the journal of the data set into a
        //    snapshot, a fresh copy each round; the last one is kept.
        context.log("snapshots: compacting \(count.formatted()) records, \(context.repetitions) rounds")
        let manual = JournalOptions(compaction: .manual)
        var compactions: [CompactionReport] = []
        for _ in 0..<context.repetitions {
            context.scratch.remove(snapshotPath)
            try FileManager.default.copyItem(atPath: journalPath, toPath: snapshotPath)
            let store = try Store(path: snapshotPath, model: model, options: manual)
            defer { store.close() }
            let compaction = try store.compact()
            guard compaction.records == count else { throw BenchmarkError("the compaction wrote \(compaction.records) records, not \(count)") }
            compactions.append(compaction)
        }
        let rates = Rates(samples: compactions.map { Double($0.rawBytes) / $0.duration.seconds })
        let compaction = compactions.sorted { $0.duration < $1.duration }[compactions.count / 2]
        report.add("compaction, raw record data", rates, scale: 1e-6, unit: "MB/s", target: .atLeast(100))
        report.add("compaction, records", Rates(samples: compactions.map { Double($0.records) / $0.duration.seconds }), unit: "records/s")
        report.fact("compaction (the median round)", "\(compaction.records) records, \(compaction.rawBytes) raw bytes in \(String(format: "%.3f", compaction.duration.seconds)) s; file \(compaction.bytesBefore) → \(compaction.bytesAfter) bytes")

        // 2. Open: snapshot against replay of the same records, and GRDB
        //    at each memory budget (set as it opens), both files indexed on age.
        try data.database.writer.write { db in try db.execute(sql: "CREATE INDEX person_age ON person(age)") }
        _ = try data.database.fileSize()
        let aged500 = ResultDigest(keySet: people.indices.filter { people[$0].age == 500 }.map { Int64($0 + 1) })
        let memories = SQLiteMemory.variants(databaseBytes: try FileManager.default.attributesOfItem(atPath: data.sqlitePath)[.size] as? Int ?? 0)
        context.log("snapshots: opening \(count.formatted()) records, \(context.repetitions) rounds")
        func openCase(_ path: String) -> () throws -> Sample {
            {
                var opened: Store?
                var found = 0
                let sample = try Sample.timing(work: 1) {
                    let store = try Store(path: path, model: model, options: manual)
                    opened = store
                    found = try store.newContext().count(for: FetchRequest(entityName: "Person"))
                }
                guard let store = opened else { throw BenchmarkError("\(path) did not open") }
                defer { store.close() }
                guard found == count else { throw BenchmarkError("\(path) opened with \(found) people, not \(count)") }
                try checkAged500("LogStore", try store.newContext().fetchIDs(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 500"))).map { Int64($0.key) }, aged500)
                return sample
            }
        }
        func sqliteOpenCase(_ memory: SQLiteMemory) -> () throws -> Sample {
            {
                var configuration = Configuration()
                memory.apply(to: &configuration)
                var queue: DatabaseQueue?
                var found = 0
                let sample = try Sample.timing(work: 1) {
                    let opened = try DatabaseQueue(path: data.sqlitePath, configuration: configuration)
                    found = try opened.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM person") } ?? 0
                    queue = opened
                }
                defer { try? queue?.close() }
                guard found == count else { throw BenchmarkError("SQLite opened with \(found) people, not \(count)") }
                try checkAged500("SQLite", try queue?.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM person WHERE age = 500") } ?? [], aged500)
                return sample
            }
        }
        let openRates = try measureInRounds(repetitions: context.repetitions, [openCase(snapshotPath), openCase(journalPath)] + memories.map(sqliteOpenCase))
        let fromSnapshot = report.add("open from a snapshot + count (\(count.formatted()) records)", value: 1 / openRates[0].median * 1e3, unit: "ms", target: .atMost(500))
        let fromJournal = report.add("open by replaying the journal + count", value: 1 / openRates[1].median * 1e3, unit: "ms")
        report.compare("replay time ÷ snapshot open time", fromJournal, over: fromSnapshot, target: .atLeast(10))
        for (memory, rates) in zip(memories, openRates.dropFirst(2)) {
            let grdbOpen = report.add("GRDB open + SELECT COUNT(*), \(memory.label)", value: 1 / rates.median * 1e3, unit: "ms")
            report.compare("GRDB open time ÷ snapshot open time (above 1: LogStore opens faster), \(memory.label)", grdbOpen, over: fromSnapshot)
        }
        try coldOpens(snapshotPath: snapshotPath, journalPath: journalPath, sqlitePath: data.sqlitePath, count: count, aged500, context, into: &report)
        try readsAfterOpen(people, snapshotPath: snapshotPath, sqlitePath: data.sqlitePath, model: model, context, into: &report)

        // 3. Save latency during a background compaction, fsync every save.
        context.log("snapshots: save latency with and without a compaction under way")
        do {
            let store = try Store(path: snapshotPath, model: model, options: manual)
            defer { store.close() }
            let saves = context.scaled(full: 400, quick: 100)
            let quiet = try saveLatencies(store, count: saves)
            let compacting = Atomic<Bool>(true)
            let compactor = Thread {
                _ = try? store.compact()
                compacting.store(false, ordering: .relaxed)
            }
            compactor.start()
            var busy: [Double] = []
            while compacting.load(ordering: .relaxed) { busy += try saveLatencies(store, count: 10) }
            guard busy.count >= 10 else { throw BenchmarkError("no save ran during the compaction") }
            for (label, latencies) in [("without compaction", quiet), ("during a background compaction", busy)] {
                let sorted = latencies.sorted()
                report.add("save latency p50, \(label)", value: sorted[sorted.count / 2] * 1e3, unit: "ms")
                report.add("save latency p99, \(label)", value: sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1e3, unit: "ms")
            }
            report.fact("saves during the compaction", "\(busy.count), each an update of one record with fsync")
        }

        // 4. Open time and space as history grows: 1,000 live records.
        let histories = context.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000]
        for saves in histories {
            for policy in [CompactionPolicy.manual, .automatic()] {
                let automatic = policy != .manual
                context.log("snapshots: 1,000 records after \(saves.formatted()) saves, \(automatic ? "automatic compaction" : "no compaction")")
                let path = context.scratch.freshPath("history-\(saves)-\(automatic).logstore")
                defer { context.scratch.remove(path) }
                try buildHistory(path, saves: saves, model: model, policy: policy)
                let rates = try measureInRounds(repetitions: context.repetitions, [openCase1000(path, model)])
                report.add("open, 1,000 live records after \(saves.formatted()) saves, \(automatic ? "automatic compaction" : "no compaction")", value: 1 / rates[0].median * 1e3, unit: "ms")
                if automatic {
                    let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
                    let live = try liveRawBytes(path, model: model)
                    report.add("space amplification after \(saves.formatted()) saves (file ÷ live raw data)", value: Double(size) / Double(live), unit: "×", target: saves == histories.last ? .atMost(2) : nil)
                }
            }
        }
        report.note("open times are the median of \(context.repetitions) opens with a warm page cache; each open checks every snapshot block's checksum and decodes none")
        report.note("space amplification at steady state is the last history's figure under the default policy; the target is at most 2")
        return report
    }

    /// Throws unless `keys` are the IDs of the people aged 500.
    private static func checkAged500(_ engine: String, _ keys: [Int64], _ expected: ResultDigest) throws {
        let found = ResultDigest(keySet: keys)
        guard found == expected else { throw BenchmarkError("\(engine) found other people aged 500 (\(found)) than were written (\(expected))") }
    }

    /// Open plus first query (the IDs of people aged 500) in a fresh
    /// process with the page cache dropped first, through the scaling
    /// runs' probes; each answer checked, each child's added resident
    /// memory reported.
    private static func coldOpens(snapshotPath: String, journalPath: String, sqlitePath: String, count: Int, _ aged500: ResultDigest,
                                  _ context: BenchmarkContext, into report: inout GroupReport) throws {
        guard PageCache.drop() else {
            report.note("cold opens not measured: /proc/sys/vm/drop_caches is not writable (it needs root)")
            return
        }
        context.log("snapshots: cold opens in fresh processes, \(context.repetitions) rounds")
        let cases: [(String, Probe.Kind, String)] = [
            ("LogStore, from a snapshot", .openLogStore, snapshotPath),
            ("LogStore, replaying the journal", .openLogStore, journalPath),
            ("GRDB, SQLite defaults", .openSQLite, sqlitePath),
        ]
        var resident = Array(repeating: [Double](), count: cases.count)
        let rates = try measureInRounds(repetitions: context.repetitions, [{ try Probe.startSample(count: 1) }] + cases.enumerated().map { index, probe in
            {
                _ = PageCache.drop()
                let (result, seconds) = try Probe.run(probe.1, path: probe.2, count: count)
                guard result.digest == aged500 else { throw BenchmarkError("\(probe.0) answered the cold open's query with \(result.digest.map { "\($0)" } ?? "nothing"), expected \(aged500)") }
                resident[index].append(Double(result.residentBytes ?? 0))
                return Sample(work: 1, seconds: seconds)
            }
        })
        report.add("a process of this harness starting and exiting, warm page cache (the floor under a cold open)", value: 1e3 / rates[0].median, unit: "ms")
        let logStore = report.add("cold open + IDs aged 500 in a fresh process, \(cases[0].0)", value: 1e3 / rates[1].median, unit: "ms")
        report.add("cold open + IDs aged 500 in a fresh process, \(cases[1].0)", value: 1e3 / rates[2].median, unit: "ms")
        let sqlite = report.add("cold open + ids aged 500 in a fresh process, \(cases[2].0)", value: 1e3 / rates[3].median, unit: "ms")
        report.compare("GRDB cold open time ÷ LogStore snapshot cold open time (above 1: LogStore opens faster)", sqlite, over: logStore)
        for (probe, bytes) in zip(cases, resident) {
            report.add("resident memory the cold open added, \(probe.0)", value: Rates(samples: bytes).median / 1e6, unit: "MB")
        }
        report.note("cold opens: each a child process (logstore-bench --probe) started after dropping the page cache, timed from start to exit, so each figure includes the process start measured beside them; the query is the IDs of the people aged 500, compared with the written ones every round; resident memory is the child's VmRSS after the query minus before the open")
    }

    /// A read after open: the people aged 500 as objects, from the store
    /// opened on its snapshot (through the block cache, warm after a first
    /// pass) and from SQLite at each memory budget, warmed; each answer
    /// checked; each engine's memory after.
    private static func readsAfterOpen(_ people: [PersonValues], snapshotPath: String, sqlitePath: String, model: Model,
                                       _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let expected = people.indices.filter { people[$0].age == 500 }.map { "\($0 + 1) \(people[$0].lastName) \(people[$0].orderingValue)" }
        let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 500"))
        let sql = "SELECT * FROM person WHERE age = 500"
        let readers = try SQLiteReaders(path: sqlitePath)
        defer { readers.close() }
        let store = try Store(path: snapshotPath, model: model, options: JournalOptions(access: .readOnly))
        defer { store.close() }
        func logStoreRead(_ store: Store) throws -> [String] {
            let objects = store.newContext()
            return try withExtendedLifetime(objects) { try objects.fetch(request, as: BenchPerson.self).map { "\($0.key) \($0.lastName ?? "") \($0.orderingValue)" } }
        }
        func sqliteRead(_ database: GRDBPeople) throws -> [String] {
            try database.writer.read { db in try GRDBPersonRow.fetchAll(db.cachedStatement(sql: sql)) }.map { "\($0.key) \($0.lastName) \($0.orderingValue)" }
        }
        func sample(_ engine: String, _ read: () throws -> [String]) throws -> Sample {
            var found: [String] = []
            let sample = try Stopwatch.repeatFor(context.scaled(full: .milliseconds(300), quick: .milliseconds(100))) { found = try read() }
            guard found.sorted() == expected.sorted() else { throw BenchmarkError("\(engine) read \(found.count) people aged 500 after open, not the \(expected.count) written") }
            return sample
        }
        keep(try logStoreRead(store))
        context.log("snapshots: reads after open, \(1 + readers.variants.count) cases")
        let rates = try measureInRounds(repetitions: context.repetitions, [{ try sample("LogStore", { try logStoreRead(store) }) }] + readers.variants.map { memory, database in
            { try sample(memory.label, { try sqliteRead(database) }) }
        })
        let logStore = report.add("after open: people aged 500 as objects (\(expected.count)), LogStore from its snapshot, warm block cache", rates[0], unit: "fetches/s")
        for (index, (memory, _)) in readers.variants.enumerated() {
            let grdb = report.add("after open: SELECT * WHERE age = 500, init(row:) records, cached statement, \(memory.label), warmed", rates[1 + index], unit: "fetches/s")
            report.compare("LogStore ÷ GRDB, people aged 500 after open, \(memory.label)", logStore, over: grdb)
        }
        try EngineMemory.measure(open: { try Store(path: snapshotPath, model: model, options: JournalOptions(access: .readOnly)) },
                                 workload: { keep(try logStoreRead($0)) }, close: { $0.close() })
            .add(to: &report, engine: "LogStore (snapshot, open read-only)", after: "the read after open")
        for (memory, added) in try readers.memory({ keep(try sqliteRead($0)) }) {
            added.add(to: &report, engine: "\(memory.label) (open, warmed)", after: "the read after open")
        }
        report.note(EngineMemory.note)
    }

    /// Opens a store of 1,000 people and counts them.
    private static func openCase1000(_ path: String, _ model: Model) -> () throws -> Sample {
        {
            try Sample.timing(work: 1) {
                let store = try Store(path: path, model: model, options: JournalOptions(compaction: .manual))
                defer { store.close() }
                guard try store.newContext().count(for: FetchRequest(entityName: "Person")) == 1_000 else { throw BenchmarkError("\(path) lost people") }
            }
        }
    }

    /// 1,000 people, then `saves` saves each updating one of them.
    private static func buildHistory(_ path: String, saves: Int, model: Model, policy: CompactionPolicy) throws {
        let store = try Store(path: path, model: model, options: JournalOptions(durability: .deferredToOS, compaction: policy))
        defer { store.close() }
        let context = store.newContext()
        try PersonModel.insert(PersonValues.make(1_000, seed: 9), into: context)
        let people = try context.fetchAll(BenchPerson.self)
        for save in 1..<max(saves, 2) {
            let person = people[save % people.count]
            person.age = Int64(save % 100)
            person.orderingValue = Double(save)
            try context.save()
        }
    }

    /// The raw size of a store's live records: compacts a copy and reads it.
    private static func liveRawBytes(_ path: String, model: Model) throws -> UInt64 {
        let copy = path + ".live"
        defer { unlink(copy) }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let store = try Store(path: copy, model: model, options: JournalOptions(compaction: .manual))
        defer { store.close() }
        return try store.compact().rawBytes
    }

    /// The seconds each of `count` saves took, each updating one person, fsync every save.
    private static func saveLatencies(_ store: Store, count: Int) throws -> [Double] {
        let context = store.newContext()
        let request = FetchRequest(entityName: "Person", fetchLimit: 50)
        let people = try context.fetch(request, as: BenchPerson.self)
        var latencies: [Double] = []
        for save in 0..<count {
            people[save % people.count].orderingValue = Double(save)
            latencies.append(try Stopwatch.seconds { try context.save() })
        }
        return latencies
    }
}
