// The Person records of the object benchmarks, for LogStore and for GRDB.

import Foundation
import GRDB
import LogStore

/// A person as the app defines it for LogStore: a typed managed object.
final class BenchPerson: ManagedObject {
    @Managed("firstName") var firstName: String?
    @Managed("lastName") var lastName: String?
    @Managed("age") var age: Int64
    @Managed("orderingValue") var orderingValue: Double
    @Managed("dateCreated") var dateCreated: Date?
}

/// The same person as a Codable GRDB record. Its date is stored as REAL
/// seconds since the reference date, 8 bytes as LogStore stores it, rather
/// than GRDB's default of 23 characters of text through a date formatter.
struct GRDBPerson: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    var id: Int64?
    var firstName: String
    var lastName: String
    var age: Int64
    var orderingValue: Double
    var dateCreated: Date

    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { .timeIntervalSinceReferenceDate }
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { .timeIntervalSinceReferenceDate }
}

/// The same person read by a hand-written `init(row:)`, the fastest way GRDB
/// makes records: columns by position, the date from its REAL seconds.
/// Expects the columns in table order (`SELECT *`).
struct GRDBPersonRow: FetchableRecord {
    var id: Int64
    var firstName: String
    var lastName: String
    var age: Int64
    var orderingValue: Double
    var dateCreated: Date

    init(row: Row) {
        id = row[0]
        firstName = row[1]
        lastName = row[2]
        age = row[3]
        orderingValue = row[4]
        dateCreated = Date(timeIntervalSinceReferenceDate: row[5])
    }
}

/// The values both engines store, made once per run from a seed.
struct PersonValues: Sendable, Equatable {
    var firstName: String
    var lastName: String
    var age: Int64
    var orderingValue: Double
    var dateCreated: Date

    static let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Leslie", "Margaret", "Niklaus"]
    static let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman", "Lamport", "Hamilton", "Wirth"]

    /// `count` people with ages uniform in `0..<ages`, their last names
    /// drawn from `lastNames` and `moreLastNames`.
    static func make(_ count: Int, seed: UInt64, ages: UInt64 = 100, moreLastNames: [String] = []) -> [PersonValues] {
        var random = SeededRandom(seed: seed)
        let lastNames = lastNames + moreLastNames
        return (0..<count).map { index in
            PersonValues(
                firstName: firstNames[Int(random.next() % UInt64(firstNames.count))],
                lastName: lastNames[Int(random.next() % UInt64(lastNames.count))] + "\(index % 1000)",
                age: Int64(random.next() % ages),
                orderingValue: Double(index) + fraction(&random),
                dateCreated: Date(timeIntervalSinceReferenceDate: 7.0e8 + Double(index) + fraction(&random)))
        }
    }

    /// A fraction in (0, 1) with three decimal digits, as milliseconds are:
    /// the doubles of real apps are seldom whole, and SQLite stores a whole
    /// REAL as a small integer, which would favour it.
    private static func fraction(_ random: inout SeededRandom) -> Double {
        Double(random.next() % 999 + 1) / 1000
    }

    /// The bytes of the values themselves: UTF-8 of the strings, 8 for each number and date.
    var rawSize: Int { firstName.utf8.count + lastName.utf8.count + 24 }

    var grdb: GRDBPerson { GRDBPerson(id: nil, firstName: firstName, lastName: lastName, age: age, orderingValue: orderingValue, dateCreated: dateCreated) }
}

enum PersonModel {
    static func make(indexingAge: Bool = false) throws -> Model {
        try Model {
            Entity("Person", BenchPerson.self) {
                Attribute("firstName", .string)
                Attribute("lastName", .string)
                Attribute("age", .int64, default: Int64(0), indexed: indexingAge)
                Attribute("orderingValue", .double, default: 0.0)
                Attribute("dateCreated", .date)
            }
        }
    }

    /// The most people one save holds in the scaling runs: a save is one
    /// journal frame, and a frame holds at most 256 MiB (FORMAT.md), about
    /// 5 million of these people.
    static let peoplePerSave = 1_000_000

    /// Inserts `people` in saves of at most ``peoplePerSave``, each in a
    /// fresh context of `store`, saved by `save` (which may measure it).
    static func insert(_ people: [PersonValues], into store: Store, save: (ObjectContext) throws -> Void = { try $0.save() }) throws {
        for start in stride(from: 0, to: people.count, by: peoplePerSave) {
            let context = store.newContext()
            try insertObjects(people[start..<min(start + peoplePerSave, people.count)], into: context)
            try save(context)
        }
    }

    /// Inserts `people` into `context` through the typed API and saves once.
    static func insert(_ people: [PersonValues], into context: ObjectContext) throws {
        try insertObjects(people[...], into: context)
        try context.save()
    }

    /// Inserts `people` into `context` through the typed API, unsaved.
    private static func insertObjects(_ people: ArraySlice<PersonValues>, into context: ObjectContext) throws {
        for values in people {
            let person = try context.insert(BenchPerson.self)
            person.firstName = values.firstName
            person.lastName = values.lastName
            person.age = values.age
            person.orderingValue = values.orderingValue
            person.dateCreated = values.dateCreated
        }
    }
}

/// The same people in a LogStore file (written with `.deferredToOS`, then
/// closed) and in a GRDB database, for the groups that read them.
struct PeopleDataSet {
    let storePath: String
    let sqlitePath: String
    let database: GRDBPeople

