// Edge cases of the fetch and predicate layer that a review found wrong,
// each asserting Core Data's behaviour or the library's own promise.

import Foundation
import Testing
@_spi(QueryPlans) @testable import LogStore

enum EdgeCases {
    static func model(indexed: Bool) throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("first", .string, indexed: indexed)
                Attribute("last", .string)
                Attribute("age", .int64, indexed: indexed)
                Attribute("city", .string)
                Attribute("birth", .date, indexed: indexed)
                Attribute("price", .decimal)
                Attribute("uid", .uuid)
                Relationship("home", to: "Home", inverse: "residents")
            }
            Entity("Home") {
                Attribute("city", .string)
                Relationship("residents", to: "Person", inverse: "home", toMany: true)
            }
        }
    }

    static func store(_ path: String, indexed: Bool, _ fill: (ObjectContext) throws -> Void) throws -> Store {
        let store = try Store(path: path, model: try model(indexed: indexed), options: JournalOptions(durability: .deferredToOS))
        let context = store.newContext()
        try fill(context)
        try context.save()
        return store
    }

    static func person(_ context: ObjectContext, _ first: String?, age: Int64? = nil, city: String? = nil) throws -> ManagedObject {
        let person = try context.insert("Person")
        person["first"] = first
        person["age"] = age
        person["city"] = city
        return person
    }

    static func names(_ objects: [ManagedObject]) -> [String] {
        objects.map { ($0["first"] as? String) ?? "nil" }.sorted()
    }

    /// The names a predicate fetches from an indexed and from an unindexed store holding the same people.
    static func both(_ directory: String, _ predicate: ObjectPredicate, _ people: [(String, Int64?)]) throws -> (indexed: [String], scanned: [String]) {
        var results: [[String]] = []
        for indexed in [true, false] {
            let store = try EdgeCases.store(directory + "-\(indexed).logstore", indexed: indexed) { context in
                for (name, age) in people {
                    let person = try EdgeCases.person(context, name, age: age)
                    person["birth"] = Date(timeIntervalSinceReferenceDate: Double(age ?? 0) * 86_400)
                }
            }
            defer { store.close() }
            results.append(EdgeCases.names(try store.newContext().fetch(FetchRequest(entityName: "Person", predicate: predicate))))
        }
        return (results[0], results[1])
    }
}

