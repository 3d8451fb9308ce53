// The parts of Core Data's predicate language beyond plain comparisons:
// SUBQUERY (flat, nested, with substitution variables, and its binding
// errors), arithmetic in expressions (precedence, overflow, division,
// dates, $FETCH_SOURCE), malformed forms the parser must refuse, and the
// columns errors report. Valid cases run through PredicateLanguageTests'
// check: fetched with and without indexes and filtered in memory, against
// the data set of PredicateLanguageTests, with expectations worked out by
// hand from it.

import Foundation
import Testing
@testable import LogStore

extension PredicateLanguage {
    static let arithmeticCases: [Case] = [
        // MARK: Precedence, associativity, parentheses, unary minus
        when("(age + 1) * 2 > 10", expect: "p01 p02 p04 p05 p07 p08 p09 p10 p11"),
        when("(age) > 60", expect: "p04"),
        when("((age)) > 60", expect: "p04"),
        when("-age < -5", expect: "p01 p04 p05 p07 p08 p09 p10"),
        when("-(age - 40) > 0", expect: "p01 p02 p03 p05 p06 p08 p09 p10 p11"),
        when("age * 2 > score", expect: "p04 p07 p08"),
        when("age + 1 * 2 == 36", expect: "p01"),
        when("age - 1 - 1 == 32", expect: "p01"),
        when("age - (1 - 1) == 34", expect: "p01"),
        when("5 < age - 20", expect: "p01 p04 p05 p07"),
        when("score * 2 == 177", expect: "p01"),
        when("pets.@count * 10 > age", expect: "p02 p03 p05 p06 p11"),
        when("(age + 1) * 2 > 10 AND (name BEGINSWITH 'A' OR (age) < 6)", expect: "p01 p02 p11"),
        when("NOT (age + 1) * 2 > 10", expect: "p03 p06 p12"),
        when("age IN {2 + 3, 70 + 1}", expect: "p02 p04 p11"),
        when("age BETWEEN {10 - 5, 2 * 5}", expect: "p02 p09 p11"),
        when("age + %d == 40", 6, expect: "p01"),

        // MARK: Division is floating point; integer overflow continues in Double
        when("age / 2 == 2.5", expect: "p02 p11"),
        when("age / 0 == %@", .value(Double.infinity), expect: "p01 p02 p04 p05 p07 p08 p09 p10 p11"),
        when("age / 0 == %@", .value(-Double.infinity), expect: "p06"),
        when("age * 9223372036854775807 > 9223372036854775807", expect: "p01 p02 p04 p05 p07 p08 p09 p10 p11"),
        when("age - 9223372036854775807 < 0", expect: allBut("p12")),

        // MARK: nil, booleans and strings are not numbers
        when("age + active == 35", expect: ""),
        when("name + 1 == 2", expect: ""),
        when("score + 1 > 0", expect: allBut("p06 p10")),

        // MARK: Dates
        when("birth + 86400 == %@", .value(day(2000, 1, 2)), expect: "p12"),
        when("birth - 86400 == %@", .value(day(1999, 12, 31)), expect: "p12"),
        when("birth - %@ < 0", .value(day(1980, 1, 1)), expect: "p04 p07"),
        when("birth - %@ == 86400", .value(day(1999, 12, 31)), expect: "p12"),
        when("birth * 2 > 0", expect: ""),
    ]

