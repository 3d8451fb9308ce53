// Scenario 1's inventory app under load: each round inserts, moves and
// deletes items in one durable save, then shows the list sorted by
// orderingValue and the expensive items.

import Foundation
import GRDB
import LogStore

/// An inventory item as the app defines it for LogStore.
final class BenchItem: ManagedObject {
    @Managed("itemName") var itemName: String?
    @Managed("valueInDollars") var valueInDollars: Int32
    @Managed("orderingValue") var orderingValue: Double
    @Managed("dateCreated") var dateCreated: Date?
}

/// An item's values, as both engines' fetches return them: GRDB reads it
/// by a hand-written `init(row:)` (columns by position, `SELECT *`, the date
/// from REAL seconds since the reference date, 8 bytes as LogStore stores
/// it); LogStore's objects are copied into it before their context is freed.
struct ItemRow: FetchableRecord, Sendable {
    var itemName: String
    var valueInDollars: Int32
    var orderingValue: Double
    var dateCreated: Date

    init(itemName: String, valueInDollars: Int32, orderingValue: Double, dateCreated: Date) {
        self.itemName = itemName
        self.valueInDollars = valueInDollars
        self.orderingValue = orderingValue
        self.dateCreated = dateCreated
    }

    init(row: Row) {
        itemName = row[1]
        valueInDollars = row[2]
        orderingValue = row[3]
        dateCreated = Date(timeIntervalSinceReferenceDate: row[4])
    }

    init(_ item: BenchItem) {
        self.init(itemName: item.itemName ?? "", valueInDollars: item.valueInDollars,
                  orderingValue: item.orderingValue, dateCreated: item.dateCreated ?? .distantPast)
    }
}

/// What one round's two fetches returned.
struct InventoryFetches {
    var list: [ItemRow]
    var expensive: [ItemRow]

    /// The list in order; the expensive items, which have no order, sorted by their values.
    func add(to digest: inout ResultDigest) {
        let sorted = expensive.sorted { ($0.valueInDollars, $0.orderingValue, $0.itemName) < ($1.valueInDollars, $1.orderingValue, $1.itemName) }
        for item in list + sorted {
            digest.add(item.itemName)
            digest.add(Int64(item.valueInDollars))
            digest.add(item.orderingValue)
            digest.add(item.dateCreated.timeIntervalSinceReferenceDate)
        }
        digest.add(Int64(expensive.count))
    }
}

/// The mixed workload at one size: `size` items to start with, in both stores.
struct InventoryMix {
    let size: Int
    let context: BenchmarkContext
    let limits: MachineLimits
    let recordBytes: Double

    static let insertsPerRound = 10, movesPerRound = 10, deletesPerRound = 5, listed = 50
    static let expensive = "valueInDollars > 2450"

    /// Rounds per sample: fewer on large sets, where each expensive-items
    /// scan reads every item.
    private var rounds: Int { max(5, min(50, 5_000_000 / size)) }

    static func model() throws -> Model {
        try Model {
            Entity("Item", BenchItem.self) {
                Attribute("itemName", .string)
                Attribute("valueInDollars", .int32, default: Int32(0))
                Attribute("orderingValue", .double, default: 0.0, indexed: true)
                Attribute("dateCreated", .date)
            }
        }
    }

