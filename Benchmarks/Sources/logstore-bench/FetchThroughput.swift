// Benchmark 7: fetches against GRDB on SQLite with an index on age, same
// records, same run: an indexed range sorted by another key, an indexed
// equality, a full scan, a count, a sorted read with a limit, and parsing.

import Foundation
import GRDB
import LogStore

/// Fetch requests through LogStore and the same queries through GRDB.
enum FetchThroughput: BenchmarkGroup {
    static let name = "fetches"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "7. Fetches: predicates, indexes and sorting against GRDB 7.10.0 on SQLite (WAL), index on age")
        let count = context.scaled(full: 1_000_000, quick: 20_000)
        // Ages uniform in 0..<1000; a few last names start with "sm" in some case.
        let people = PersonValues.make(count, seed: 7, ages: 1000, moreLastNames: ["Smith", "smalley", "SMYTHE"])
        let model = try PersonModel.make(indexingAge: true)
        context.log("fetches: a data set of \(count.formatted()) people in both engines")
        let data = try PeopleDataSet(people, model: model, named: "fetch", context)
        defer { data.remove(context) }
        // The same index as LogStore's model, then a checkpoint: the readers' budgets cover the whole file.
        try data.database.writer.write { db in try db.execute(sql: "CREATE INDEX person_age ON person(age)") }
        _ = try data.database.fileSize()
        let readers = try SQLiteReaders(path: data.sqlitePath)
        defer { readers.close() }
        let store = try Store(path: data.storePath, model: model, options: JournalOptions(access: .readOnly))
        defer { store.close() }
        let fetches = try Fetches(people: people, store: store, repeatFor: context.scaled(full: .milliseconds(300), quick: .milliseconds(100)))
        let repetitions = context.repetitions
        let variants = readers.variants

        // 1. An indexed range sorted by another key, as objects and as IDs.
        context.log("fetches: age 100 to 200 sorted by lastName")
        let rangeRates = try measureInRounds(repetitions: repetitions, [
            { try fetches.once(.range, "LogStore objects") { try fetches.logStoreObjects(fetches.sorted) } },
            { try fetches.once(.range, "LogStore IDs") { try fetches.logStoreIDs(fetches.sorted) } },
        ] + variants.flatMap { memory, database in [
            { try fetches.once(.range, memory.label) { try Fetches.records(GRDBPerson.self, database, "SELECT * \(Fetches.rangeSQL) ORDER BY lastName") } },
            { try fetches.once(.range, memory.label) { try Fetches.records(GRDBPersonRow.self, database, "SELECT * \(Fetches.rangeSQL) ORDER BY lastName") } },
            { try fetches.once(.range, memory.label) { try fetches.ids(database, "SELECT id \(Fetches.rangeSQL) ORDER BY lastName") } },
        ] })
        let expected = fetches.expectedCount(.range)
        let objects = report.add("LogStore fetch, objects (\(expected.formatted()) of \(count.formatted()))", rangeRates[0], unit: "fetches/s")
        let ids = report.add("LogStore fetchIDs", rangeRates[1], unit: "fetches/s")
        for (variant, (memory, _)) in variants.enumerated() {
            let base = 2 + variant * 3
            let target: Target? = memory == .defaults ? .atLeast(2) : nil
            let records = report.add("GRDB fetchAll Codable records, cached statement, \(memory.label)", rangeRates[base], unit: "fetches/s")
            let rows = report.add("GRDB fetchAll init(row:) records, cached statement, \(memory.label)", rangeRates[base + 1], unit: "fetches/s")
            let rowIDs = report.add("GRDB fetchAll ids, cached statement, \(memory.label)", rangeRates[base + 2], unit: "fetches/s")
            report.compare("LogStore objects ÷ GRDB Codable records, age 100 to 200 by lastName, \(memory.label)", objects, over: records, target: target)
            report.compare("LogStore objects ÷ GRDB init(row:) records, age 100 to 200 by lastName, \(memory.label)", objects, over: rows)
            report.compare("LogStore IDs ÷ GRDB ids, age 100 to 200 by lastName, \(memory.label)", ids, over: rowIDs, target: target)
        }

        // 2. Indexed equality, IDs.
        context.log("fetches: age == 500")
        try compareRepeated(.equal, "SELECT id FROM person WHERE age = 500", "LogStore fetchIDs age == 500 (\(fetches.expectedCount(.equal)) rows)", "GRDB SELECT id WHERE age = 500", "LogStore ÷ GRDB, age == 500 as IDs", target: 3, fetches, variants, repetitions, &report) {
            try fetches.logStoreIDs(fetches.equal)
        }

        // 3. A full scan with an unindexed string predicate; LIKE is
        //    case-insensitive for ASCII, as BEGINSWITH[c] is here.
        context.log("fetches: lastName BEGINSWITH[c] 'sm'")
        let scanRates = try measureInRounds(repetitions: repetitions, [
            { try fetches.once(.scan, "LogStore", work: count) { try fetches.logStoreIDs(fetches.scan) } },
        ] + variants.map { memory, database in
            { try fetches.once(.scan, memory.label, work: count) { try fetches.ids(database, "SELECT id FROM person WHERE lastName LIKE 'sm%'") } }
        })
        let scanStore = report.add("LogStore full scan, lastName BEGINSWITH[c] 'sm'", scanRates[0], unit: "records scanned/s")
        for (variant, (memory, _)) in variants.enumerated() {
            let scanSQL = report.add("SQLite full scan, lastName LIKE 'sm%', \(memory.label)", scanRates[1 + variant], unit: "records scanned/s")
            report.compare("LogStore ÷ SQLite, full scan, \(memory.label)", scanStore, over: scanSQL, target: memory == .defaults ? .atLeast(1) : nil)
        }

        // 4. Count on the indexed attribute.
        context.log("fetches: count of age 100 to 200")
        try compareRepeated(.count, "SELECT COUNT(*) \(Fetches.rangeSQL)", "LogStore count(for:) age 100 to 200", "GRDB SELECT COUNT(*)", "LogStore ÷ GRDB, count on the indexed attribute", target: 1, fetches, variants, repetitions, &report) {
            .count(try store.newContext().count(for: fetches.counted))
        }

        // 5. Sorted by the indexed attribute, limit 20.
        context.log("fetches: sorted by age, limit 20")
        let topSQL = "SELECT * FROM person ORDER BY age DESC LIMIT 20"
        let topRates = try measureInRounds(repetitions: repetitions, [
            { try fetches.repeated(.top, "LogStore") { try fetches.logStoreObjects(fetches.top) } },
        ] + variants.flatMap { memory, database in [
            { try fetches.repeated(.top, memory.label) { try Fetches.records(GRDBPerson.self, database, topSQL) } },
            { try fetches.repeated(.top, memory.label) { try Fetches.records(GRDBPersonRow.self, database, topSQL) } },
        ] })
        let topStore = report.add("LogStore sorted by age, limit 20", value: 1000 / topRates[0].median, unit: "ms per fetch", target: .atMost(1))
        for (variant, (memory, _)) in variants.enumerated() {
            for (offset, style) in ["Codable", "init(row:)"].enumerated() {
                let figure = report.add("GRDB ORDER BY age DESC LIMIT 20, \(style) records, \(memory.label)", value: 1000 / topRates[1 + variant * 2 + offset].median, unit: "ms per fetch")
                report.compare("GRDB time ÷ LogStore time, sorted with limit, \(style), \(memory.label)", figure, over: topStore)
            }
        }

        // 6. Parsing.
        context.log("fetches: parsing format strings")
        let parseRates = try measureInRounds(repetitions: repetitions, [
            {
                Stopwatch.repeatFor(.milliseconds(300)) {
                    keep(try? ObjectPredicate("(age >= %d) AND (age <= %d) AND lastName BEGINSWITH[c] %@ OR NOT (firstName IN {'Ada', 'Grace'})", 100, 200, "sm"))
                }
            },
        ])
        report.add("predicate format strings parsed", parseRates[0], unit: "parses/s")

        // Memory after one pass of every fetch.
        let logStoreMemory = try EngineMemory.measure(
            open: { try Store(path: data.storePath, model: model, options: JournalOptions(access: .readOnly)) },
            workload: { opened in
                let objects = opened.newContext()
                for request in [fetches.sorted, fetches.equal, fetches.scan, fetches.top] { keep(try objects.fetch(request)) }
            },
            close: { $0.close() })
        logStoreMemory.add(to: &report, engine: "LogStore (open read-only)", after: "one pass of the fetches")
        for (memory, added) in try readers.memory({ database in
            for sql in ["SELECT * \(Fetches.rangeSQL) ORDER BY lastName", "SELECT * FROM person WHERE age = 500", "SELECT * FROM person WHERE lastName LIKE 'sm%'", topSQL] {
                keep(try Fetches.records(GRDBPerson.self, database, sql))
            }
        }) {
            added.add(to: &report, engine: "\(memory.label) (open, warmed)", after: "one pass of the fetches")
        }

        report.note("the range matches \(expected.formatted()) of \(count.formatted()) people (ages uniform in 0..<1000); LogStore fetches in a fresh context each time, loading every object's values (fetchBatchSize 0); GRDB decodes Codable records or hand-written init(row:) records, or reads ids, through cached statements; both read warm data")
        report.note("every fetch's answer is checked after the clock stops, every round: the range's last names in order and its people's IDs and values as a set (ties in lastName come in each engine's own order), the other results' IDs as a set, the count, and the top 20's ages in order with each person's values")
        report.note("SQLite runs at its defaults and with a page cache or an mmap at least as large as the database and LogStore's block cache, each connection warmed by reading every page of the table and the age index first; both sides index age")
        report.note("LogStore's store is opened read-only once, before the clock starts; its committed state and age index are in memory, as after any open")
        report.note(EngineMemory.note)
        return report
    }

    /// A repeated fetch whose answer is IDs or a count: LogStore, then
    /// GRDB's cached `sql` under each memory variant, compared.
    private static func compareRepeated(_ kind: Fetches.Kind, _ sql: String, _ logStoreName: String, _ grdbName: String, _ comparison: String, target: Double,
                                        _ fetches: Fetches, _ variants: [(memory: SQLiteMemory, database: GRDBPeople)], _ repetitions: Int,
                                        _ report: inout GroupReport, _ logStore: @escaping () throws -> Fetches.Answer) throws {
        let rates = try measureInRounds(repetitions: repetitions, [{ try fetches.repeated(kind, "LogStore", logStore) }] + variants.map { memory, database in
            { try fetches.repeated(kind, memory.label) { kind == .count ? .count(try Fetches.count(database, sql)) : try fetches.ids(database, sql) } }
        })
        let logStoreFigure = report.add(logStoreName, rates[0], unit: "fetches/s")
        for (variant, (memory, _)) in variants.enumerated() {
            let figure = report.add("\(grdbName), cached statement, \(memory.label)", rates[1 + variant], unit: "fetches/s")
            report.compare("\(comparison), \(memory.label)", logStoreFigure, over: figure, target: memory == .defaults ? .atLeast(target) : nil)
        }
    }
}

