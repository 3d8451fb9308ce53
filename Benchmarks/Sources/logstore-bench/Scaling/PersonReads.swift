// The read workloads of the scaling runs, one method per workload on each
// engine, shared by the timed runs and the child processes that measure
// each engine's resident memory, so both run exactly the same queries.

import Foundation
import GRDB
import LogStore

/// What the read workloads ask, in both engines' terms.
enum PersonQueries {
    static let range = "age BETWEEN {100, 200}"
    static let rangeSQL = "age BETWEEN 100 AND 200"
    /// An unindexed scan: lastName BEGINSWITH[c] 'sm' (LIKE is case-insensitive for ASCII, as [c] is here).
    static let scan = "lastName BEGINSWITH[c] 'sm'"
    static let scanSQL = "lastName LIKE 'sm%'"
    /// A predicate no person matches that only a full scan answers, for warming LogStore.
    static let noneByScan = "lastName BEGINSWITH 'zz'"
    /// The seeds of the warm lookups' keys and of the cold ones'.
    static let lookupSeed: UInt64 = 8_001, coldSeed: UInt64 = 8_004

    /// `count` distinct keys of 1...`size` in a random order: every lookup
    /// misses the context's identity map, as a first touch does.
    static func distinctKeys(_ count: Int, of size: Int, seed: UInt64) -> [Int64] {
        var random = SeededRandom(seed: seed)
        var keys = Array(1...Int64(size))
        keys.shuffle(using: &random)
        return Array(keys.prefix(count))
    }

    // MARK: - Digests

    static func digest(names: [String]) -> ResultDigest {
        var digest = ResultDigest()
        for name in names { digest.add(name) }
        return digest
    }

    /// A range sorted by lastName: the names in order (the order of ties is
    /// each engine's own), then every person's values in key order.
    static func digest(sortedByLastName rows: [some PersonFields]) -> ResultDigest {
        var digest = ResultDigest()
        for row in rows { digest.add(row.lastName) }
        for row in rows.sorted(by: { $0.key < $1.key }) {
            digest.add(row.key)
            digest.add(row.firstName)
            digest.add(row.age)
            digest.add(row.orderingValue)
            digest.add(row.dateCreated.timeIntervalSinceReferenceDate)
        }
        return digest
    }
}

/// The read workloads on one engine.
protocol PersonReading {
    associatedtype Fetched: PersonFields
    /// Reads everything once, before any clock starts.
    func warm() throws
    /// The first names of the lookup keys, in order.
    func lookup() throws -> [String]
    /// The people aged 100 to 200 sorted by lastName, as values.
    func rangeFetch() throws -> [Fetched]
    /// The keys of the people whose lastName begins with "sm" in any case.
    func scan() throws -> [Int64]
    /// How many people are aged 100 to 200.
    func count() throws -> Int
    /// The lookups split between ConcurrentAccess's reader threads, run at once.
    func concurrentLookups() throws -> ResultDigest
}

extension PersonReading {
    /// One run of `workload`, digested.
    func once(_ workload: Workload) throws -> ResultDigest {
        switch workload {
        case .lookup, .lookupCold: PersonQueries.digest(names: try lookup())
        case .rangeFetch: PersonQueries.digest(sortedByLastName: try rangeFetch())
        case .scan: ResultDigest(keySet: try scan())
        case .count: ResultDigest(count: try count())
        case .concurrentReads: try concurrentLookups()
        default: throw BenchmarkError("\(workload.rawValue) is not a read of the Person data set")
        }
    }
}

/// The read workloads on a LogStore store.
struct LogStorePersonReads: PersonReading {
    let store: Store
    let ids: [ObjectID]
    private let range: LogStore.FetchRequest, scanRequest: LogStore.FetchRequest, countRequest: LogStore.FetchRequest