    init(_ people: [PersonValues], model: Model, named name: String, _ context: BenchmarkContext) throws {
        storePath = context.scratch.freshPath("\(name).logstore")
        sqlitePath = context.scratch.freshPath("\(name).sqlite")
        do {
            // Journal only: the groups compare against replaying it, and compact copies themselves.
            let store = try Store(path: storePath, model: model, options: JournalOptions(durability: .deferredToOS, compaction: .manual))
            try PersonModel.insert(people, into: store.newContext())
            store.close()
        }
        database = try GRDBPeople(path: sqlitePath, synchronousFull: false)
        try database.insertWithStatement(people)
    }

    func remove(_ context: BenchmarkContext) {
        database.remove()
        context.scratch.remove(storePath)
        SQLiteFiles.remove(sqlitePath)
    }
}

/// The files of a SQLite database in WAL mode: the database, its
/// write-ahead log and its shared-memory index.
enum SQLiteFiles {
    static func paths(of path: String) -> [String] { ["", "-wal", "-shm"].map { path + $0 } }

    static func remove(_ path: String) {
        for file in paths(of: path) { unlink(file) }
    }
}

/// A GRDB database of people: WAL, `synchronous` FULL or GRDB's default
/// (NORMAL), through a `DatabaseQueue` or, when several threads read at
/// once, a `DatabasePool`, with SQLite's page memory at its defaults or at
/// a budget (SQLiteMemory).
final class GRDBPeople {
    let path: String
    let writer: any DatabaseWriter

    init(path: String, synchronousFull: Bool, pool: Bool = false, indexingAge: Bool = false, memory: SQLiteMemory = .defaults) throws {
        self.path = path
        writer = try Self.open(path, synchronousFull: synchronousFull, pool: pool, memory: memory)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS person (
                    id INTEGER PRIMARY KEY, firstName TEXT NOT NULL, lastName TEXT NOT NULL,
                    age INTEGER NOT NULL, orderingValue REAL NOT NULL, dateCreated REAL NOT NULL)
                """)
            if indexingAge { try db.execute(sql: "CREATE INDEX IF NOT EXISTS person_age ON person(age)") }
        }
    }

    /// Opens a database in WAL mode. GRDB sets `synchronous = NORMAL` for
    /// WAL, which does not fsync at commit; FULL, set afterwards on the
    /// connection that writes, does, and is read back to be sure.
    static func open(_ path: String, synchronousFull: Bool, pool: Bool, memory: SQLiteMemory = .defaults) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.journalMode = .wal
        // As apps configure SQLite: a connection that finds the database
        // locked waits for it instead of failing at once (GRDB's default).
        configuration.busyMode = .timeout(10)
        memory.apply(to: &configuration)
        let writer: any DatabaseWriter = pool
            ? try DatabasePool(path: path, configuration: configuration)
            : try DatabaseQueue(path: path, configuration: configuration)
        let wanted = synchronousFull ? 2 : 1
        let synchronous = try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(wanted)")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard synchronous == wanted else { throw BenchmarkError("SQLite's synchronous is \(synchronous ?? -1), not \(wanted), on \(path)") }
        return writer
    }

    /// Codable records, one `insert` each, in one transaction.
    func insertRecords(_ people: [PersonValues]) throws {
        try writer.write { db in
            for values in people {
                let record = values.grdb
                try record.insert(db)
            }
        }
    }

    /// One cached prepared statement, in one transaction.
    func insertWithStatement<People: Collection<PersonValues>>(_ people: People) throws {
        try writer.write { db in try Self.insert(people, db) }
    }

    /// Inserts `people` through the connection's cached insert statement.
    static func insert<People: Collection<PersonValues>>(_ people: People, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: "INSERT INTO person (firstName, lastName, age, orderingValue, dateCreated) VALUES (?, ?, ?, ?, ?)")
        for values in people {
            try statement.execute(arguments: [values.firstName, values.lastName, values.age, values.orderingValue, values.dateCreated.timeIntervalSinceReferenceDate])
        }
    }

    /// The database's files on disk, after a checkpoint moves the WAL into it.
    func fileSize() throws -> Int {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return SQLiteFiles.paths(of: path).reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// Reads every page of the table and its indexes on the writer's
    /// connection (a pool's readers each have their own page cache).
    func warm() throws {
        try writer.writeWithoutTransaction { db in try SQLiteMemory.warm(db, table: "person") }
    }

    /// Closes the database, leaving its files.
    func close() {
        if let queue = writer as? DatabaseQueue { try? queue.close() }
        if let pool = writer as? DatabasePool { try? pool.close() }
    }

    func remove() {
        close()
        SQLiteFiles.remove(path)
    }
}

/// A person's values as a read returns them, whichever engine read them.
protocol PersonFields {
    var key: Int64 { get }
    var firstName: String { get }
    var lastName: String { get }
    var age: Int64 { get }
    var orderingValue: Double { get }
    var dateCreated: Date { get }
}

extension PersonFields {
    var values: PersonValues {
        PersonValues(firstName: firstName, lastName: lastName, age: age, orderingValue: orderingValue, dateCreated: dateCreated)
    }
}

extension GRDBPerson: PersonFields {
    var key: Int64 { id ?? 0 }
}

extension GRDBPersonRow: PersonFields {
    var key: Int64 { id }
}

extension BenchPerson {
    var key: Int64 { Int64(objectID.key) }
    /// The person's values as read through its context, which must be alive.
    var values: PersonValues {
        PersonValues(firstName: firstName ?? "", lastName: lastName ?? "", age: age, orderingValue: orderingValue, dateCreated: dateCreated ?? .distantPast)
    }
}