    static let subqueryCases: [Case] = [
        when("SUBQUERY(pets, $p, $p.weight > 10).@count > 0", expect: "p01 p06 p11 p12"),
        when("SUBQUERY(pets, $p, $p.weight > 10).@count == 2", expect: "p11"),
        when("subquery(pets, $p, $p.weight > 10).@count == 0", expect: "p02 p03 p04 p05 p07 p08 p09 p10"),
        when("SUBQUERY(pets, $p, weight < 1).@count >= 2", expect: "p05"),
        when("SUBQUERY(pets, $p, $p.name BEGINSWITH 'B').@count == 1", expect: "p02 p05 p11"),
        when("SUBQUERY(pets, $p, $p.weight > 1).@sum.weight > 20", expect: "p06 p11 p12"),
        when("SUBQUERY(pets, $p, $p.owner.home.city == 'Oslo').@count > 1", expect: "p01"),
        when("SUBQUERY(pets, $p, $p.weight * 4 > 20).@count > 0 AND age < 30", expect: "p06 p08 p11"),
        when("SUBQUERY(pets, $p, $p.weight > $MIN).@count > 0", vars: ["MIN": 20], expect: "p06 p12"),
        when("SUBQUERY(pets, $p, $p.name == %@).@count > 0", "Rex", expect: "p01 p06 p12"),
        when("SUBQUERY(pets, $p, $p.weight > 10).@count > pets.@count - 1", expect: "p06 p07 p11 p12"),
        when("SUBQUERY(SELF.pets, $p, TRUEPREDICATE).@count == 3", expect: "p05"),
        when("ANY SUBQUERY(pets, $p, $p.weight > 10).name == 'Rex'", expect: "p01 p06 p12"),
        when("%@ IN SUBQUERY(pets, $p, $p.weight < 1)", .pet("p05b"), expect: "p05"),
        when("SUBQUERY(home.residents, $r, $r.age > 40).@count > 0", expect: "p02 p03 p04 p07 p11 p12"),
        // Objects compared through both variables: people with two pets or more.
        when("SUBQUERY(pets, $p, SUBQUERY($p.owner.pets, $q, $q.owner == $p.owner AND $q != $p).@count > 0).@count > 0", expect: "p01 p05 p11"),
    ]
}

@Suite("Predicate grammar: SUBQUERY, arithmetic, malformed forms, columns")
struct PredicateGrammarTests {
    typealias Table = PredicateLanguage

    @Test("Arithmetic selects what its definition says, fetched and in memory", arguments: Table.arithmeticCases)
    func arithmetic(_ item: PredicateLanguage.Case) throws {
        try PredicateLanguageTests().check(item)
    }

    @Test("SUBQUERY selects what its definition says, fetched and in memory", arguments: Table.subqueryCases)
    func subquery(_ item: PredicateLanguage.Case) throws {
        try PredicateLanguageTests().check(item)
    }

    @Test("A subquery inside a subquery may read the outer subquery's variable")
    func nestedSubquery() throws {
        try withTemporaryDirectory { directory in
            for indexed in [true, false] {
                let fixture = try PredicateLanguage.Fixture(path: directory + "/nested-\(indexed).logstore", indexed: indexed)
                // Homes with a resident who has a pet heavier than its owner's
                // age, and is active: Paris (p03, 0 and Kiki 1.0) and Bergen
                // (p11, 5 and Max 20); p06 in Oslo is not active.
                let predicate = try ObjectPredicate("SUBQUERY(residents, $r, SUBQUERY($r.pets, $q, $q.weight > $r.age).@count > 0 AND $r.active == YES).@count > 0")
                let request = FetchRequest(entityName: "Home", predicate: predicate)
                let cities = { (objects: [ManagedObject]) in objects.map { $0["city"] as? String ?? "?" }.sorted() }
                #expect(cities(try fixture.context.fetch(request)) == ["Bergen", "Paris"])
                #expect(cities(try fixture.all["Home", default: []].filter(predicate)) == ["Bergen", "Paris"])
            }
        }
    }