    init(_ store: Store, lookupKeys: [Int64]) throws {
        self.store = store
        ids = lookupKeys.map { ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64($0)) }
        range = FetchRequest(entityName: "Person", predicate: try ObjectPredicate(PersonQueries.range), sortDescriptors: [SortKey("lastName")])
        scanRequest = FetchRequest(entityName: "Person", predicate: try ObjectPredicate(PersonQueries.scan))
        countRequest = FetchRequest(entityName: "Person", predicate: try ObjectPredicate(PersonQueries.range))
    }

    func warm() throws { try LogStoreWarm.warm(store, entity: "Person", scan: PersonQueries.noneByScan) }

    func lookup() throws -> [String] { try lookup(ids[...]) }

    /// The first names of `ids`, from a fresh context freed before returning.
    func lookup(_ ids: ArraySlice<ObjectID>) throws -> [String] {
        let objects = store.newContext()
        var names: [String] = []
        names.reserveCapacity(ids.count)
        for id in ids { names.append((try objects.object(with: id) as! BenchPerson).firstName ?? "") }
        return names
    }

    func rangeFetch() throws -> [StoredPerson] {
        try store.newContext().fetch(range, as: BenchPerson.self).map { StoredPerson($0) }
    }

    func scan() throws -> [Int64] { try store.newContext().fetchIDs(scanRequest).map { Int64($0.key) } }

    func count() throws -> Int { try store.newContext().count(for: countRequest) }

}

/// The read workloads on a SQLite database, through GRDB's cached
/// statements and hand-written `init(row:)` records.
struct SQLitePersonReads: PersonReading {
    let reader: any DatabaseReader
    let keys: [Int64]

    func warm() throws {
        if let pool = reader as? DatabasePool {
            try SQLiteMemory.warmEveryReader(pool, table: "person")
        } else {
            try reader.read { db in try SQLiteMemory.warm(db, table: "person") }
        }
    }

    func lookup() throws -> [String] { try lookup(keys[...]) }

    func lookup(_ keys: ArraySlice<Int64>) throws -> [String] {
        try reader.read { db in
            let statement = try db.cachedStatement(sql: "SELECT firstName FROM person WHERE id = ?")
            var names: [String] = []
            names.reserveCapacity(keys.count)
            for key in keys { names.append(try String.fetchOne(statement, arguments: [key]) ?? "") }
            return names
        }
    }

    func rangeFetch() throws -> [GRDBPersonRow] {
        try reader.read { db in
            try GRDBPersonRow.fetchAll(db.cachedStatement(sql: "SELECT * FROM person WHERE \(PersonQueries.rangeSQL) ORDER BY lastName"))
        }
    }

    /// The range fetch through GRDB's Codable record instead of init(row:).
    func rangeFetchCodable() throws -> [GRDBPerson] {
        try reader.read { db in
            try GRDBPerson.fetchAll(db.cachedStatement(sql: "SELECT * FROM person WHERE \(PersonQueries.rangeSQL) ORDER BY lastName"))
        }
    }

    func scan() throws -> [Int64] {
        try reader.read { db in try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM person WHERE \(PersonQueries.scanSQL)")) }
    }

    func count() throws -> Int {
        try reader.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM person WHERE \(PersonQueries.rangeSQL)")) ?? -1 }
    }
}

/// The lookups split between ConcurrentAccess's reader threads, run at
/// once, digested in order. `lookup` gets each thread's share of indices.
private func lookUpConcurrently(_ lookup: @escaping @Sendable (Range<Int>) throws -> [String], count: Int) throws -> ResultDigest {
    let readers = ConcurrentAccess.readers
    let shares = (0..<readers).map { reader in (count * reader / readers)..<(count * (reader + 1) / readers) }
    let names = NamesByThread(readers)
    try ThreadsAtOnce.run(count: readers) { reader in names.set(reader, try lookup(shares[reader])) }
    return PersonQueries.digest(names: names.all)
}

private final class NamesByThread: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [[String]]
    init(_ count: Int) { slots = Array(repeating: [], count: count) }
    func set(_ index: Int, _ names: [String]) { lock.withLock { slots[index] = names } }
    var all: [String] { lock.withLock { slots.flatMap { $0 } } }
}