/// The fetches' requests, their expected answers from the people written,
/// and the timing of one fetch or of many, each answer checked.
private struct Fetches {
    enum Kind: CaseIterable { case range, equal, scan, count, top }

    /// What a fetch returned, reduced so both engines' answers compare.
    enum Answer {
        /// People in the order they came, with their values.
        case people([(key: Int64, values: PersonValues)])
        /// IDs in the order they came; their values are the people written.
        case ids([Int64])
        case count(Int)
    }

    static let rangeSQL = "FROM person WHERE age >= 100 AND age <= 200"

    let people: [PersonValues]
    let store: Store
    let repeatFor: Duration
    /// Each fetch's expected result count and answer digest, from the people written.
    private var expectedCounts: [Kind: Int] = [:], expectedDigests: [Kind: ResultDigest] = [:]
    let sorted: LogStore.FetchRequest, equal: LogStore.FetchRequest, scan: LogStore.FetchRequest, counted: LogStore.FetchRequest, top: LogStore.FetchRequest

    init(people: [PersonValues], store: Store, repeatFor: Duration) throws {
        self.people = people
        self.store = store
        self.repeatFor = repeatFor
        let range = try ObjectPredicate("age >= %d AND age <= %d", 100, 200)
        sorted = LogStore.FetchRequest(entityName: "Person", predicate: range, sortDescriptors: [SortKey("lastName")])
        equal = LogStore.FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 500"))
        scan = LogStore.FetchRequest(entityName: "Person", predicate: try ObjectPredicate("lastName BEGINSWITH[c] %@", "sm"))
        counted = LogStore.FetchRequest(entityName: "Person", predicate: range)
        top = LogStore.FetchRequest(entityName: "Person", sortDescriptors: [SortKey("age", ascending: false)], fetchLimit: 20)
        for kind in Kind.allCases {
            let keys = matches(kind)
            expectedCounts[kind] = keys.count
            expectedDigests[kind] = switch kind {
            case .count: ResultDigest(count: keys.count)
            case .range: digest(kind, keys.sorted { people[Int($0) - 1].lastName < people[Int($1) - 1].lastName })
            default: digest(kind, keys)
            }
        }
    }