    func run() throws -> ScalingRow {
        context.log("scaling \(size.formatted()): inventory mix, building \(size.formatted()) items in both stores")
        let items = Self.items(size, seed: 9)
        let model = try Self.model()
        let storePath = context.scratch.freshPath("inventory-\(size).logstore")
        let sqlitePath = context.scratch.freshPath("inventory-\(size).sqlite")
        var sqliteCopies: [String] = []
        defer {
            context.scratch.remove(storePath)
            for path in [sqlitePath] + sqliteCopies { SQLiteFiles.remove(path) }
        }
        do {
            let store = try Store(path: storePath, model: model, options: JournalOptions(compaction: .manual))
            for start in stride(from: 0, to: items.count, by: PersonModel.peoplePerSave) {
                let objects = store.newContext()
                for values in items[start..<min(start + PersonModel.peoplePerSave, items.count)] { try Self.insert(values, into: objects) }
                try objects.save()
            }
            _ = try store.compact()
            store.close()
        }
        do {
            let database = try Self.openDatabase(sqlitePath, memory: .defaults)
            try database.write { db in
                for item in items { try Self.insert(item, db) }
            }
            try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try database.close()
        }
        // SQLite at its defaults and with a page cache as large as the
        // database, each on its own copy, making the same changes.
        let databaseBytes = SQLiteFiles.paths(of: sqlitePath).reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
        let variants = SQLiteMemory.variants(databaseBytes: databaseBytes).filter { if case .mmap = $0 { false } else { true } }
        for index in variants.indices {
            let copy = context.scratch.freshPath("inventory-\(size)-\(index).sqlite")
            try FileManager.default.copyItem(atPath: sqlitePath, toPath: copy)
            sqliteCopies.append(copy)
            // Written back now, so its writeback does not land inside a measurement.
            try synchronizeFile(at: copy)
        }

        var logStoreLive = Array(1...Int64(size))
        var sqliteLive = Array(repeating: logStoreLive, count: variants.count)
        let side = SideBySide(workload: .inventoryMix, size: size, repetitions: context.repetitions, check: .bothStoresAgree)
        var logStoreRepetition = 0
        var sqliteRepetitions = Array(repeating: 0, count: variants.count)
        let runs = try side.run(
            logStore: {
                defer { logStoreRepetition += 1 }
                let store = try Store(path: storePath, model: model)
                defer { store.close() }
                try Self.warm(store)
                // The clock runs until a compaction the saves started has finished.
                return try timedRounds(repetition: logStoreRepetition, until: { try store.waitUntilQuiescent() }) { random in
                    try logStoreRound(store, &logStoreLive, &random)
                }
            },
            sqlite: variants.indices.map { index in
                (variants[index], {
                    defer { sqliteRepetitions[index] += 1 }
                    let database = try Self.openDatabase(sqliteCopies[index], memory: variants[index])
                    defer { try? database.close() }
                    try database.read { db in try SQLiteMemory.warm(db, table: "item") }
                    return try timedRounds(repetition: sqliteRepetitions[index], until: {}) { random in
                        try sqliteRound(database, &sqliteLive[index], &random)
                    }
                })
            })
        context.log("scaling \(size.formatted()): inventory mix, resident memory of each engine's fetches")
        let logStoreResident = try Self.resident(.inventoryFetchesLogStore, storePath)
        return try side.row(runs, limits: limits, recordBytes: recordBytes) { memory in
            guard let memory else { return logStoreResident }
            let index = variants.firstIndex(of: memory)!
            return try Self.resident(.inventoryFetchesSQLite, sqliteCopies[index], memory.argument)
        }
    }

    private static func resident(_ kind: Probe.Kind, _ path: String, _ arguments: String...) throws -> ResidentMemory {
        let result = try Probe.run(kind, path: path, count: 0, arguments).result
        return ResidentMemory(total: result.totalResidentBytes ?? 0, added: result.residentBytes ?? 0)
    }

    /// `rounds` rounds, timed together with `until` (what the rounds leave
    /// running); the random choices depend only on the repetition, so both
    /// stores make the same ones. The fetches are digested off the clock.
    private func timedRounds(repetition: Int, until finished: () throws -> Void, _ body: (inout SeededRandom) throws -> InventoryFetches) throws -> CaseRun {
        var random = SeededRandom(seed: 9_000 + UInt64(repetition))
        var fetched: [InventoryFetches] = []
        fetched.reserveCapacity(rounds)
        let seconds = try Stopwatch.seconds {
            for _ in 0..<rounds { fetched.append(try body(&random)) }
            try finished()
        }
        var digest = ResultDigest()
        for fetches in fetched { fetches.add(to: &digest) }
        return CaseRun(work: Double(rounds), operations: Double(rounds), seconds: seconds, digest: digest)
    }

    private func logStoreRound(_ store: Store, _ live: inout [Int64], _ random: inout SeededRandom) throws -> InventoryFetches {
        let objects = store.newContext()
        var inserted: [BenchItem] = []
        for values in Self.items(Self.insertsPerRound, using: &random) { inserted.append(try Self.insert(values, into: objects)) }
        for _ in 0..<Self.movesPerRound {
            let key = live[Int(random.next() % UInt64(live.count))]
            let item = try objects.object(with: ObjectID(storeID: store.storeID, entityName: "Item", key: UInt64(key))) as! BenchItem
            item.orderingValue = Self.randomOrdering(&random)
        }
        for _ in 0..<Self.deletesPerRound {
            let index = Int(random.next() % UInt64(live.count))
            try objects.delete(try objects.object(with: ObjectID(storeID: store.storeID, entityName: "Item", key: UInt64(live[index]))))
            live.swapAt(index, live.count - 1)
            live.removeLast()
        }
        try objects.save()
        live += inserted.map { Int64($0.objectID.key) }
        return try Self.fetches(objects)
    }