@Suite("Fetch edge cases found in review")
struct FetchEdgeCaseTests {
    // 1. SecondaryIndex.count(in:) counts a record twice for IN values that are
    //    equal but hash differently (5 and 5.0, YES and 1).
    @Test("count(for:) with IN {5, 5.0} on an indexed attribute equals the fetch count")
    func inDuplicatesAcrossNumberKinds() throws {
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/s.logstore", indexed: true) { context in
                // More than the index's tail holds, so that a save merges them into its sorted part.
                for index in 0..<1_100 { _ = try EdgeCases.person(context, "P\(index)", age: Int64(index % 550)) }
            }
            defer { store.close() }
            let context = store.newContext()
            let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age IN {5, 5.0}"))
            #expect(try context.fetch(request).count == 2)
            let counted = try context.count(for: request)
            #expect(counted == 2, "count(for:) says \(counted)")
        }
    }

    // 2. The planner treats a one-element list constant as a scalar for ==, <, …
    @Test("age == {5} (and age == %@ with [5]) finds the same with and without an index: nothing (a number never equals an array)")
    func oneElementListIsNotAScalar() throws {
        try withTemporaryDirectory { directory in
            for predicate in [try ObjectPredicate("age == {5}"), try ObjectPredicate("age == %@", [5]), try ObjectPredicate("age < {6}")] {
                let (indexed, scanned) = try EdgeCases.both(directory + "/\(UUID().uuidString)", predicate, [("A", 5), ("B", 7)])
                #expect(scanned == [], "\(predicate)")
                #expect(indexed == scanned, "\(predicate)")
            }
        }
    }

    // 3. Range lookups with a constant of another kind: the index orders
    //    kinds (numbers < dates < strings) and returns rows, the scan says false.
    @Test("age < 'z', first > 5, birth < '2030' find the same with and without an index")
    func crossKindRanges() throws {
        try withTemporaryDirectory { directory in
            for predicate in [try ObjectPredicate("age < 'z'"), try ObjectPredicate("first > 5"), try ObjectPredicate("birth < %@", "2030-01-01"),
                              try ObjectPredicate("age BETWEEN {1, 'z'}")] {
                let (indexed, scanned) = try EdgeCases.both(directory + "/\(UUID().uuidString)", predicate, [("A", 5), ("B", 7)])
                #expect(indexed == scanned, "\(predicate): indexed \(indexed), scanned \(scanned)")
            }
        }
    }

    // 4. Decimal attributes are stored as strings and never compare as numbers.
    @Test("Decimal attributes compare and sort as numbers, as Core Data's NSDecimalNumber attributes do")
    func decimals() throws {
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/d.logstore", indexed: false) { context in
                for (name, price) in [("nine", "9"), ("ten", "10"), ("hundred", "100")] {
                    let person = try EdgeCases.person(context, name)
                    person["price"] = Decimal(string: price)!
                }
            }
            defer { store.close() }
            let context = store.newContext()
            #expect(EdgeCases.names(try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("price > 50")))) == ["hundred"])
            #expect(EdgeCases.names(try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("price == %@", Decimal(10))))) == ["ten"])
            let sorted = try context.fetch(FetchRequest(entityName: "Person", sortDescriptors: [SortKey("price")]))
            #expect(sorted.map { $0["first"] as? String } == ["nine", "ten", "hundred"])
            var totals = FetchRequest(entityName: "Person")
            totals.propertiesToFetch = [.aggregate(.sum, of: "price", as: "sum"), .aggregate(.maximum, of: "price", as: "max")]
            let row = try context.fetchDictionaries(totals)[0]
            #expect((row["sum"] as? Double) == 119 || (row["sum"] as? Decimal) == 119, "sum \(String(describing: row["sum"]))")
            #expect(row["max"] as? Decimal == 100, "max \(String(describing: row["max"]))")
        }
    }

    // 5. FetchExecution.value(_:of:) reads `sortDecoded` (the sort slots'
    //    mask) at slots past its end when the predicate decoded more slots
    //    than the sort keys: an out-of-bounds UnsafeBufferPointer read
    //    (a trap in debug builds, garbage in release).
    @Test("fetchDictionaries sorted by one attribute with a predicate on a later one returns that attribute")
    func dictionaryValuesPastTheSortMask() async throws {
        await #expect(processExitsWith: .success) {
            try withTemporaryDirectory { directory in
                let store = try EdgeCases.store(directory + "/x.logstore", indexed: false) { context in
                    let person = try EdgeCases.person(context, "Ann", age: 30, city: "Oslo")
                    person["last"] = "Smith"
                }
                defer { store.close() }
                var request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("city == 'Oslo'"), sortDescriptors: [SortKey("first")])
                request.propertiesToFetch = [.attribute("first"), .attribute("last"), .attribute("city")]
                let rows = try store.newContext().fetchDictionaries(request)
                precondition(rows.count == 1 && rows[0]["city"] as? String == "Oslo" && rows[0]["last"] as? String == "Smith", "\(rows)")
            }
        }
    }

    // 6a. '-' applied to a hex literal of 2^63 traps (Int64.min negated).
    @Test("Parsing age == -0x8000000000000000 does not crash")
    func negatedHexOverflow() async {
        await #expect(processExitsWith: .success) {
            _ = try? ObjectPredicate("age == -0x8000000000000000")
        }
    }

    // 6b. Hex literals >= 2^63 wrap to negative numbers.
    @Test("0x8000000000000000 is 2^63, larger than every Int64, as the decimal literal 9223372036854775808 is")
    func hexAbove2to63() throws {
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/h.logstore", indexed: false) { context in
                _ = try EdgeCases.person(context, "A", age: 5)
                _ = try EdgeCases.person(context, "minus one", age: -1)
            }
            defer { store.close() }
            let context = store.newContext()
            #expect(try context.count(for: FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age < 9223372036854775808"))) == 2)
            #expect(try context.count(for: FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age < 0x8000000000000000"))) == 2)
            #expect(try context.count(for: FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 0xFFFFFFFFFFFFFFFF"))) == 0)
        }
    }

    // 7. Object IDs of another store match objects of this one with the same key.
    @Test("SELF == %@ with an object ID of another store matches nothing")
    func objectIDOfAnotherStore() throws {
        try withTemporaryDirectory { directory in
            let mine = try EdgeCases.store(directory + "/a.logstore", indexed: false) { context in _ = try EdgeCases.person(context, "mine") }
            defer { mine.close() }
            let other = try EdgeCases.store(directory + "/b.logstore", indexed: false) { context in _ = try EdgeCases.person(context, "other") }
            defer { other.close() }
            let foreign = try other.newContext().fetch(FetchRequest(entityName: "Person"))[0].objectID
            #expect(foreign.storeID != mine.storeID)
            let context = mine.newContext()
            #expect(try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("SELF == %@", foreign))).isEmpty)
            #expect(try context.fetch(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("SELF IN %@", [foreign]))).isEmpty)
        }
    }

    // 8. RawStringTest decides BEGINSWITH on bytes; the general evaluator
    //    (pending objects, evaluate/filter) uses Character-based hasPrefix:
    //    they disagree when the prefix ends in "\r" and the text continues "\n".
    @Test("BEGINSWITH 'ab\\r' gives the same answer for a saved record, an in-memory filter, and an unsaved object")
    func crlfPrefix() throws {
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/c.logstore", indexed: false) { context in _ = try EdgeCases.person(context, "ab\r\ncd") }
            defer { store.close() }
            let context = store.newContext()
            let predicate = try ObjectPredicate("first BEGINSWITH %@", "ab\r")
            let fetched = try context.fetch(FetchRequest(entityName: "Person", predicate: predicate))
            let all = try context.fetch(FetchRequest(entityName: "Person"))
            let filtered = try all.filter(predicate)
            #expect(fetched.count == filtered.count, "fetch \(fetched.count), filter \(filtered.count)")
            // The same object, unsaved, is tested by the general evaluator.
            _ = try EdgeCases.person(context, "ab\r\ncd")
            let withPending = try context.fetch(FetchRequest(entityName: "Person", predicate: predicate))
            #expect(withPending.count == 2 * fetched.count, "saved and unsaved copies of the same value answer alike")
        }
    }

    // 9. The compiled ==[c] fast path says false for a UUID attribute that the
    //    general evaluator (and plain ==) finds equal to its string.
    @Test("uid ==[c] 'lowercase uuid' fetches what evaluate/filter says")
    func uuidCaseInsensitive() throws {
        try withTemporaryDirectory { directory in
            let uuid = UUID()
            let store = try EdgeCases.store(directory + "/u.logstore", indexed: false) { context in
                let person = try EdgeCases.person(context, "U")
                person["uid"] = uuid
            }
            defer { store.close() }
            let context = store.newContext()
            let predicate = try ObjectPredicate("uid ==[c] %@", uuid.uuidString.lowercased())
            let all = try context.fetch(FetchRequest(entityName: "Person"))
            let filtered = try all.filter(predicate)
            let fetched = try context.fetch(FetchRequest(entityName: "Person", predicate: predicate))
            #expect(filtered.count == 1)
            #expect(fetched.count == filtered.count)
        }
    }

    // 10. Grouped dictionaries silently drop fetched attributes that are neither
    //     grouped nor aggregated when no aggregate is asked for (Core Data refuses).
    @Test("propertiesToGroupBy with an ungrouped plain attribute fails, with or without aggregates")
    func ungroupedAttributeWithoutAggregates() throws {
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/g.logstore", indexed: false) { context in
                _ = try EdgeCases.person(context, "Ann", city: "Oslo")
                _ = try EdgeCases.person(context, "Bob", city: "Oslo")
            }
            defer { store.close() }
            var request = FetchRequest(entityName: "Person")
            request.propertiesToGroupBy = ["city"]
            request.propertiesToFetch = [.attribute("city"), .attribute("first")]
            #expect(throws: LogStoreError.self) { try store.newContext().fetchDictionaries(request) }
        }
    }

    // 11. BETWEEN with a variable (a template) is valid Core Data syntax.
    @Test("age BETWEEN $RANGE parses and, substituted, selects the range")
    func betweenVariable() throws {
        let predicate = try #require(try? ObjectPredicate("age BETWEEN $RANGE"), "age BETWEEN $RANGE does not parse")
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/v.logstore", indexed: false) { context in
                _ = try EdgeCases.person(context, "A", age: 5)
                _ = try EdgeCases.person(context, "B", age: 50)
            }
            defer { store.close() }
            let request = FetchRequest(entityName: "Person", predicate: predicate.substituting(["RANGE": [1, 10]]))
            #expect(EdgeCases.names(try store.newContext().fetch(request)) == ["A"])
        }
    }

    // 12. Grouping dictionaries by a to-one relationship puts every row in one nil group.
    @Test("propertiesToGroupBy a to-one relationship gives one row per related object")
    func groupByRelationship() throws {
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/r.logstore", indexed: false) { context in
                let oslo = try context.insert("Home")
                oslo["city"] = "Oslo"
                let paris = try context.insert("Home")
                paris["city"] = "Paris"
                for (name, home) in [("A", oslo), ("B", oslo), ("C", paris)] {
                    let person = try EdgeCases.person(context, name)
                    person["home"] = home
                }
            }
            defer { store.close() }
            var request = FetchRequest(entityName: "Person")
            request.propertiesToGroupBy = ["home"]
            request.propertiesToFetch = [.attribute("home"), .count(as: "people")]
            let rows = try store.newContext().fetchDictionaries(request)
            #expect(rows.count == 2, "\(rows)")
            #expect(rows.allSatisfy { $0["home"] is ObjectID }, "\(rows)")
            #expect(rows.compactMap { $0["people"] as? Int64 }.sorted() == [1, 2], "\(rows)")
        }
    }

    // 13. fetchLimit/fetchOffset window the rows before grouping/aggregating,
    //     where Core Data (SQL LIMIT after GROUP BY / aggregates) windows the result rows.
    @Test("fetchLimit applies to the grouped rows of fetchDictionaries, not to the objects aggregated")
    func limitAppliesToGroups() throws {
        try withTemporaryDirectory { directory in
            let store = try EdgeCases.store(directory + "/l.logstore", indexed: false) { context in
                for (name, city) in [("A", "Oslo"), ("B", "Oslo"), ("C", "Oslo"), ("D", "Bergen")] { _ = try EdgeCases.person(context, name, city: city) }
            }
            defer { store.close() }
            let context = store.newContext()
            var request = FetchRequest(entityName: "Person", sortDescriptors: [SortKey("city", ascending: false)], fetchLimit: 1)
            request.propertiesToGroupBy = ["city"]
            request.propertiesToFetch = [.attribute("city"), .count(as: "people")]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 1 && rows[0]["city"] as? String == "Oslo" && rows[0]["people"] as? Int64 == 3, "\(rows)")
            var total = FetchRequest(entityName: "Person", fetchLimit: 1)
            total.propertiesToFetch = [.count(as: "people")]
            let all = try context.fetchDictionaries(total)
            #expect(all.count == 1 && all[0]["people"] as? Int64 == 4, "\(all)")
        }
    }

    // A record saved before an attribute existed has no bytes for it: a test
    // decided on the record's bytes must answer as the decoded record does.
    static let addedLaterFormats = [
        "rank == 5", "rank != 5", "rank > 4", "rank < 5", "flag == NO",
        // OR, NOT and constants are decided on bytes too.
        "rank == 7 OR flag == NO", "NOT rank == 5", "NOT (rank > 6 AND name BEGINSWITH 'n')",
        "rank == 7 OR TRUEPREDICATE", "NOT flag == YES AND (rank < 6 OR name == 'new')",
    ]

    @Test("A predicate on an attribute added after a record was saved answers alike on bytes, decoded, and in memory", arguments: addedLaterFormats)
    func attributeAddedLater(format: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/gadgets.logstore"
            let before = try Model(entities: [Entity("Gadget") { Attribute("name", .string) }])
            let after = try Model(entities: [Entity("Gadget") {
                Attribute("name", .string)
                Attribute("rank", .int64, default: Int64(5))
                Attribute("flag", .bool, default: false)
            }])
            let old = try Store(path: path, model: before)
            let context = old.newContext()
            try context.insert("Gadget")["name"] = "old"
            try context.save()
            old.close()
            let store = try Store(path: path, model: after)
            defer { store.close() }
            let fresh = store.newContext()
            let gadget = try fresh.insert("Gadget")
            gadget["name"] = "new"
            gadget["rank"] = Int64(7)
            gadget["flag"] = true
            try fresh.save()
            let reader = store.newContext()
            let request = FetchRequest(entityName: "Gadget", predicate: try ObjectPredicate(format: format, argumentArray: []))
            func names(_ objects: [ManagedObject]) -> [String] { objects.compactMap { $0["name"] as? String }.sorted() }
            let onBytes = names(try reader.fetch(request))
            let decoded = names(try FetchOverride(rawTests: false).run { try store.newContext().fetch(request) })
            let inMemory = names(try reader.fetch(FetchRequest(entityName: "Gadget")).filter(request.predicate!))
            #expect(onBytes == decoded, "\(format)")
            #expect(onBytes == inMemory, "\(format)")
        }
    }

    // 15. A lookup (an index or a relationship) that answers one conjunct
    //     left the rest untested when the rest read no attribute: the keys
    //     it found were taken as the matches.
    @Test("A lookup's other conjuncts are tested even when they read no attribute: SELF != %@, FALSEPREDICATE")
    func lookupResidualWithoutAttributes() throws {
        try withTemporaryDirectory { directory in
            for indexed in [true, false] {
                var ann: ManagedObject!, home: ManagedObject!
                let store = try EdgeCases.store(directory + "/residual-\(indexed).logstore", indexed: indexed) { context in
                    home = try context.insert("Home")
                    ann = try EdgeCases.person(context, "ann", age: 30)
                    for person in [ann!, try EdgeCases.person(context, "bob", age: 30)] { person["home"] = home }
                    _ = try EdgeCases.person(context, "cat", age: 40)
                }
                defer { store.close() }
                let context = store.newContext()
                let cases: [(ObjectPredicate, [String])] = [
                    (try ObjectPredicate("age == 30 AND SELF != %@", ann.objectID), ["bob"]),
                    (try ObjectPredicate("age == 30 AND FALSEPREDICATE"), []),
                    (try ObjectPredicate("home == %@ AND SELF != %@", home.objectID, ann.objectID), ["bob"]),
                    (try ObjectPredicate("home == %@ AND FALSEPREDICATE", home.objectID), []),
                ]
                for (predicate, expected) in cases {
                    let request = FetchRequest(entityName: "Person", predicate: predicate)
                    let label = "\(predicate), indexed: \(indexed)"
                    #expect(EdgeCases.names(try context.fetch(request)) == expected, "\(label)")
                    #expect(try context.fetchIDs(request).count == expected.count, "\(label)")
                    #expect(try context.count(for: request) == expected.count, "\(label)")
                }
            }
        }
    }

    // 16. A raw-byte test answers nil where the bytes cannot tell (text
    //     that is not ASCII): NOT, OR and AND over it must then leave the
    //     record to the decoded test.
    static let undecidedFormats = [
        "NOT first BEGINSWITH 'ab'", "NOT first == 'K'", "first BEGINSWITH 'ab' OR age == 7",
        "NOT (first == 'K' OR first BEGINSWITH 'ab')", "age > 1 AND NOT first == 'K'", "NOT (age == 2 AND first BEGINSWITH 'ab')",
    ]

    @Test("NOT, OR and AND over a comparison the bytes cannot decide answer as the decoded record and the in-memory filter", arguments: undecidedFormats)
    func undecidedOnBytes(format: String) throws {
        try withTemporaryDirectory { directory in
            // "abé" begins with "ab", and the Kelvin sign is "K" to Unicode's
            // canonical equivalence: neither is decided on bytes.
            let store = try EdgeCases.store(directory + "/undecided.logstore", indexed: false) { context in
                for (index, name) in ["abé", "\u{212A}", "abc", "K", "zz", "Ka\u{301}"].enumerated() {
                    _ = try EdgeCases.person(context, name, age: Int64(index))
                }
            }
            defer { store.close() }
            let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate(format: format, argumentArray: []))
            let onBytes = EdgeCases.names(try store.newContext().fetch(request))
            let decoded = EdgeCases.names(try FetchOverride(rawTests: false).run { try store.newContext().fetch(request) })
            let context = store.newContext()
            let inMemory = EdgeCases.names(try context.fetch(FetchRequest(entityName: "Person")).filter(request.predicate!))
            #expect(onBytes == decoded, "\(format)")
            #expect(onBytes == inMemory, "\(format)")
            #expect(try context.count(for: request) == inMemory.count, "\(format)")
        }
    }
}
