// The data set the app-writes workloads start from: the same people in a
// LogStore file and a SQLite database, age indexed in both, copied afresh for every run.

import Foundation
import GRDB
import LogStore

/// The people, their two files, and how each run opens fresh copies of them
/// with the same durability on both sides.
struct AppWritesData {
    let size: Int
    let people: [PersonValues]
    let model: Model
    let storePath: String
    let sqlitePath: String
    let context: BenchmarkContext

    /// Builds both files untimed: LogStore's compacted into a snapshot (the
    /// state a store an app has used for a while is in), SQLite's checkpointed.
    init(size: Int, _ context: BenchmarkContext) throws {
        self.size = size
        self.context = context
        people = PersonValues.make(size, seed: 23_006)
        model = try PersonModel.make(indexingAge: true)
        storePath = context.scratch.freshPath("app-writes.logstore")
        sqlitePath = context.scratch.freshPath("app-writes.sqlite")
        context.log("app-writes: building \(size.formatted()) people in both engines")
        let store = try Store(path: storePath, model: model, options: JournalOptions(durability: .deferredToOS, compaction: .manual))
        try PersonModel.insert(people, into: store)
        try store.compact()
        store.close()
        let database = try GRDBPeople(path: sqlitePath, synchronousFull: false, indexingAge: true)
        try database.insertWithStatement(people)
        _ = try database.fileSize()
        database.close()
    }

    func remove() {
        context.scratch.remove(storePath)
        SQLiteFiles.remove(sqlitePath)
    }

    // MARK: - Fresh copies, opened

    /// A store on a fresh copy of the LogStore file. `compaction` is manual
    /// unless a workload is about compaction: no maintenance a save starts
    /// is then left running when its clock stops.
    func openStoreCopy(durability: Durability, compaction: CompactionPolicy = .manual) throws -> Store {
        try Store(path: try durableCopy(of: storePath), model: model, options: JournalOptions(durability: durability, compaction: compaction))
    }

    /// A database on a fresh copy of the SQLite file: WAL, synchronous=FULL
    /// (every commit fsyncs the WAL, as `.fsyncEveryCommit` fsyncs the
    /// journal), a page cache larger than the file (LogStore holds its
    /// records in memory). Without `automaticCheckpoints`,
    /// `wal_autocheckpoint` is 0 and the run checkpoints after its clock stops.
    func openSQLiteCopy(pool: Bool = false, automaticCheckpoints: Bool) throws -> GRDBPeople {
        let path = try durableCopy(of: sqlitePath)
        let database = try GRDBPeople(path: path, synchronousFull: true, pool: pool, indexingAge: true)
        let fileBytes = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let cacheKiB = fileBytes / 1024 + 1024
        let wanted = automaticCheckpoints ? 1000 : 0
        let checkpoints = try database.writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            if !automaticCheckpoints { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            return try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")
        }
        guard checkpoints == wanted else { throw BenchmarkError("SQLite's wal_autocheckpoint is \(checkpoints ?? -1), not \(wanted), on \(path)") }
        return database
    }

    /// The settings SQLite runs with in these workloads, read back from it.
    func sqliteSettings() throws -> String {
        let database = try openSQLiteCopy(automaticCheckpoints: true)
        defer { database.remove() }
        return try database.writer.writeWithoutTransaction { db in
            let version = try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?"
            let journalMode = try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?"
            let synchronous = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
            let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0
            return "SQLite \(version) through GRDB 7.10.0: journal_mode=\(journalMode), synchronous=\(synchronous) (2 is FULL), cache_size=\(cache) (negative: KiB, above the file's size), index on age as in LogStore"
        }
    }