    private func sqliteRound(_ database: any DatabaseWriter, _ live: inout [Int64], _ random: inout SeededRandom) throws -> InventoryFetches {
        try database.write { db in
            for item in Self.items(Self.insertsPerRound, using: &random) {
                try Self.insert(item, db)
                live.append(db.lastInsertedRowID)
            }
            let move = try db.cachedStatement(sql: "UPDATE item SET orderingValue = ? WHERE id = ?")
            for _ in 0..<Self.movesPerRound {
                // The new items are drawn from as LogStore's are: after the save.
                let key = live[Int(random.next() % UInt64(live.count - Self.insertsPerRound))]
                try move.execute(arguments: [Self.randomOrdering(&random), key])
            }
            let delete = try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?")
            for _ in 0..<Self.deletesPerRound {
                let index = Int(random.next() % UInt64(live.count - Self.insertsPerRound))
                try delete.execute(arguments: [live[index]])
                live.swapAt(index, live.count - Self.insertsPerRound - 1)
                live.remove(at: live.count - Self.insertsPerRound - 1)
            }
        }
        return try database.read(Self.fetches)
    }

    // MARK: - The fetches, shared with the memory probes

    /// The list's first items by orderingValue and the expensive items, as values.
    static func fetches(_ objects: ObjectContext) throws -> InventoryFetches {
        InventoryFetches(
            list: try objects.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("orderingValue")], fetchLimit: listed), as: BenchItem.self).map(ItemRow.init),
            expensive: try objects.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate(expensive)), as: BenchItem.self).map(ItemRow.init))
    }

    static func fetches(_ db: Database) throws -> InventoryFetches {
        InventoryFetches(
            list: try ItemRow.fetchAll(db.cachedStatement(sql: "SELECT * FROM item ORDER BY orderingValue LIMIT \(listed)")),
            expensive: try ItemRow.fetchAll(db.cachedStatement(sql: "SELECT * FROM item WHERE \(expensive)")))
    }

    /// The digest of one run of both fetches, for the memory probes.
    static func fetchesDigest(_ objects: ObjectContext) throws -> ResultDigest {
        var digest = ResultDigest()
        try fetches(objects).add(to: &digest)
        return digest
    }

    static func fetchesDigest(_ db: Database) throws -> ResultDigest {
        var digest = ResultDigest()
        try fetches(db).add(to: &digest)
        return digest
    }

    /// Decodes every block of the items into LogStore's block cache, as
    /// SQLiteMemory.warm reads every page.
    static func warm(_ store: Store) throws {
        try LogStoreWarm.warm(store, entity: "Item", scan: "itemName BEGINSWITH 'zz'")
    }

    // MARK: - Items

    /// A new place in the list: never a whole number, so never equal to a
    /// starting item's.
    private static func randomOrdering(_ random: inout SeededRandom) -> Double {
        (Double(random.next() % 1_000_000_000) + 0.5) / 1000
    }

    @discardableResult
    private static func insert(_ values: ItemRow, into objects: ObjectContext) throws -> BenchItem {
        let item = try objects.insert(BenchItem.self)
        item.itemName = values.itemName
        item.valueInDollars = values.valueInDollars
        item.orderingValue = values.orderingValue
        item.dateCreated = values.dateCreated
        return item
    }

    /// Inserts `values` through the connection's cached statement, the date
    /// bound as REAL seconds.
    private static func insert(_ values: ItemRow, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: "INSERT INTO item (itemName, valueInDollars, orderingValue, dateCreated) VALUES (?, ?, ?, ?)")
        try statement.execute(arguments: [values.itemName, values.valueInDollars, values.orderingValue, values.dateCreated.timeIntervalSinceReferenceDate])
    }

    /// The starting items: in list order, each place with a fraction, as
    /// an app's places between others are.
    private static func items(_ count: Int, seed: UInt64) -> [ItemRow] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            var item = items(1, using: &random)[0]
            item.orderingValue = Double(index) + Double(random.next() % 999 + 1) / 1000
            return item
        }
    }

    /// Items with dates to the millisecond, so SQLite's REAL is never a whole number.
    private static func items(_ count: Int, using random: inout SeededRandom) -> [ItemRow] {
        (0..<count).map { _ in
            ItemRow(itemName: random.phrase(2, from: inventoryWords),
                    valueInDollars: Int32(random.next() % 2500) + 1,
                    orderingValue: Self.randomOrdering(&random),
                    dateCreated: Date(timeIntervalSinceReferenceDate: 7.0e8 + Double(random.next() % 100_000_000_000) / 1000))
        }
    }

    /// WAL, synchronous FULL (each round's save is durable, as LogStore's
    /// default), `memory` on every connection, an index on orderingValue
    /// (as LogStore's model has), dates as REAL seconds.
    private static func openDatabase(_ path: String, memory: SQLiteMemory) throws -> DatabaseQueue {
        let database = try GRDBPeople.open(path, synchronousFull: true, pool: false, memory: memory) as! DatabaseQueue
        try database.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, itemName TEXT NOT NULL, valueInDollars INTEGER NOT NULL,
                    orderingValue REAL NOT NULL, dateCreated REAL NOT NULL);
                CREATE INDEX IF NOT EXISTS item_ordering ON item(orderingValue);
                """)
        }
        return database
    }
}
