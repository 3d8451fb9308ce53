// Decimal attributes are stored as decimals (format version 3): exact and
// numeric in every plan, in dictionary results, aggregates and validation,
// and files of versions 1 and 2, which stored their text, still read.

import Foundation
import Testing
@testable import LogStore

@Suite("Decimal values")
struct DecimalTests {
    static func model(indexed: Bool, minimum: Double? = nil) throws -> Model {
        try Model {
            Entity("Item") {
                Attribute("tag", .string)
                Attribute("price", .decimal, indexed: indexed, rules: minimum.map { [.minimum($0), .maximum(1_000)] } ?? [])
            }
        }
    }

    static let prices = ["9", "10", "2.5", "19.99", "0.1", "100.000000000000000000000001"]

    static func store(_ path: String, indexed: Bool) throws -> Store {
        let store = try Store(path: path, model: try model(indexed: indexed), options: JournalOptions(durability: .deferredToOS))
        let context = store.newContext()
        // More than an index keeps unsorted, so its sorted part is walked.
        for index in 0..<1_100 {
            let item = try context.insert("Item")
            item["tag"] = "pad\(index)"
        }
        for price in prices {
            let item = try context.insert("Item")
            item["tag"] = price
            item["price"] = Decimal(string: price)!
        }
        try context.save()
        return store
    }

    static func tags(_ context: ObjectContext, _ request: FetchRequest) throws -> [String] {
        try context.fetch(request).map { $0["tag"] as! String }.filter { !$0.hasPrefix("pad") }
    }

    @Test("Decimals sort numerically and compare exactly in an index walk, a lookup and a scan")
    func orderAndEquality() throws {
        try withTemporaryDirectory { directory in
            for indexed in [true, false] {
                let store = try Self.store(directory + "/\(indexed).logstore", indexed: indexed)
                defer { store.close() }
                let context = store.newContext()
                let sorted = FetchRequest(entityName: "Item", predicate: try ObjectPredicate("price != nil"), sortDescriptors: [SortKey("price")], fetchLimit: 4)
                #expect(try Self.tags(context, sorted) == ["0.1", "2.5", "9", "10"], "indexed: \(indexed)")
                let cases: [(ObjectPredicate, [String])] = [
                    (try ObjectPredicate("price == 19.99"), ["19.99"]),
                    (try ObjectPredicate("price == %@", Decimal(string: "19.99")!), ["19.99"]),
                    (try ObjectPredicate("price > 9.5"), ["10", "19.99", "100.000000000000000000000001"]),
                    (try ObjectPredicate("price > 100"), ["100.000000000000000000000001"]),
                    (try ObjectPredicate("price BETWEEN {2.5, 10}"), ["9", "10", "2.5"]),
                    (try ObjectPredicate("price IN {0.1, 9}"), ["9", "0.1"]),
                    (try ObjectPredicate("price * 2 == 0.2"), ["0.1"]),
                ]
                for (predicate, expected) in cases {
                    let fetched = try Self.tags(context, FetchRequest(entityName: "Item", predicate: predicate))
                    #expect(fetched.sorted() == expected.sorted(), "\(predicate), indexed: \(indexed)")
                    let all = try context.fetch(FetchRequest(entityName: "Item"))
                    #expect(try all.filter(predicate).map { $0["tag"] as! String }.sorted() == expected.sorted(), "\(predicate) in memory")
                }
            }
        }
    }