    /// Moves the WAL into the database, off the clock, and returns the seconds it took.
    static func checkpoint(_ database: GRDBPeople) throws -> Double {
        try Stopwatch.seconds {
            try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
    }

    /// A copy of `path` under a name of its own (a workload may hold several
    /// open at once), written back to the disk before any clock starts so
    /// its writeback does not land inside a measurement.
    private func durableCopy(of path: String) throws -> String {
        let copy = context.scratch.freshPath("copy-\(UUID().uuidString.prefix(8))-" + URL(fileURLWithPath: path).lastPathComponent)
        SQLiteFiles.remove(copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try synchronizeFile(at: copy)
        return copy
    }

    /// Removes a store's copy after closing it.
    func remove(_ store: Store) {
        store.close()
        context.scratch.remove(store.path)
    }

    // MARK: - One durable save on each side

    /// Sets the age of the person `id` and saves: a fresh context, so the
    /// object it looked up is freed inside the caller's clock.
    static func saveAge(_ age: Int64, of id: ObjectID, in store: Store) throws {
        let objects = store.newContext()
        (try objects.object(with: id) as! BenchPerson).age = age
        try objects.save()
    }

    /// The same in SQLite: the connection's cached UPDATE, one transaction.
    static func saveAge(_ age: Int64, of key: Int64, in database: GRDBPeople) throws {
        try database.writer.write { db in
            try db.cachedStatement(sql: "UPDATE person SET age = ? WHERE id = ?").execute(arguments: [age, key])
        }
    }

    /// Inserts `person` and saves, in a fresh context.
    static func saveNew(_ person: PersonValues, in store: Store) throws {
        try PersonModel.insert([person], into: store.newContext())
    }

    /// The same in SQLite: the connection's cached INSERT, one transaction.
    static func saveNew(_ person: PersonValues, in database: GRDBPeople) throws {
        try database.writer.write { db in try GRDBPeople.insert(CollectionOfOne(person), db) }
    }

    /// Calls `save` with 0, 1, 2… until it has been called `count` times or
    /// `timeBox` is over (a loaded disk can fsync a hundred times slower);
    /// returns each call's seconds.
    static func timeBoxed(_ count: Int, _ timeBox: Duration, _ save: (Int) throws -> Void) throws -> [Double] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeBox
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for index in 0..<count {
            let start = clock.now
            try save(index)
            let end = clock.now
            latencies.append((end - start).seconds)
            if end >= deadline { break }
        }
        return latencies
    }

    /// `count` distinct keys of the data set in a random order.
    func randomKeys(_ count: Int, seed: UInt64) -> [Int64] {
        var random = SeededRandom(seed: seed)
        return Array(Array(1...Int64(size)).shuffled(using: &random).prefix(count))
    }

    /// The IDs of the people at `keys` in `store`.
    static func ids(_ keys: [Int64], in store: Store) -> [ObjectID] {
        keys.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
    }

    // MARK: - Values the workloads write

    /// The age update number `index` writes: outside the data's 0..<100, so
    /// a lost update cannot pass for a done one.
    static func newAge(_ index: Int) -> Int64 { Int64(100 + index % 900) }

    /// Inserted people have `orderingValue` at or above this, far above the
    /// data set's, so they can be found again on both sides.
    static let insertedOrderingBase = 1.0e8
    static let insertedPredicate = "orderingValue >= 100000000"

    /// New person `index`: values from `templates`, an `orderingValue`
    /// (fractional) that no other new person has.
    static func newPerson(_ index: Int, from templates: [PersonValues]) -> PersonValues {
        var person = templates[index % templates.count]
        person.orderingValue = insertedOrderingBase + Double(index) + 0.25
        return person
    }

    /// New people `0..<count`, as `newPerson` makes them, keys left out.
    static func inserted(_ count: Int, from templates: [PersonValues]) -> [StoredPerson] {
        (0..<count).map { StoredPerson(key: 0, newPerson($0, from: templates)) }
    }

    /// The people at `keys` (1-based) after update `i` set the age of `keys[i]`.
    func updated(_ keys: [Int64]) -> [StoredPerson] {
        keys.enumerated().map { index, key in
            var values = people[Int(key) - 1]
            values.age = Self.newAge(index)
            return StoredPerson(key: key, values)
        }
    }
}
