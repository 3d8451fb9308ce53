// Realistic small transactions: one inventory item inserted per save.

import Foundation
import LogStore

/// The inserts an inventory app makes: an item with a name, a serial number,
/// a price, a quantity, a creation date, a UUID and free-text notes. Encoded
/// by the journal they take 100 to 300 bytes, depending mostly on the notes.
struct InventoryItems {
    let item: Symbol
    let name: Symbol, serialNumber: Symbol, valueInDollars: Symbol, quantity: Symbol
    let dateCreated: Symbol, itemID: Symbol, notes: Symbol
    private var random: SeededRandom
    private var nextKey: UInt64 = 1

    init(journal: Journal, seed: UInt64 = 0x17e_5eed) {
        item = journal.symbol(for: "Item")
        name = journal.symbol(for: "itemName")
        serialNumber = journal.symbol(for: "serialNumber")
        valueInDollars = journal.symbol(for: "valueInDollars")
        quantity = journal.symbol(for: "quantity")
        dateCreated = journal.symbol(for: "dateCreated")
        itemID = journal.symbol(for: "itemID")
        notes = journal.symbol(for: "notes")
        random = SeededRandom(seed: seed)
    }

    /// The next item's insert, as one transaction.
    mutating func nextTransaction() -> [RecordChange] {
        defer { nextKey += 1 }
        let uuid = UUID(uuid: withUnsafeBytes(of: (random.next(), random.next())) { raw in
            raw.load(as: uuid_t.self)
        })
        let fields = [
            Field(name, .string(random.phrase(Int.random(in: 2...4, using: &random), from: inventoryWords))),
            Field(serialNumber, .string(random.code(10))),
            Field(valueInDollars, .int32(Int32.random(in: 1...2_500, using: &random))),
            Field(quantity, .int16(Int16.random(in: 0...400, using: &random))),
            Field(dateCreated, .date(Date(timeIntervalSinceReferenceDate: Double.random(in: 7.0e8...8.0e8, using: &random)))),
            Field(itemID, .uuid(uuid)),
            Field(notes, .string(random.phrase(Int.random(in: 5...28, using: &random), from: inventoryWords))),
        ]
        return [.insert(RecordID(entity: item, key: nextKey), fields)]
    }
}

extension InventoryItems {
    /// Writes a new journal at `path` of `count` item inserts, one a
    /// transaction, without fsync, and closes it.
    static func writeJournal(at path: String, count: Int) throws -> JournalStatistics {
        let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
        defer { journal.close() }
        var items = InventoryItems(journal: journal)
        for _ in 0..<count { try journal.append(items.nextTransaction()) }
        return journal.statistics
    }
}