    @Test("Substitution reaches inside a subquery but never replaces the subquery's own variable")
    func subquerySubstitution() throws {
        let predicate = try ObjectPredicate("SUBQUERY(pets, $p, $p != nil AND $p.weight > $MIN).@count > 0")
        let substituted = predicate.substituting(["p": nil, "MIN": 20])
        #expect(substituted == (try ObjectPredicate("SUBQUERY(pets, $p, $p != nil AND $p.weight > 20).@count > 0")))
        let inner = try ObjectPredicate("SUBQUERY(pets, $p, SUBQUERY($p.owner.pets, $q, $q.weight > $p.weight).@count > 0).@count > $N")
        #expect(inner.substituting(["p": 1, "q": 2, "N": 3]) == (try ObjectPredicate("SUBQUERY(pets, $p, SUBQUERY($p.owner.pets, $q, $q.weight > $p.weight).@count > 0).@count > 3")))
        try withTemporaryDirectory { directory in
            let fixture = try PredicateLanguage.Fixture(path: directory + "/vars.logstore", indexed: false)
            let fetched = try fixture.context.fetch(FetchRequest(entityName: "Person", predicate: substituted))
            #expect(fixture.tags(fetched) == ["p06", "p12"])
        }
    }

    @Test("Errors inside a subquery name the real mistake")
    func subqueryBindingErrors() throws {
        try withTemporaryDirectory { directory in
            let fixture = try PredicateLanguage.Fixture(path: directory + "/errors.logstore", indexed: false)
            func failure(_ format: String) throws -> LogStoreError {
                let predicate = try ObjectPredicate(format)
                let fetched = try #require(throws: LogStoreError.self) { try fixture.context.fetch(FetchRequest(entityName: "Person", predicate: predicate)) }
                let evaluated = try #require(throws: LogStoreError.self) { try fixture.all["Person", default: []].filter(predicate) }
                #expect(fetched.message == evaluated.message)
                return fetched
            }
            let unknown = try failure("SUBQUERY(pets, $p, $p.nosuch > 1).@count > 0")
            #expect(unknown.kind == .unknownKey && unknown.entity == "Pet" && unknown.attribute == "nosuch", "\(unknown)")
            #expect(unknown.column == 20, "\(unknown)")
            let bare = try failure("SUBQUERY(pets, $p, nosuch > 1).@count > 0")
            #expect(bare.kind == .unknownKey && bare.entity == "Pet" && bare.attribute == "nosuch", "\(bare)")
            let toOne = try failure("SUBQUERY(home, $h, $h.zip > 1).@count > 0")
            #expect(toOne.kind == .invalidPredicate && toOne.message.contains("home") && toOne.message.contains("to-many"), "\(toOne)")
            #expect(toOne.column == 10, "\(toOne)")
            let collection = try failure("SUBQUERY(nosuch, $p, TRUEPREDICATE).@count > 0")
            #expect(collection.kind == .unknownKey && collection.attribute == "nosuch" && collection.column == 10, "\(collection)")
            let outside = try failure("SUBQUERY(pets, $p, TRUEPREDICATE).@count > 0 AND $p.weight > 1")
            #expect(outside.kind == .invalidPredicate && outside.message.contains("$p"), "\(outside)")
            let tail = try failure("SUBQUERY(pets, $p, TRUEPREDICATE).@count.weight > 0")
            #expect(tail.kind == .invalidPredicate && tail.message.contains("@count"), "\(tail)")
        }
    }

    @Test("A fetch with arithmetic on the key path side scans, and matches in-memory evaluation")
    func arithmeticIsNotIndexed() throws {
        try withTemporaryDirectory { directory in
            let fixture = try PredicateLanguage.Fixture(path: directory + "/plan.logstore", indexed: true)
            for (format, expected) in [("age + 0 == 5", ["p02", "p11"]), ("age * 1 > 60", ["p04"]), ("-age == 3", ["p06"]), ("age > 60 - 1", ["p04"])] {
                let predicate = try ObjectPredicate(format)
                let request = FetchRequest(entityName: "Person", predicate: predicate)
                if format != "age > 60 - 1" {
                    #expect(try fixture.context.explain(request).strategy == .fullScan, "\(format)")
                }
                let fetched = fixture.tags(try fixture.context.fetch(request))
                var evaluated: [String] = []
                for object in fixture.all["Person", default: []] where try predicate.evaluate(with: object) { evaluated.append(object["tag"] as? String ?? "?") }
                #expect(fetched == expected, "\(format)")
                #expect(evaluated.sorted() == expected, "\(format)")
            }
        }
    }