extension LogStorePersonReads {
    func concurrentLookups() throws -> ResultDigest {
        let reads = self
        return try lookUpConcurrently({ try reads.lookup(reads.ids[$0]) }, count: ids.count)
    }
}

extension SQLitePersonReads {
    func concurrentLookups() throws -> ResultDigest {
        let reads = self
        return try lookUpConcurrently({ try reads.lookup(reads.keys[$0]) }, count: keys.count)
    }
}

/// What the workloads that write leave, read back from either engine and
/// digested alike: the count, and the values of a sample of people (with
/// their keys where both engines gave the same ones).
enum PersonSample {
    /// The age of the people the single-record saves add, beyond the data set's (0..<1000) and the update's (1000).
    static let savedAge: Int64 = 2000

    static func digest(count: Int, rows: [some PersonFields], keyed: Bool, keySet: [Int64]? = nil) -> ResultDigest {
        var digest = ResultDigest(count: count)
        let sorted = keyed ? rows.sorted { $0.key < $1.key }
            : rows.sorted { ($0.orderingValue, $0.dateCreated, $0.lastName, $0.firstName, $0.age) < ($1.orderingValue, $1.dateCreated, $1.lastName, $1.firstName, $1.age) }
        for row in sorted {
            if keyed { digest.add(row.key) }
            digest.add(row.firstName)
            digest.add(row.lastName)
            digest.add(row.age)
            digest.add(row.orderingValue)
            digest.add(row.dateCreated.timeIntervalSinceReferenceDate)
        }
        if let keySet { digest.add(ResultDigest(keySet: keySet)) }
        return digest
    }

    // LogStore

    private static func rows(_ store: Store, _ predicate: String) throws -> [StoredPerson] {
        try store.newContext().fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate(predicate)), as: BenchPerson.self)
            .map { StoredPerson($0) }
    }

    /// The count and the people aged 500, by key.
    static func inserted(_ store: Store) throws -> ResultDigest {
        digest(count: try store.newContext().count("Person"), rows: try rows(store, "age == 500"), keyed: true)
    }

    /// After the update, the people aged 1000 by key; after the delete, every key left and the people aged 500.
    static func changed(_ store: Store, updating: Bool) throws -> ResultDigest {
        let count = try store.newContext().count("Person")
        if updating { return digest(count: count, rows: try rows(store, "age == 1000"), keyed: true) }
        let keys = try store.newContext().fetchIDs(FetchRequest(entityName: "Person")).map { Int64($0.key) }
        return digest(count: count, rows: try rows(store, "age == 500"), keyed: true, keySet: keys)
    }

    /// The people the saves added, by their values (each engine picks their keys).
    static func saved(_ store: Store) throws -> ResultDigest {
        digest(count: try store.newContext().count("Person"), rows: try rows(store, "age >= \(savedAge)"), keyed: false)
    }

    // SQLite

    private static func rows(_ db: Database, _ condition: String) throws -> [GRDBPersonRow] {
        try GRDBPersonRow.fetchAll(db, sql: "SELECT * FROM person WHERE \(condition)")
    }

    static func inserted(_ db: Database) throws -> ResultDigest {
        digest(count: try GRDBPerson.fetchCount(db), rows: try rows(db, "age = 500"), keyed: true)
    }

    static func changed(_ db: Database, updating: Bool) throws -> ResultDigest {
        let count = try GRDBPerson.fetchCount(db)
        if updating { return digest(count: count, rows: try rows(db, "age = 1000"), keyed: true) }
        return digest(count: count, rows: try rows(db, "age = 500"), keyed: true, keySet: try Int64.fetchAll(db, sql: "SELECT id FROM person"))
    }

    static func saved(_ db: Database) throws -> ResultDigest {
        digest(count: try GRDBPerson.fetchCount(db), rows: try rows(db, "age >= \(savedAge)"), keyed: false)
    }
}
