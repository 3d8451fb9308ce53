// grdb-standalone: the SQLite side of three scaling workloads (bulk insert,
// durable single-record saves, range fetch), written again with GRDB alone
// and nothing of logstore-bench, so that the harness's GRDB figures can be
// checked against a minimal program run on the same machine.
//
//   grdb-standalone RECORDS [DIRECTORY]
//
// Prints one JSON object: each workload's rate, the median of 5 runs.

import Foundation
import GRDB

struct Person: Codable, FetchableRecord, PersistableRecord {
    var id: Int64?
    var firstName: String
    var lastName: String
    var age: Int64
    var orderingValue: Double
    var dateCreated: Date

    // Dates as REAL seconds since the reference date, as the harness stores them.
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSinceReferenceDate }
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { .timeIntervalSinceReferenceDate }
}

/// The same person read by a hand-written `init(row:)`, columns by position.
struct PersonRow: FetchableRecord {
    var id: Int64, firstName: String, lastName: String, age: Int64, orderingValue: Double, dateCreated: Date

    init(row: Row) {
        (id, firstName, lastName, age, orderingValue) = (row[0], row[1], row[2], row[3], row[4])
        dateCreated = Date(timeIntervalSinceReferenceDate: row[5])
    }
}

/// The harness's people: jrand48 from `seed`, ages in 0..<1000, a last name
/// of 15 with the record's index modulo 1000 appended, an ordering value and
/// a date with a fraction of three decimal digits.
func makePeople(_ count: Int, seed: UInt64) -> [Person] {
    let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Leslie", "Margaret", "Niklaus"]
    let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman", "Lamport",
                     "Hamilton", "Wirth", "Smith", "smalley", "SMYTHE"]
    var state = [0, 16, 32].map { UInt16(truncatingIfNeeded: seed >> $0) }
    func next() -> UInt64 {
        let high = UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: jrand48(&state))))
        let low = UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: jrand48(&state))))
        return high << 32 | low
    }
    return (0..<count).map { index in
        let firstName = firstNames[Int(next() % UInt64(firstNames.count))]
        let lastName = lastNames[Int(next() % UInt64(lastNames.count))] + "\(index % 1000)"
        let age = Int64(next() % 1000)
        let ordering = Double(index) + Double(next() % 999 + 1) / 1000
        let created = 7.0e8 + Double(index) + Double(next() % 999 + 1) / 1000
        return Person(id: nil, firstName: firstName, lastName: lastName, age: age, orderingValue: ordering,
                      dateCreated: Date(timeIntervalSinceReferenceDate: created))
    }
}

/// WAL, synchronous FULL (read back to be sure), the person table and its age index.
func open(_ path: String, pool: Bool = false) throws -> any DatabaseWriter {
    var configuration = Configuration()
    configuration.journalMode = .wal
    let writer: any DatabaseWriter = pool ? try DatabasePool(path: path, configuration: configuration)
                                          : try DatabaseQueue(path: path, configuration: configuration)
    try writer.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = FULL")
        guard try Int.fetchOne(db, sql: "PRAGMA synchronous") == 2 else { fatalError("synchronous is not FULL") }
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS person (
                id INTEGER PRIMARY KEY, firstName TEXT NOT NULL, lastName TEXT NOT NULL,
                age INTEGER NOT NULL, orderingValue REAL NOT NULL, dateCreated REAL NOT NULL)
            """)
        try db.execute(sql: "CREATE INDEX IF NOT EXISTS person_age ON person(age)")
    }
    return writer
}

/// Inserts `people` with the connection's cached INSERT statement, dates bound as Double.
func insert<People: Collection<Person>>(_ people: People, _ db: Database) throws {
    let statement = try db.cachedStatement(sql: "INSERT INTO person (firstName, lastName, age, orderingValue, dateCreated) VALUES (?, ?, ?, ?, ?)")
    for person in people {
        try statement.execute(arguments: [person.firstName, person.lastName, person.age, person.orderingValue,
                                          person.dateCreated.timeIntervalSinceReferenceDate])
    }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let (whole, fraction) = (ContinuousClock.now - start).components
    return Double(whole) + Double(fraction) / 1e18
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func remove(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let count = Int(arguments[1]), count > 0 else {
    FileHandle.standardError.write(Data("usage: grdb-standalone RECORDS [DIRECTORY]\n".utf8))
    exit(2)
}
let directory = arguments.count > 2 ? arguments[2] : NSTemporaryDirectory()
let runs = 5
let people = makePeople(count, seed: 8)
let dataSet = directory + "/standalone-\(count).sqlite"
remove(dataSet)
defer { remove(dataSet) }

// Bulk insert: every record in one transaction into a fresh database.
var bulk: [Double] = []
for run in 0..<runs {
    let path = run == runs - 1 ? dataSet : directory + "/standalone-bulk.sqlite"
    let writer = try open(path)
    bulk.append(Double(count) / (try seconds { try writer.write { db in try insert(people, db) } }))
    guard try writer.read({ db in try Person.fetchCount(db) }) == count else { fatalError("bulk insert lost records") }
    if path != dataSet { remove(path) }
}

// Range fetch: each sample repeated for at least 300 ms, as Codable records
// and as init(row:) records.
let matches = people.count { (100...200).contains($0.age) }
let rangeSQL = "SELECT * FROM person WHERE age BETWEEN 100 AND 200 ORDER BY lastName"
func rangeFetches(_ fetch: (Database) throws -> Int) throws -> [Double] {
    let pool = try open(dataSet, pool: true)
    return try (0..<runs).map { _ in
        var calls = 0
        let elapsed = try seconds {
            let start = ContinuousClock.now
            repeat {
                let count = try pool.read(fetch)
                guard count == matches else { fatalError("the range fetch returned \(count) records, not \(matches)") }
                calls += 1
            } while ContinuousClock.now - start < .milliseconds(300)
        }
        return Double(calls) / elapsed
    }
}
let fetches = try rangeFetches { db in try Person.fetchAll(db.cachedStatement(sql: rangeSQL)).count }
let rowFetches = try rangeFetches { db in try PersonRow.fetchAll(db.cachedStatement(sql: rangeSQL)).count }

// Durable saves: one record per transaction, into the data set, which they grow.
let saves = 1_000
let newPeople = makePeople(saves, seed: 8_003)
var durable: [Double] = []
do {
    let queue = try open(dataSet)
    for run in 1...runs {
        durable.append(Double(saves) / (try seconds {
            for person in newPeople { try queue.write { db in try insert(CollectionOfOne(person), db) } }
        }))
        guard try queue.read({ db in try Person.fetchCount(db) }) == count + run * saves else { fatalError("a save was lost") }
    }
}

let result: [String: Any] = [
    "records": count,
    "runs": runs,
    "statistic": "median of \(runs) runs",
    "bulkInsertRecordsPerSecond": median(bulk),
    "rangeFetchesPerSecond": median(fetches),
    "rangeFetchRecordsPerSecond": median(fetches) * Double(matches),
    "rangeFetchInitRowRecordsPerSecond": median(rowFetches) * Double(matches),
    "rangeMatches": matches,
    "durableSavesPerSecond": median(durable),
    "savesPerRun": saves,
    "sqliteVersion": try DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") } ?? "",
]
let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
print(String(decoding: json, as: UTF8.self))