    /// The keys of the people each fetch matches.
    private func matches(_ kind: Kind) -> [Int64] {
        let keyed = people.enumerated().map { (key: Int64($0.offset + 1), values: $0.element) }
        switch kind {
        case .range, .count: return keyed.filter { (100...200).contains($0.values.age) }.map(\.key)
        case .equal: return keyed.filter { $0.values.age == 500 }.map(\.key)
        case .scan: return keyed.filter { $0.values.lastName.lowercased().hasPrefix("sm") }.map(\.key)
        case .top: return keyed.sorted { $0.values.age > $1.values.age }.prefix(20).map(\.key)
        }
    }

    func expectedCount(_ kind: Kind) -> Int { expectedCounts[kind] ?? 0 }

    /// An answer's digest; throws if a person's values are not the ones written under its key.
    private func digest(_ kind: Kind, _ answer: Answer) throws -> ResultDigest {
        switch answer {
        case .count(let count): return ResultDigest(count: count)
        case .ids(let keys): return digest(kind, keys)
        case .people(let found):
            for (key, values) in found {
                let written = people.indices.contains(Int(key) - 1) ? people[Int(key) - 1] : nil
                guard let written, written.firstName == values.firstName, written.lastName == values.lastName, written.age == values.age,
                      written.orderingValue == values.orderingValue, written.dateCreated == values.dateCreated
                else { throw BenchmarkError("a fetch returned person \(key) with values that were not written: \(values)") }
            }
            return digest(kind, found.map(\.key))
        }
    }