    @Test("Dictionary results give decimals back exactly, and sums and averages are exact")
    func dictionaryResults() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.store(directory + "/d.logstore", indexed: false)
            defer { store.close() }
            let context = store.newContext()
            var request = FetchRequest(entityName: "Item", predicate: try ObjectPredicate("tag == '19.99'"))
            request.propertiesToFetch = [.attribute("price")]
            #expect(try context.fetchDictionaries(request).first?["price"] as? Decimal == Decimal(string: "19.99"))
            request.predicate = try ObjectPredicate("price < 1 OR tag == '19.99' OR tag == '2.5'")
            request.propertiesToFetch = [.aggregate(.sum, of: "price", as: "sum"), .aggregate(.average, of: "price", as: "average"),
                                         .aggregate(.maximum, of: "price", as: "max")]
            let row = try #require(try context.fetchDictionaries(request).first)
            #expect(row["sum"] as? Decimal == Decimal(string: "22.59"))
            #expect(row["average"] as? Decimal == Decimal(string: "7.53"))
            #expect(row["max"] as? Decimal == Decimal(string: "19.99"))
        }
    }

    @Test("Minimum and maximum rules apply to decimals")
    func validationRules() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/v.logstore", model: try Self.model(indexed: false, minimum: 1))
            defer { store.close() }
            let context = store.newContext()
            let item = try context.insert("Item")
            item["price"] = Decimal(string: "0.5")!
            #expect {
                try context.save()
            } throws: { error in
                (error as? LogStoreError)?.kind == .validationFailed
            }
            item["price"] = Decimal(string: "1000.0000001")!
            #expect(throws: LogStoreError.self) { try context.save() }
            item["price"] = Decimal(string: "999.99")!
            try context.save()
        }
    }

    @Test("A predicate with a decimal prints as CAST(\"…\", \"NSDecimalNumber\") and parses back")
    func descriptionRoundTrip() throws {
        let predicate = try ObjectPredicate("price == %@", Decimal(string: "-19.990")!)
        #expect(predicate.description == #"price == CAST("-19.99", "NSDecimalNumber")"#)
        #expect(try ObjectPredicate(predicate.description) == predicate)
    }

    @Test("A format version 1 file, whose decimals are text, reads as decimals and is rewritten as version 3 when opened for writing")
    func legacyText() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/legacy.logstore"
            // A store that has recorded its model, then, as version 1 code
            // wrote them, decimals as text.
            try Store(path: path, model: try Self.model(indexed: true)).close()
            var bytes = try JournalFixtures.read(path)
            JournalFixtures.store(UInt16(1), into: &bytes, at: 8)
            JournalFixtures.store(UInt16(1), into: &bytes, at: 10)
            JournalFixtures.resignHeader(&bytes)
            try JournalFixtures.write(bytes, to: path)
            do {
                let journal = try Journal(path: path)
                defer { journal.close() }
                let item = journal.symbol(for: "Item"), tag = journal.symbol(for: "tag"), price = journal.symbol(for: "price")
                for (key, text) in Self.prices.enumerated() {
                    _ = try journal.append([.insert(RecordID(entity: item, key: UInt64(key + 1)), [Field(tag, .string(text)), Field(price, .string(text))])])
                }
                #expect(throws: LogStoreError.self) {
                    _ = try journal.append([.insert(RecordID(entity: item, key: 99), [Field(price, .decimal(1))])])
                }
            }
            let sorted = FetchRequest(entityName: "Item", sortDescriptors: [SortKey("price")], fetchLimit: 4)
            do {
                let store = try Store(path: path, model: try Self.model(indexed: true), options: JournalOptions(access: .readOnly))
                defer { store.close() }
                #expect(try Self.tags(store.newContext(), sorted) == ["0.1", "2.5", "9", "10"])
                #expect(store.journal.header.readVersion == 1)
            }
            let store = try Store(path: path, model: try Self.model(indexed: true))
            #expect(try StoreInspector.info(path: path).readVersion == JournalOptions().snapshotFormat.fileVersion)
            #expect(try Self.tags(store.newContext(), sorted) == ["0.1", "2.5", "9", "10"])
            store.close()
            let reopened = try Store(path: path, model: try Self.model(indexed: true))
            defer { reopened.close() }
            let context = reopened.newContext()
            #expect(try context.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("tag == '19.99'"))).first?["price"] as? Decimal == Decimal(string: "19.99"))
            #expect(try StoreInspector.verify(path: path).isValid)
        }
    }
}
