// Anchor 1, GRDB's performance tests: insert 50,000 rows of 10 integers in
// one transaction, and fetch 200,000 rows of 10 integers.

import Foundation
import GRDB
import LogStore

/// A row of 10 integers as a LogStore object.
final class TenIntegers: ManagedObject {
    @Managed("i0") var i0: Int64
    @Managed("i1") var i1: Int64
    @Managed("i2") var i2: Int64
    @Managed("i3") var i3: Int64
    @Managed("i4") var i4: Int64
    @Managed("i5") var i5: Int64
    @Managed("i6") var i6: Int64
    @Managed("i7") var i7: Int64
    @Managed("i8") var i8: Int64
    @Managed("i9") var i9: Int64

    /// Row `row`'s values, as ``IntegerRows/value(row:column:)`` makes them.
    func fill(row: Int) {
        let value = { IntegerRows.value(row: row, column: $0) }
        (i0, i1, i2, i3, i4) = (value(0), value(1), value(2), value(3), value(4))
        (i5, i6, i7, i8, i9) = (value(5), value(6), value(7), value(8), value(9))
    }

    var values: [Int64] { [i0, i1, i2, i3, i4, i5, i6, i7, i8, i9] }
}

/// The same row as a GRDB record, decoded by column index.
struct TenIntegerRecord: FetchableRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int64

    init(row: Row) {
        (i0, i1, i2, i3, i4) = (row[0], row[1], row[2], row[3], row[4])
        (i5, i6, i7, i8, i9) = (row[5], row[6], row[7], row[8], row[9])
    }

    var values: [Int64] { [i0, i1, i2, i3, i4, i5, i6, i7, i8, i9] }
}

enum IntegerRows {
    static let columns = (0..<10).map { "i\($0)" }
    static let schema = ["CREATE TABLE IF NOT EXISTS item (\(columns.map { "\($0) INTEGER NOT NULL" }.joined(separator: ", ")))"]
    static let insertSQL = "INSERT INTO item (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
    static let selectSQL = "SELECT \(columns.joined(separator: ", ")) FROM item ORDER BY rowid"
    static let request = FetchRequest(entityName: "Item")

    /// Distinct in every row and column, so a swapped column shows in the digest.
    static func value(row: Int, column: Int) -> Int64 { Int64(row) * 10 + Int64(column) }

    static func model() throws -> Model {
        try Model {
            Entity("Item", TenIntegers.self) {
                for column in columns { Attribute(column, .int64, default: Int64(0)) }
            }
        }
    }

    static func digest(_ rows: [[Int64]]) -> ResultDigest {
        var digest = ResultDigest()
        for row in rows { for value in row { digest.add(value) } }
        return digest
    }

    static func expected(_ rows: Int) -> ResultDigest {
        digest((0..<rows).map { row in (0..<10).map { value(row: row, column: $0) } })
    }

    static func insert(_ rows: Int, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: insertSQL)
        for row in 0..<rows {
            statement.setUncheckedArguments(StatementArguments((0..<10).map { value(row: row, column: $0) }))
            try statement.execute()
        }
    }

    static func run(_ context: BenchmarkContext, into report: inout GroupReport) throws {
        let model = try model()
        try inserting(model, context, into: &report)
        try fetching(model, context, into: &report)
        report.published("GRDB's performance tests", "no figures found: the tests (groue/GRDB.swift Tests/Performance/GRDBPerformance/InsertPositionalValuesTests.swift, 50,000 rows; FetchPositionalValuesTests.swift, which fetches 100,000 rows in the stored version) publish no results in the repository, and the wiki page they fed (github.com/groue/GRDB.swift/wiki/Performance) could not be retrieved here")
    }

    /// 50,000 rows in one durable transaction, into a fresh file each round.
    private static func inserting(_ model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let rows = context.scaled(full: 50_000, quick: 5_000)
        let expected = expected(rows)
        context.log("anchors: insert \(rows.formatted()) rows of 10 integers")
        var logStoreSeconds: [Double] = [], grdbSeconds: [Double] = []
        for _ in 0..<context.repetitions {
            do {
                let path = context.scratch.freshPath("anchor-items.logstore")
                defer { context.scratch.remove(path) }
                let store = try Store(path: path, model: model, options: Anchor.durable)
                defer { store.close() }
                logStoreSeconds.append(try Stopwatch.seconds {
                    let objects = store.newContext()
                    for row in 0..<rows { try objects.insert(TenIntegers.self).fill(row: row) }
                    try objects.save()
                })
                try Anchor.check(digest(try store.newContext().fetch(request, as: TenIntegers.self).map(\.values)), expected, "LogStore after the insert")
            }
            do {
                let path = context.scratch.freshPath("anchor-items.sqlite")
                defer { SQLiteFiles.remove(path) }
                let database = try Anchor.database(path, schema: schema)
                grdbSeconds.append(try Stopwatch.seconds { try database.write { db in try insert(rows, db) } })
                let records = try database.read { db in try TenIntegerRecord.fetchAll(db.cachedStatement(sql: selectSQL)) }
                try Anchor.check(digest(records.map(\.values)), expected, "SQLite after the insert")
                try (database as? DatabaseQueue)?.close()
            }
        }
        let logStore = report.addSeconds("insert \(rows.formatted()) rows × 10 integers, one durable transaction: LogStore", logStoreSeconds)
        let grdb = report.addSeconds("the same: GRDB, cached INSERT with unchecked arguments", grdbSeconds)
        report.compareTimes("insert \(rows.formatted()) rows × 10 integers", grdb: grdb, logStore: logStore)
    }

    /// 200,000 rows, each load decoding every row into an object or record.
    private static func fetching(_ model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let rows = context.scaled(full: 200_000, quick: 20_000)
        let expected = expected(rows)
        context.log("anchors: fetch \(rows.formatted()) rows of 10 integers")
        let data = try Anchor.ReadDataSet("anchor-items", model: model, schema: schema, context,
                                          fill: { objects in for row in 0..<rows { try objects.insert(TenIntegers.self).fill(row: row) } },
                                          insert: { db in try insert(rows, db) })
        defer { data.remove(context) }
        let store = data.store
        func grdbRead(_ name: String, _ reader: any DatabaseReader) -> Anchor.Read {
            let fetch = { try reader.read { db in try TenIntegerRecord.fetchAll(db.cachedStatement(sql: selectSQL)) } }
            return Anchor.Read(name: name, load: { keep(try fetch().count) }, digest: { digest(try fetch().map(\.values)) })
        }
        let seconds = try Anchor.measure([
            Anchor.Read(name: "LogStore fetch", load: { keep(try store.newContext().fetch(request).count) },
                        digest: { digest(try store.newContext().fetch(request, as: TenIntegers.self).map(\.values)) }),
            grdbRead("GRDB fetchAll, defaults", data.database),
            grdbRead("GRDB fetchAll, large cache", data.cached),
        ], loads: 1, expected: expected, repetitions: context.repetitions)
        let logStore = report.addSeconds("fetch \(rows.formatted()) rows × 10 integers as objects: LogStore", seconds[0])
        let grdb = report.addSeconds("the same as records (init(row:) by index): GRDB, SQLite defaults", seconds[1])
        let grdbCached = report.addSeconds("the same: GRDB, page cache ≥ 2 × database, warmed", seconds[2])
        report.compareTimes("fetch \(rows.formatted()) rows, SQLite defaults", grdb: grdb, logStore: logStore)
        report.compareTimes("fetch \(rows.formatted()) rows, large page cache", grdb: grdbCached, logStore: logStore)
    }
}
