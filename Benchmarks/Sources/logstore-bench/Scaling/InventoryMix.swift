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

/// The same item as a GRDB record.
struct GRDBItem: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int64?
    var itemName: String
    var valueInDollars: Int32
    var orderingValue: Double
    var dateCreated: Date
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

    func run() throws -> ScalingRow {
        context.log("scaling \(size.formatted()): inventory mix, building \(size.formatted()) items in both stores")
        let items = Self.items(size, seed: 9)
        let model = try Model {
            Entity("Item", BenchItem.self) {
                Attribute("itemName", .string)
                Attribute("valueInDollars", .int32, default: Int32(0))
                Attribute("orderingValue", .double, default: 0.0, indexed: true)
                Attribute("dateCreated", .date)
            }
        }
        let storePath = context.scratch.freshPath("inventory-\(size).logstore")
        let sqlitePath = context.scratch.freshPath("inventory-\(size).sqlite")
        defer {
            context.scratch.remove(storePath)
            SQLiteFiles.remove(sqlitePath)
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
        let database = try Self.openDatabase(sqlitePath)
        try database.write { db in
            for item in items { try item.insert(db) }
        }
        try (database as? DatabaseQueue)?.close()

        var logStoreLive = Array(1...Int64(size)), sqliteLive = logStoreLive
        let side = SideBySide(workload: .inventoryMix, size: size, repetitions: context.repetitions, check: .bothStoresAgree)
        var logStoreRepetition = 0, sqliteRepetition = 0
        let runs = try side.run(
            logStore: {
                defer { logStoreRepetition += 1 }
                let store = try Store(path: storePath, model: model)
                defer { store.close() }
                return try timedRounds(repetition: logStoreRepetition) { random, digest in
                    try logStoreRound(store, &logStoreLive, &random, &digest)
                }
            },
            sqlite: {
                defer { sqliteRepetition += 1 }
                let database = try Self.openDatabase(sqlitePath)
                defer { try? (database as? DatabaseQueue)?.close() }
                return try timedRounds(repetition: sqliteRepetition) { random, digest in
                    try sqliteRound(database, &sqliteLive, &random, &digest)
                }
            })
        return side.row(runs, limits: limits, recordBytes: recordBytes)
    }

    /// `rounds` rounds, timed together; the random choices depend only on
    /// the repetition, so both stores make the same ones.
    private func timedRounds(repetition: Int, _ body: (inout SeededRandom, inout ResultDigest) throws -> Void) throws -> CaseRun {
        var random = SeededRandom(seed: 9_000 + UInt64(repetition))
        var digest = ResultDigest()
        let seconds = try Stopwatch.seconds {
            for _ in 0..<rounds { try body(&random, &digest) }
        }
        return CaseRun(work: Double(rounds), operations: Double(rounds), seconds: seconds, digest: digest)
    }

    private func logStoreRound(_ store: Store, _ live: inout [Int64], _ random: inout SeededRandom, _ digest: inout ResultDigest) throws {
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

        let list = try objects.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("orderingValue")], fetchLimit: Self.listed), as: BenchItem.self)
        for item in list {
            digest.add(item.itemName ?? "")
            digest.add(item.orderingValue)
        }
        let expensive = try objects.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate(Self.expensive)), as: BenchItem.self)
        digest.add(Int64(expensive.count))
        digest.add(expensive.reduce(Int64(0)) { $0 + Int64($1.valueInDollars) })
    }

    private func sqliteRound(_ database: any DatabaseWriter, _ live: inout [Int64], _ random: inout SeededRandom, _ digest: inout ResultDigest) throws {
        try database.write { db in
            for item in Self.items(Self.insertsPerRound, using: &random) {
                try item.insert(db)
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
        let (list, expensive) = try database.read { db in
            (try GRDBItem.fetchAll(db.cachedStatement(sql: "SELECT * FROM item ORDER BY orderingValue LIMIT \(Self.listed)")),
             try GRDBItem.fetchAll(db.cachedStatement(sql: "SELECT * FROM item WHERE \(Self.expensive)")))
        }
        for item in list {
            digest.add(item.itemName)
            digest.add(item.orderingValue)
        }
        digest.add(Int64(expensive.count))
        digest.add(expensive.reduce(Int64(0)) { $0 + Int64($1.valueInDollars) })
    }

    // MARK: - Items

    /// A new place in the list: never a whole number, so never equal to a
    /// starting item's.
    private static func randomOrdering(_ random: inout SeededRandom) -> Double {
        (Double(random.next() % 1_000_000_000) + 0.5) / 1000
    }

    @discardableResult
    private static func insert(_ values: GRDBItem, into objects: ObjectContext) throws -> BenchItem {
        let item = try objects.insert(BenchItem.self)
        item.itemName = values.itemName
        item.valueInDollars = values.valueInDollars
        item.orderingValue = values.orderingValue
        item.dateCreated = values.dateCreated
        return item
    }

    private static func items(_ count: Int, seed: UInt64) -> [GRDBItem] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            var item = items(1, using: &random)[0]
            item.orderingValue = Double(index)
            return item
        }
    }

    private static func items(_ count: Int, using random: inout SeededRandom) -> [GRDBItem] {
        (0..<count).map { _ in
            GRDBItem(id: nil, itemName: random.phrase(2, from: inventoryWords),
                     valueInDollars: Int32(random.next() % 2500) + 1,
                     orderingValue: Self.randomOrdering(&random),
                     dateCreated: Date(timeIntervalSinceReferenceDate: 7.0e8 + Double(random.next() % 100_000_000)))
        }
    }

    /// WAL, synchronous FULL (each round's save is durable, as LogStore's
    /// default), an index on orderingValue.
    private static func openDatabase(_ path: String) throws -> any DatabaseWriter {
        let database = try GRDBPeople.open(path, synchronousFull: true, pool: false)
        try database.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, itemName TEXT NOT NULL, valueInDollars INTEGER NOT NULL,
                    orderingValue DOUBLE NOT NULL, dateCreated DATETIME NOT NULL);
                CREATE INDEX IF NOT EXISTS item_ordering ON item(orderingValue);
                """)
        }
        return database
    }
}
