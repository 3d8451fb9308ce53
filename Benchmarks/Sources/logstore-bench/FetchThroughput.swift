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
        let database = data.database
        try database.writer.write { db in try db.execute(sql: "CREATE INDEX person_age ON person(age)") }
        let store = try Store(path: data.storePath, model: model, options: JournalOptions(access: .readOnly))
        defer { store.close() }

        let range = try ObjectPredicate("age >= %d AND age <= %d", 100, 200)
        let rangeSQL = "FROM person WHERE age >= 100 AND age <= 200"
        let expected = people.count { (100...200).contains($0.age) }
        let repetitions = context.repetitions

        // 1. An indexed range sorted by another key, as objects and as IDs.
        context.log("fetches: age 100 to 200 sorted by lastName")
        let sorted = FetchRequest(entityName: "Person", predicate: range, sortDescriptors: [SortKey("lastName")])
        let rangeRates = try measureInRounds(repetitions: repetitions, [
            { try fetchSample(expected) { try store.newContext().fetch(sorted).count } },
            { try fetchSample(expected) { try database.writer.read { db in try GRDBPerson.fetchAll(db, sql: "SELECT * \(rangeSQL) ORDER BY lastName").count } } },
            { try fetchSample(expected) { try store.newContext().fetchIDs(sorted).count } },
            { try fetchSample(expected) { try database.writer.read { db in try Int64.fetchAll(db, sql: "SELECT id \(rangeSQL) ORDER BY lastName").count } } },
        ])
        let objects = report.add("LogStore fetch, objects (\(expected.formatted()) of \(count.formatted()))", rangeRates[0], unit: "fetches/s")
        let records = report.add("GRDB fetchAll records", rangeRates[1], unit: "fetches/s")
        let ids = report.add("LogStore fetchIDs", rangeRates[2], unit: "fetches/s")
        let rowIDs = report.add("GRDB fetchAll ids", rangeRates[3], unit: "fetches/s")
        report.compare("LogStore objects ÷ GRDB records, age 100 to 200 by lastName", objects, over: records, target: .atLeast(2))
        report.compare("LogStore IDs ÷ GRDB ids, age 100 to 200 by lastName", ids, over: rowIDs, target: .atLeast(2))

        // 2. Indexed equality, IDs.
        context.log("fetches: age == 500")
        let equal = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 500"))
        let equalCount = people.count { $0.age == 500 }
        let equalRates = try measureInRounds(repetitions: repetitions, [
            { try repeatedSample(equalCount) { try store.newContext().fetchIDs(equal).count } },
            { try repeatedSample(equalCount) { try database.writer.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM person WHERE age = 500").count } } },
        ])
        let equalStore = report.add("LogStore fetchIDs age == 500 (\(equalCount) rows)", equalRates[0], unit: "fetches/s")
        let equalSQL = report.add("GRDB SELECT id WHERE age = 500", equalRates[1], unit: "fetches/s")
        report.compare("LogStore ÷ GRDB, age == 500 as IDs", equalStore, over: equalSQL, target: .atLeast(3))

        // 3. A full scan with an unindexed string predicate.
        context.log("fetches: lastName BEGINSWITH[c] 'sm'")
        let scan = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("lastName BEGINSWITH[c] %@", "sm"))
        let scanCount = people.count { $0.lastName.lowercased().hasPrefix("sm") }
        let scanRates = try measureInRounds(repetitions: repetitions, [
            {
                var found = 0
                let seconds = try Stopwatch.seconds { found = try store.newContext().fetchIDs(scan).count }
                guard found == scanCount else { throw BenchmarkError("LogStore found \(found) names starting with sm, not \(scanCount)") }
                return Sample(work: Double(count), seconds: seconds)
            },
            {
                var found = 0
                let seconds = try Stopwatch.seconds { found = try database.writer.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM person WHERE lastName LIKE 'sm%'").count } }
                guard found == scanCount else { throw BenchmarkError("SQLite found \(found) names starting with sm, not \(scanCount)") }
                return Sample(work: Double(count), seconds: seconds)
            },
        ])
        let scanStore = report.add("LogStore full scan, lastName BEGINSWITH[c] 'sm'", scanRates[0], unit: "records scanned/s")
        let scanSQL = report.add("SQLite full scan, lastName LIKE 'sm%'", scanRates[1], unit: "records scanned/s")
        report.compare("LogStore ÷ SQLite, full scan", scanStore, over: scanSQL, target: .atLeast(1))

        // 4. Count on the indexed attribute.
        context.log("fetches: count of age 100 to 200")
        let counted = FetchRequest(entityName: "Person", predicate: range)
        let countRates = try measureInRounds(repetitions: repetitions, [
            { try repeatedSample(expected) { try store.newContext().count(for: counted) } },
            { try repeatedSample(expected) { try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) \(rangeSQL)") ?? 0 } } },
        ])
        let countStore = report.add("LogStore count(for:) age 100 to 200", countRates[0], unit: "counts/s")
        let countSQL = report.add("GRDB SELECT COUNT(*)", countRates[1], unit: "counts/s")
        report.compare("LogStore ÷ GRDB, count on the indexed attribute", countStore, over: countSQL, target: .atLeast(1))

        // 5. Sorted by the indexed attribute, limit 20.
        context.log("fetches: sorted by age, limit 20")
        let top = FetchRequest(entityName: "Person", sortDescriptors: [SortKey("age", ascending: false)], fetchLimit: 20)
        let topRates = try measureInRounds(repetitions: repetitions, [
            { try repeatedSample(20) { try store.newContext().fetch(top).count } },
            { try repeatedSample(20) { try database.writer.read { db in try GRDBPerson.fetchAll(db, sql: "SELECT * FROM person ORDER BY age DESC LIMIT 20").count } } },
        ])
        let topStore = report.add("LogStore sorted by age, limit 20 (target < 1 ms)", value: 1000 / topRates[0].median, unit: "ms per fetch")
        let topSQL = report.add("GRDB ORDER BY age DESC LIMIT 20", value: 1000 / topRates[1].median, unit: "ms per fetch")
        report.compare("GRDB time ÷ LogStore time, sorted with limit", topSQL, over: topStore)
        report.add("target: LogStore sorted read with limit under 1 ms", value: topStore.value, unit: topStore.value < 1 ? "ms: met" : "ms: NOT MET")

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
        report.note("the range matches \(expected.formatted()) of \(count.formatted()) people (ages uniform in 0..<1000); LogStore fetches in a fresh context each time, loading every object's values (fetchBatchSize 0); GRDB decodes Codable records or reads ids; both read warm data")
        report.note("LogStore's store is opened read-only once, before the clock starts; its committed state and age index are in memory, as after any open")
        return report
    }

    /// One fetch, checked to return `expected` results; the work is one fetch.
    private static func fetchSample(_ expected: Int, _ body: () throws -> Int) throws -> Sample {
        var found = 0
        let seconds = try Stopwatch.seconds { found = try body() }
        guard found == expected else { throw BenchmarkError("a fetch returned \(found) results, not \(expected)") }
        return Sample(work: 1, seconds: seconds)
    }

    /// Fast fetches, repeated for a while, each checked to return `expected`.
    private static func repeatedSample(_ expected: Int, _ body: () throws -> Int) throws -> Sample {
        var wrong: Int?
        let sample = try Stopwatch.repeatFor(.milliseconds(300)) {
            let found = try body()
            if found != expected { wrong = found }
        }
        if let wrong { throw BenchmarkError("a fetch returned \(wrong) results, not \(expected)") }
        return sample
    }
}