    @Test("A fetched property may offset $FETCH_SOURCE's date by seconds")
    func fetchSourceArithmetic() throws {
        try withTemporaryDirectory { directory in
            let model = try Model {
                Entity("Person") {
                    Attribute("name", .string)
                    Attribute("birth", .date)
                    FetchedProperty("tenYearsOlder", of: "Person", where: "birth < $FETCH_SOURCE.birth - 315576000", sortedBy: [SortKey("name")])
                }
            }
            let store = try Store(path: directory + "/fetched.logstore", model: model)
            defer { store.close() }
            let context = store.newContext()
            var people: [String: ManagedObject] = [:]
            for (name, year) in [("A", 1950), ("B", 1955), ("C", 1970)] {
                let person = try context.insert("Person")
                person["name"] = name
                person["birth"] = PredicateLanguage.day(year, 6, 1)
                people[name] = person
            }
            try context.save()
            let names = { (value: Any?) in (value as? [ManagedObject])?.map { $0["name"] as? String ?? "?" } }
            #expect(names(try #require(people["C"])["tenYearsOlder"]) == ["A", "B"])
            #expect(names(try #require(people["B"])["tenYearsOlder"]) == [])
        }
    }

    @Test("Arithmetic over stored values: integer widths, overflow into Double, division, dates, and nil for the rest")
    func arithmeticDefinition() {
        let date = StoredValue.date(Date(timeIntervalSinceReferenceDate: 1_000))
        let cases: [(ArithmeticOperator, StoredValue, StoredValue, StoredValue)] = [
            (.add, .int16(2), .int32(3), .int64(5)),
            (.multiply, .int64(.max), .int16(2), .double(Double(Int64.max) * 2)),
            (.subtract, .int64(.min), .int64(1), .double(Double(Int64.min) - 1)),
            (.divide, .int64(7), .int64(2), .double(3.5)),
            (.divide, .int64(1), .int64(0), .double(.infinity)),
            (.add, .float(0.5), .int64(1), .double(1.5)),
            (.add, date, .int64(60), .date(Date(timeIntervalSinceReferenceDate: 1_060))),
            (.add, .double(60), date, .date(Date(timeIntervalSinceReferenceDate: 1_060))),
            (.subtract, date, .double(0.5), .date(Date(timeIntervalSinceReferenceDate: 999.5))),
            (.subtract, date, .date(Date(timeIntervalSinceReferenceDate: 400)), .double(600)),
            (.subtract, .int64(1), date, .null),
            (.multiply, date, .int64(2), .null),
            (.add, date, date, .null),
            (.add, .bool(true), .int64(1), .null),
            (.add, .string("1"), .int64(1), .null),
            (.add, .null, .int64(1), .null),
            (.divide, .int64(1), .null, .null),
        ]
        for (op, a, b, expected) in cases {
            #expect(Arithmetic.apply(op, a, b) == expected, "\(a) \(op) \(b)")
        }
    }

    // MARK: Malformed forms