    /// What must match in order (the sort key) and what as a set (the keys).
    private func digest(_ kind: Kind, _ keys: [Int64]) -> ResultDigest {
        var digest = ResultDigest()
        for key in keys {
            switch kind {
            case .range: digest.add(people[Int(key) - 1].lastName)
            case .top: digest.add(people[Int(key) - 1].age)
            default: break
            }
        }
        // Which of the many people of the top age come first is each
        // engine's own: the top 20 are compared by age and distinct keys.
        digest.add(kind == .top ? ResultDigest(count: Set(keys).count) : ResultDigest(keySet: keys))
        return digest
    }

    /// One fetch, timed; its answer checked after the clock. The work is
    /// one fetch unless `work` says otherwise (records scanned).
    func once(_ kind: Kind, _ engine: String, work: Int = 1, _ body: () throws -> Answer) throws -> Sample {
        var answer = Answer.count(-1)
        let seconds = try Stopwatch.seconds { answer = try body() }
        try check(kind, engine, answer)
        return Sample(work: Double(work), seconds: seconds)
    }

    /// Fast fetches, repeated for a while, the last answer checked.
    func repeated(_ kind: Kind, _ engine: String, _ body: () throws -> Answer) throws -> Sample {
        var answer = Answer.count(-1)
        let sample = try Stopwatch.repeatFor(repeatFor) { answer = try body() }
        try check(kind, engine, answer)
        return sample
    }

    private func check(_ kind: Kind, _ engine: String, _ answer: Answer) throws {
        let found = try digest(kind, answer), wanted = expectedDigests[kind]
        guard found == wanted else { throw BenchmarkError("\(engine) answered the \(kind) fetch with \(found), expected \(wanted.map { "\($0)" } ?? "none")") }
    }

    // MARK: - The engines' fetches

    func logStoreObjects(_ request: LogStore.FetchRequest) throws -> Answer {
        let objects = store.newContext()
        return try withExtendedLifetime(objects) {
            .people(try objects.fetch(request, as: BenchPerson.self).map { (key: $0.key, values: $0.values) })
        }
    }

    func logStoreIDs(_ request: LogStore.FetchRequest) throws -> Answer {
        .ids(try store.newContext().fetchIDs(request).map { Int64($0.key) })
    }

    func ids(_ database: GRDBPeople, _ sql: String) throws -> Answer {
        .ids(try database.writer.read { db in try Int64.fetchAll(db.cachedStatement(sql: sql)) })
    }

    static func count(_ database: GRDBPeople, _ sql: String) throws -> Int {
        try database.writer.read { db in try Int.fetchOne(db.cachedStatement(sql: sql)) ?? -1 }
    }

    /// `sql`'s rows as `Record`s through a cached statement.
    static func records<Record: FetchableRecord & PersonFields>(_ type: Record.Type, _ database: GRDBPeople, _ sql: String) throws -> Answer {
        .people(try database.writer.read { db in try Record.fetchAll(db.cachedStatement(sql: sql)) }.map { (key: $0.key, values: $0.values) })
    }
}
