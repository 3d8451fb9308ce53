// Fetch requests beyond the predicate language: sorting, pending changes,
// batches, windows, result types, dictionaries and aggregates, plans.

import Foundation
import Testing
@testable import LogStore

@Suite("Fetch requests")
struct FetchRequestTests {
    static func model(indexed: Bool = true) throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("first", .string)
                Attribute("last", .string)
                Attribute("age", .int64, indexed: indexed)
                Attribute("city", .string)
            }
        }
    }

    /// Opens a store in `directory` and inserts one person per tuple.
    static func store(_ directory: String, indexed: Bool = true, _ people: [(String?, String?, Int64?, String?)]) throws -> Store {
        let store = try Store(path: directory + "/people.logstore", model: try model(indexed: indexed), options: JournalOptions(durability: .deferredToOS))
        let context = store.newContext()
        for (first, last, age, city) in people {
            let person = try context.insert("Person")
            person["first"] = first
            person["last"] = last
            person["age"] = age
            person["city"] = city
        }
        try context.save()
        return store
    }

    static func names(_ objects: [ManagedObject]) -> [String] {
        objects.map { ($0["first"] as? String) ?? "nil" }
    }

    @Test("Sorting: nil first ascending and last descending, case and diacritics folded on request, several keys, stable for ties")
    func sorting() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.store(directory, [
                ("émile", "B", 30, "Oslo"), ("Emile", "A", 30, "oslo"), ("zoë", nil, 20, "Bergen"),
                ("Adam", "C", nil, "Oslo"), ("adam", "C", 20, nil), ("Eve", "A", 30, "Bergen"),
            ])
            defer { store.close() }
            let context = store.newContext()
            func sorted(_ keys: [SortKey]) throws -> [String] {
                Self.names(try context.fetch(FetchRequest(entityName: "Person", sortDescriptors: keys)))
            }
            // Unicode order by default: capitals before lower case, plain before accented.
            #expect(try sorted([SortKey("first")]) == ["Adam", "Emile", "Eve", "adam", "zoë", "émile"])
            #expect(try sorted([SortKey("first", options: .caseInsensitive)]) == ["Adam", "adam", "Emile", "Eve", "zoë", "émile"])
            #expect(try sorted([SortKey("first", options: [.caseInsensitive, .diacriticInsensitive])]) == ["Adam", "adam", "émile", "Emile", "Eve", "zoë"],
                    "ties (émile and Emile fold to the same) keep insertion order")
            #expect(try sorted([SortKey("age")]) == ["Adam", "zoë", "adam", "émile", "Emile", "Eve"], "nil first ascending")
            #expect(try sorted([SortKey("age", ascending: false)]) == ["émile", "Emile", "Eve", "zoë", "adam", "Adam"], "nil last descending")
            #expect(try sorted([SortKey("last"), SortKey("age", ascending: false), SortKey("first")]) == ["zoë", "Emile", "Eve", "émile", "adam", "Adam"])
            #expect(try sorted([SortKey("city", options: .caseInsensitive), SortKey("first")]) == ["adam", "Eve", "zoë", "Adam", "Emile", "émile"])
        }
    }

    @Test("Pending changes: inserted objects that match appear, deleted ones do not, updated ones match by their new values; the switch turns it off")
    func pendingChanges() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.store(directory, [("Ann", "A", 30, nil), ("Bob", "B", 40, nil), ("Cid", "C", 50, nil)])
            defer { store.close() }
            let context = store.newContext()
            let predicate = try ObjectPredicate("age >= 35")
            var request = FetchRequest(entityName: "Person", predicate: predicate, sortDescriptors: [SortKey("first")])
            #expect(Self.names(try context.fetch(request)) == ["Bob", "Cid"])
            let all = try context.fetch(FetchRequest(entityName: "Person", sortDescriptors: [SortKey("first")]))
            all[0]["age"] = Int64(36)  // Ann now matches
            try context.delete(all[2])  // Cid is gone
            let dan = try context.insert("Person")
            dan["first"] = "Dan"
            dan["age"] = Int64(99)
            let eve = try context.insert("Person")
            eve["first"] = "Eve"
            eve["age"] = Int64(1)  // does not match
            #expect(Self.names(try context.fetch(request)) == ["Ann", "Bob", "Dan"])
            #expect(try context.count(for: request) == 3)
            #expect(try context.fetch(request)[0] === all[0], "the context's own instance comes back")
            #expect(try context.fetchIDs(request) == [all[0].objectID, all[1].objectID, dan.objectID])
            #expect(try context.explain(request).pendingObjects == 3)
            request.includesPendingChanges = false
            #expect(Self.names(try context.fetch(request)) == ["Bob", "Cid"], "the saved state: Ann's saved age does not match, Cid's deletion is not saved")
            #expect(try context.fetchIDs(request) == [all[1].objectID, all[2].objectID])
            // Another context sees only what was saved.
            #expect(Self.names(try store.newContext().fetch(FetchRequest(entityName: "Person", predicate: predicate, sortDescriptors: [SortKey("first")]))) == ["Bob", "Cid"])
            try context.save()
            #expect(Self.names(try store.newContext().fetch(FetchRequest(entityName: "Person", predicate: predicate, sortDescriptors: [SortKey("first")]))) == ["Ann", "Bob", "Dan"])
        }
    }

    @Test("Limit and offset window the sorted results; limit 0 means none")
    func window() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.store(directory, (1...10).map { ("P\($0)", nil, Int64($0), nil) })
            defer { store.close() }
            let context = store.newContext()
            var request = FetchRequest(entityName: "Person", sortDescriptors: [SortKey("age", ascending: false)])
            request.fetchLimit = 3
            request.fetchOffset = 2
            #expect(Self.names(try context.fetch(request)) == ["P8", "P7", "P6"])
            request.fetchOffset = 9
            #expect(Self.names(try context.fetch(request)) == ["P1"])
            request.fetchOffset = 20
            #expect(try context.fetch(request).isEmpty)
            request.fetchLimit = 0
            request.fetchOffset = 0
            #expect(try context.count(for: request) == 10)
            request.fetchLimit = -1
            #expect(throws: LogStoreError.self) { try context.fetch(request) }
        }
    }

    @Test("Batch size: of 100,000 objects fetched with batch size 20, only the first batch and what is touched are loaded")
    func batches() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.store(directory, (0..<100_000).map { ("P\($0)", nil, Int64($0 % 1000), nil) })
            defer { store.close() }
            let context = store.newContext()
            var request = FetchRequest(entityName: "Person")
            request.fetchBatchSize = 20
            let people = try context.fetch(request)
            #expect(people.count == 100_000)
            #expect(people.count { !$0.isFault } == 20)
            #expect(people[50_000]["first"] as? String == "P50000")
            #expect(people[99_999]["age"] as? Int64 == 999)
            #expect(people.count { !$0.isFault } == 22)
            request.fetchBatchSize = 0
            request.fetchLimit = 100
            #expect(try store.newContext().fetch(request).allSatisfy { !$0.isFault }, "batch size 0 loads every object")
        }
    }

    @Test("Dictionaries: chosen attributes per object, and count, sum, avg, min, max per group, grouped by chosen attributes")
    func dictionaries() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.store(directory, [
                ("Ann", "A", 30, "Oslo"), ("Bob", "B", 40, "Bergen"), ("Cid", "C", 50, "Oslo"), ("Dag", nil, nil, "Oslo"),
            ])
            defer { store.close() }
            let context = store.newContext()
            var request = FetchRequest(entityName: "Person", sortDescriptors: [SortKey("first")])
            request.propertiesToFetch = [.attribute("first"), .attribute("age")]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 4)
            #expect(rows[0]["first"] as? String == "Ann" && rows[0]["age"] as? Int64 == 30)
            #expect(rows[3]["age"] == nil, "nil values are left out")

            request.sortDescriptors = [SortKey("city")]
            request.propertiesToGroupBy = ["city"]
            request.propertiesToFetch = [.attribute("city"), .count(as: "people"), .aggregate(.sum, of: "age", as: "total"),
                                         .aggregate(.average, of: "age", as: "mean"), .aggregate(.minimum, of: "first", as: "firstName"),
                                         .aggregate(.maximum, of: "age", as: "oldest")]
            let groups = try context.fetchDictionaries(request)
            #expect(groups.count == 2)
            #expect(groups[0]["city"] as? String == "Bergen" && groups[0]["people"] as? Int64 == 1 && groups[0]["total"] as? Int64 == 40)
            #expect(groups[1]["city"] as? String == "Oslo" && groups[1]["people"] as? Int64 == 3 && groups[1]["total"] as? Int64 == 80)
            #expect(groups[1]["mean"] as? Double == 40, "the average skips nil")
            #expect(groups[1]["firstName"] as? String == "Ann" && groups[1]["oldest"] as? Int64 == 50)

            var total = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age != nil"))
            total.propertiesToFetch = [.count(), .aggregate(.sum, of: "age", as: "sum")]
            let all = try context.fetchDictionaries(total)
            #expect(all.count == 1 && all[0]["count"] as? Int64 == 3 && all[0]["sum"] as? Int64 == 120)

            request.propertiesToFetch = [.attribute("first"), .count()]
            #expect(throws: LogStoreError.self, "an attribute neither grouped nor aggregated") { try context.fetchDictionaries(request) }
        }
    }

    @Test("A key the entity lacks fails when the fetch is made, naming entity and key; a sort key too")
    func unknownKeys() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.store(directory, [("Ann", "A", 30, nil)])
            defer { store.close() }
            let context = store.newContext()
            let predicate = try ObjectPredicate("shoeSize > 40")
            let error = #expect(throws: LogStoreError.self) { try context.fetch(FetchRequest(entityName: "Person", predicate: predicate)) }
            #expect(error?.kind == .unknownKey && error?.entity == "Person" && error?.attribute == "shoeSize")
            let sortError = #expect(throws: LogStoreError.self) { try context.fetch(FetchRequest(entityName: "Person", sortDescriptors: [SortKey("height")])) }
            #expect(sortError?.kind == .unknownKey && sortError?.attribute == "height")
            #expect(throws: LogStoreError.self) { try context.fetch(FetchRequest(entityName: "Animal")) }
            let count = #expect(throws: LogStoreError.self, "@count needs a to-many relationship") {
                try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("@count > 0")))
            }
            #expect(count?.kind == .invalidPredicate)
        }
    }

    @Test("The typed builder and the format string give the same predicate tree")
    func builderMatchesFormat() throws {
        let pairs: [(ObjectPredicate, String)] = [
            (PredicateKey("age") > 3, "age > 3"),
            (PredicateKey("age") >= 100 && PredicateKey("age") <= 200, "(age >= 100) AND (age <= 200)"),
            (PredicateKey("name").beginsWith("Sm", options: .caseInsensitive), "name BEGINSWITH[c] 'Sm'"),
            (PredicateKey("age").between(1, 10), "age BETWEEN {1, 10}"),
            (PredicateKey("age").in([1, 2, 3]), "age IN {1, 2, 3}"),
            (!(PredicateKey("name") == nil) || PredicateKey("city").like("O*o"), "NOT name == nil OR city LIKE 'O*o'"),
            (PredicateKey.any("pets.name") == "Rex", "ANY pets.name == 'Rex'"),
            (PredicateKey("pets.@count") > 1, "pets.@count > 1"),
            (PredicateKey("name").equals("émile", options: [.caseInsensitive, .diacriticInsensitive]), "name ==[cd] \"émile\""),
            (PredicateKey("name").matches("[A-Z].*"), "name MATCHES '[A-Z].*'"),
            (PredicateKey.none("pets.weight") > 10.5, "NONE pets.weight > 10.5"),
        ]
        for (built, format) in pairs {
            #expect(built == (try ObjectPredicate(format)), "\(format)")
        }
    }

    @Test("Plans: equality, IN and ranges on an indexed attribute use its index; a sorted read with a limit reads only what it needs; the rest scans")
    func plans() throws {
        try withTemporaryDirectory { directory in
            let people = (0..<5_000).map { index -> (String?, String?, Int64?, String?) in ("P\(index)", "L\(index % 7)", Int64(index % 1000), nil) }
            let store = try Self.store(directory, people)
            defer { store.close() }
            let context = store.newContext()
            func plan(_ format: String, sort: [SortKey] = [], limit: Int = 0) throws -> FetchPlan {
                var request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate(format), sortDescriptors: sort)
                request.fetchLimit = limit
                return try context.explain(request)
            }
            let equal = try plan("age == 500")
            #expect(equal.strategy == .indexLookup(attribute: "age") && equal.examinedRows == 5 && equal.matchedRows == 5)
            let range = try plan("age >= 100 AND age <= 199 AND last == 'L3'")
            #expect(range.strategy == .indexLookup(attribute: "age") && range.examinedRows == 500)
            #expect(try plan("age BETWEEN {10, 12}").examinedRows == 15)
            #expect(try plan("age IN {1, 2, 2, 3}").matchedRows == 15)
            #expect(try plan("last == 'L3'").strategy == .fullScan)
            #expect(try plan("age == 5 OR age == 6").strategy == .fullScan, "OR is not planned with indexes")
            // String options on a number: refused when parsed, before any plan.
            #expect(throws: LogStoreError.self) { try plan("age ==[c] 5") }
            let ordered = try plan("TRUEPREDICATE", sort: [SortKey("age", ascending: false), SortKey("first")], limit: 20)
            #expect(ordered.strategy == .indexOrder(attribute: "age"))
            #expect(ordered.examinedRows == 20, "reads 20 records (4 ages of 5 people), not 5,000: \(ordered)")
            var request = FetchRequest(entityName: "Person", sortDescriptors: [SortKey("age", ascending: false), SortKey("first")], fetchLimit: 7)
            #expect(Self.names(try context.fetch(request)) == ["P1999", "P2999", "P3999", "P4999", "P999", "P1998", "P2998"])
            // Index results equal scan results, also after changes and deletes.
            let all = try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age < 3")))
            for person in all.prefix(5) { try context.delete(person) }
            all[6]["age"] = Int64(999)
            try context.save()
            request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age < 3 OR age == 999"), sortDescriptors: [SortKey("first")])
            let scanned = Self.names(try context.fetch(request))
            request.predicate = try ObjectPredicate("age IN {0, 1, 2, 999}")
            #expect(Self.names(try context.fetch(request)) == scanned)
            #expect(scanned.count == 15 - 5 + 5)
        }
    }
}