    static let malformed: [PredicateLanguage.BadCase] = [
        PredicateLanguage.bad("age IN 5", column: 8, "IN needs a collection"),
        PredicateLanguage.bad("age IN %@", 5, column: 8, "IN needs a collection"),
        PredicateLanguage.bad("age IN YES", column: 8, "IN needs a collection"),
        PredicateLanguage.bad("age IN age + 1", column: 8, "IN needs a collection"),
        PredicateLanguage.bad("5 IN 'abc'", column: 1, "a string on the right of IN"),
        PredicateLanguage.bad("age >[c] 5", column: 6, "[c] compares strings"),
        PredicateLanguage.bad("name ==[cd] %@", 3, column: 8, "[cd] compares strings"),
        PredicateLanguage.bad("age * 2 ==[c] 'x'", column: 11, "[c] compares strings"),
        PredicateLanguage.bad("ANY 5 == 3", column: 5, "ANY needs a key path"),
        PredicateLanguage.bad("ALL {1, 2} == 3", column: 5, "ALL needs a key path"),
        PredicateLanguage.bad("NONE SELF == %@", "x", column: 6, "NONE needs a key path"),
        PredicateLanguage.bad("name BEGINSWITH 5", column: 17, "BEGINSWITH compares strings"),
        PredicateLanguage.bad("name LIKE YES", column: 11, "LIKE compares strings"),
        PredicateLanguage.bad("5 MATCHES name", column: 1, "MATCHES compares strings"),
        PredicateLanguage.bad("age + > 3", column: 7, "expected a value after '+'"),
        PredicateLanguage.bad("age * ", column: 7, "expected a value after '*'"),
        PredicateLanguage.bad("(age + 1 > 3", column: 13, "expected ')'"),
        PredicateLanguage.bad("(age + 1) > ", column: 13, "expected a value after '>'"),
        PredicateLanguage.bad("SUBQUERY(pets, p, TRUEPREDICATE).@count > 0", column: 16, "expected a $variable"),
        PredicateLanguage.bad("SUBQUERY(pets, $p TRUEPREDICATE).@count > 0", column: 19, "expected ','"),
        PredicateLanguage.bad("SUBQUERY(pets, $p, $p.weight > 1.@count > 0", column: 33, "expected ')'"),
        PredicateLanguage.bad("SUBQUERY(pets, $p, ).@count > 0", column: 20, "expected a key path or value"),
        PredicateLanguage.bad("CAST(1, 'NSFoo') == 1", column: 9, "unknown CAST type"),
        PredicateLanguage.bad("CAST('x', 'NSUUID') == 1", column: 6, "not a UUID"),
        PredicateLanguage.bad("CAST(age, 'NSDate') == 1", column: 6, "CAST needs a constant"),
    ]

    @Test("A malformed form fails to parse with its column", arguments: malformed)
    func malformedForm(_ item: PredicateLanguage.BadCase) {
        PredicateLanguageTests.expectMalformed(item)
    }

    // MARK: Columns of keys found unknown at binding

    @Test("An unknown key reports the column where its key path starts; a predicate built in Swift reports none")
    func bindingColumns() throws {
        try withTemporaryDirectory { directory in
            let fixture = try PredicateLanguage.Fixture(path: directory + "/columns.logstore", indexed: false)
            func failure(_ predicate: ObjectPredicate) throws -> LogStoreError {
                try #require(throws: LogStoreError.self) { try fixture.context.fetch(FetchRequest(entityName: "Person", predicate: predicate)) }
            }
            for (format, column) in [("nosuch == 1", 1), ("age > 3 AND nosuch == 1", 13), ("home.nosuch == 1", 1), ("1 == nosuch", 6),
                                     ("age + nosuch > 1", 7), ("age IN {1, nosuch}", 12), ("ANY pets.nosuch == 1", 5), ("(age) > 3 OR home.city.x == 1", 14)] {
                let error = try failure(try ObjectPredicate(format))
                #expect(error.column == column, "\(format): \(error)")
                #expect(error.message.hasSuffix("at column \(column)"), "\(format): \(error)")
            }
            let typed = try failure(PredicateKey("nosuch") == 1)
            #expect(typed.kind == .unknownKey && typed.column == nil)
            #expect(try ObjectPredicate("nosuch == 1") == (PredicateKey("nosuch") == 1), "columns take no part in equality")
        }
    }

    @Test("A column counts from 1, and the end of the string is its length + 1")
    func oneBasedColumns() throws {
        for (format, column) in [("== 3", 1), ("age >", 6), ("age ~ 3", 5), ("name == 'abc", 9), ("  )", 3)] {
            let error = try #require(throws: LogStoreError.self) { try ObjectPredicate(format) }
            #expect(error.column == column, "\(format): \(error)")
            #expect(error.message.hasSuffix("at column \(column)"), "\(format): \(error)")
        }
    }
}
