// One order and one equality for every query path (issue 21 point 1):
// each case runs the same fetch against a store with indexes and one
// without, and as an in-memory filter, and expects the one answer the
// definition in ValueOrder.swift gives.

import Foundation
import Testing
@testable import LogStore

enum Semantics {
    static func model(indexed: Bool) throws -> Model {
        try Model {
            Entity("Sample") {
                Attribute("tag", .string)
                Attribute("x", .double, indexed: indexed)
                Attribute("n", .int64, indexed: indexed)
                Attribute("s", .string, indexed: indexed)
                Attribute("note", .string, transient: true)
            }
        }
    }

    struct Row {
        var tag: String
        var x: Double? = nil
        var n: Int64? = nil
        var s: String? = nil
    }

    /// Enough rows that an index holds most of them in its sorted part,
    /// and a few in its unsorted tail.
    static func padded(_ rows: [Row]) -> [Row] {
        rows + (0..<1_100).map { Row(tag: "pad\($0)") }
    }

    /// A store holding `rows`, the last few saved after the rest.
    static func store(_ path: String, indexed: Bool, _ rows: [Row]) throws -> Store {
        let store = try Store(path: path, model: try model(indexed: indexed), options: JournalOptions(durability: .deferredToOS))
        let context = store.newContext()
        for (position, row) in rows.enumerated() {
            let sample = try context.insert("Sample")
            sample["tag"] = row.tag
            sample["x"] = row.x
            sample["n"] = row.n
            sample["s"] = row.s
            if position == rows.count - 3 { try context.save() }
        }
        try context.save()
        return store
    }

    /// The tags a request fetches from an indexed store, from an unindexed
    /// one, and (without sort keys) filtering every object in memory; the
    /// padding rows left out.
    static func answers(_ directory: String, _ rows: [Row], _ request: FetchRequest) throws -> [[String]] {
        var results: [[String]] = []
        for indexed in [true, false] {
            let store = try store(directory + "/\(indexed)-\(UUID()).logstore", indexed: indexed, padded(rows))
            defer { store.close() }
            let context = store.newContext()
            results.append(try context.fetch(request).map { $0["tag"] as! String }.filter { !$0.hasPrefix("pad") })
            if indexed, request.sortDescriptors.isEmpty, let predicate = request.predicate {
                let all = try context.fetch(FetchRequest(entityName: "Sample"))
                results.append(try all.filter(predicate).map { $0["tag"] as! String }.filter { !$0.hasPrefix("pad") })
            }
        }
        return results
    }

    /// Expects each case's predicate to select its tags in every plan.
    static func expect(_ cases: [(String, [Any?], [String])], _ directory: String, _ rows: [Row],
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (format, arguments, expected) in cases {
            for result in try answers(directory, rows, try request(format, arguments)) {
                #expect(result.sorted() == expected.sorted(), "\(format) \(arguments)", sourceLocation: sourceLocation)
            }
        }
    }

    static func request(_ format: String, _ arguments: [Any?] = [], sort: [SortKey] = [], limit: Int = 0) throws -> FetchRequest {
        FetchRequest(entityName: "Sample", predicate: try ObjectPredicate(format: format, argumentArray: arguments), sortDescriptors: sort, fetchLimit: limit)
    }
}

@Suite("One order and equality for every query path")
struct ComparisonSemanticsTests {
    static let withNaN: [Semantics.Row] = [
        .init(tag: "three", x: 3), .init(tag: "nan1", x: .nan), .init(tag: "one", x: 1), .init(tag: "nan2", x: -.nan),
        .init(tag: "minusInf", x: -.infinity), .init(tag: "inf", x: .infinity), .init(tag: "negZero", x: -0.0),
        .init(tag: "zero", x: 0), .init(tag: "none"), .init(tag: "nan3", x: .nan),
    ]

    @Test("A NaN in an indexed Double: index walks end, NaN sorts after nil and equals NaN, ranges leave it out")
    func nanInIndex() throws {
        try withTemporaryDirectory { directory in
            let rows = Self.withNaN
            // The sorted fetch with a limit walks the index (this hung).
            let sorted = try Semantics.answers(directory, rows, try Semantics.request("x != 2", sort: [SortKey("x")], limit: 1_200))
            let expected = ["none", "nan1", "nan2", "nan3", "minusInf", "negZero", "zero", "one", "three", "inf"]
            #expect(sorted[0] == expected)
            #expect(sorted[1] == expected)
            let descending = try Semantics.answers(directory, rows, try Semantics.request("TRUEPREDICATE", sort: [SortKey("x", ascending: false), SortKey("tag")], limit: 1_200))
            #expect(descending[0] == descending[1])
            #expect(Array(descending[0].prefix(5)) == ["inf", "three", "one", "negZero", "zero"])
            let cases: [(String, [Any?], [String])] = [
                ("x == %@", [Double.nan], ["nan1", "nan2", "nan3"]),
                ("x != %@", [Double.nan], ["three", "one", "minusInf", "inf", "negZero", "zero", "none"]),
                ("x > 0", [], ["three", "one", "inf"]),
                ("x <= 1", [], ["one", "minusInf", "negZero", "zero"]),
                ("x == 0", [], ["negZero", "zero"]),
                ("x <= %@", [Double.nan], ["nan1", "nan2", "nan3"]),
                ("x < %@", [Double.nan], []),
                ("x >= %@", [Double.nan], ["nan1", "nan2", "nan3"]),
                ("x BETWEEN {%@, 5}", [Double.nan], []),
                ("x IN {%@, 1}", [Double.nan], ["nan1", "one", "nan2", "nan3"]),
            ]
            try Semantics.expect(cases, directory, rows)
        }
    }

    @Test("Compaction, reopening and verify of a store with NaN in an index finish")
    func nanCompactsAndVerifies() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/nan.logstore"
            do {
                let store = try Semantics.store(path, indexed: true, Semantics.padded(Self.withNaN))
                _ = try store.compact()
                store.close()
            }
            let report = try StoreInspector.verify(path: path)
            #expect(report.isValid, "\(report.problems)")
            let store = try Store(path: path, model: try Semantics.model(indexed: true))
            defer { store.close() }
            let context = store.newContext()
            let nans = try context.fetch(try Semantics.request("x == %@", [Double.nan]))
            #expect(nans.count == 3)
            let first = try context.fetch(try Semantics.request("x != nil", sort: [SortKey("x")], limit: 4))
            #expect(first.map { $0["tag"] as? String } == ["nan1", "nan2", "nan3", "minusInf"])
        }
    }

    @Test("Integers and doubles compare exactly near 2^53 and 2^63, in every plan")
    func exactIntegerDouble() throws {
        try withTemporaryDirectory { directory in
            let rows: [Semantics.Row] = [
                .init(tag: "p53", n: 1 << 53), .init(tag: "p53plus1", n: (1 << 53) + 1), .init(tag: "max", n: .max),
                .init(tag: "min", n: .min), .init(tag: "m53minus1", n: -(1 << 53) - 1), .init(tag: "zero", n: 0),
            ]
            let cases: [(String, [Any?], [String])] = [
                ("n == %@", [Double(1 << 53)], ["p53"]),
                ("n > %@", [Double(1 << 53)], ["p53plus1", "max"]),
                ("n < %@", [0x1p63], ["p53", "p53plus1", "max", "min", "m53minus1", "zero"]),
                ("n >= %@", [0x1p63], []),
                ("n <= %@", [-0x1p63], ["min"]),
                ("n < %@", [-Double(1 << 53)], ["min", "m53minus1"]),
                ("n == %@", [-0.0], ["zero"]),
                ("n > %@", [0.5], ["p53", "p53plus1", "max"]),
                ("n < %@", [-0.5], ["min", "m53minus1"]),
                ("n IN %@", [[Double(1 << 53), 9_007_199_254_740_993.0]], ["p53"]),
            ]
            try Semantics.expect(cases, directory, rows)
        }
    }

    @Test("@sum over integers past Int64 continues in floating point instead of wrapping")
    func sumDoesNotWrap() throws {
        try withTemporaryDirectory { directory in
            let store = try Semantics.store(directory + "/sum.logstore", indexed: false, [
                .init(tag: "a", n: .max), .init(tag: "b", n: .max), .init(tag: "c", n: 2),
            ])
            defer { store.close() }
            var request = FetchRequest(entityName: "Sample")
            request.propertiesToFetch = [.aggregate(.sum, of: "n", as: "total")]
            let rows = try store.newContext().fetchDictionaries(request)
            let total = try #require(rows.first?["total"] as? Double)
            #expect(total == 2 * Double(Int64.max) + 2)
            #expect(Aggregation.aggregate(.sum, [.int64(.max), .int64(-1), .int64(1)]) == .int64(.max))
        }
    }

    @Test("UUIDs order by their bytes, which is the order of their spellings")
    func uuidOrder() {
        var generator = SystemRandomNumberGenerator()
        let fixed = ["00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-0000000000FF", "0F000000-0000-0000-0000-000000000000",
                     "A0000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"].compactMap(UUID.init(uuidString:))
        let ids = fixed + (0..<200).map { _ in
            UUID(uuid: (UInt8.random(in: 0...255, using: &generator), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                        UInt8.random(in: 0...255, using: &generator)))
        } + (0..<200).map { _ in UUID() }
        for a in ids {
            for b in ids.prefix(40) {
                let bytes = withUnsafeBytes(of: a.uuid) { left in withUnsafeBytes(of: b.uuid) { right in Array(left).lexicographicallyPrecedes(Array(right)) } }
                let expected = a == b ? ComparisonResult.orderedSame : (bytes ? .orderedAscending : .orderedDescending)
                #expect(StoredValue.order(.uuid(a), .uuid(b)) == expected)
                #expect(StoredValue.sortOrder(.uuid(a), .uuid(b)) == expected)
                #expect(StoredValue.compare(a.uuidString, b.uuidString) == expected)
            }
        }
    }

    @Test("A string attribute compared with a UUID gives the same answer through its index as through a scan")
    func uuidAgainstString() throws {
        try withTemporaryDirectory { directory in
            // Upper case letters sort before "Zed", lower case after it: in
            // the index's order the two spellings are not neighbours.
            let id = try #require(UUID(uuidString: "A1B2C3D4-0000-4000-8000-00000000000F"))
            let rows: [Semantics.Row] = [
                .init(tag: "upper", s: id.uuidString), .init(tag: "lower", s: id.uuidString.lowercased()),
                .init(tag: "other", s: UUID().uuidString), .init(tag: "text", s: "hello"), .init(tag: "zed", s: "Zed"),
                .init(tag: "mixed", s: "a1B2c3D4-0000-4000-8000-00000000000f"),
            ]
            for (format, expected) in [("s == %@", ["upper", "lower", "mixed"]), ("s != %@", ["other", "text", "zed"]), ("s IN %@", ["upper", "lower", "mixed"])] {
                let argument: Any = format.contains("IN") ? [id] : id
                let results = try Semantics.answers(directory, rows, try Semantics.request(format, [argument]))
                for result in results { #expect(result.sorted() == expected.sorted(), "\(format)") }
            }
        }
    }

    /// Pieces of text in both normalizations, with marks that compose,
    /// reorder or stand alone, and scalars NFC replaces.
    static let normalizationPieces = [
        "a", "b", "e", "z", " ", "\u{e9}", "e\u{301}", "\u{301}", "\u{323}", "\u{1e39}", "l\u{323}\u{304}", "\u{fc}", "u\u{308}",
        "\u{1100}", "\u{1161}", "\u{ac00}", "\u{11a8}", "\u{212b}", "\u{c5}", "A\u{30a}", "\u{439}", "\u{438}\u{306}", "\u{44f}",
        "\u{304b}", "\u{3099}", "\u{304c}", "\u{8a9e}", "\u{1f600}", "\u{37e}", ";", "\u{3b1}", "\u{1f71}",
    ]

    /// The order FORMAT.md gives strings, computed the long way: the bytes
    /// of their NFC forms (UTF-8 bytes order as scalars do).
    static func nfcOrder(_ a: String, _ b: String) -> ComparisonResult {
        let (x, y) = (a._nfcCodeUnits, b._nfcCodeUnits)
        return x == y ? .orderedSame : (x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending)
    }

    @Test("Strings order by the scalars of their NFC forms, whatever normalization each is in")
    func stringsOrderByTheirNormalForms() {
        // Swift's own `<` says neither of these is below the other, and
        // puts "ḹz" below "ḹ" (decomposed).
        #expect(StoredValue.order(.string("\u{e9}b"), .string("e\u{301}")) == .orderedDescending)
        #expect(StoredValue.order(.string("e\u{301}"), .string("\u{e9}b")) == .orderedAscending)
        #expect(StoredValue.order(.string("\u{1e39}z"), .string("l\u{323}\u{304}")) == .orderedDescending)
        #expect(StoredValue.order(.string("\u{ac00}\u{11a8}"), .string("\u{ac01}")) == .orderedSame)
        var random = JournalFixtures.SeededGenerator(seed: 0x4E4643)
        var strings: [String] = []
        for _ in 0..<1_500 {
            var text = Bool.random(using: &random) ? "same start " : ""
            for _ in 0..<Int.random(in: 0...5, using: &random) { text += Self.normalizationPieces.randomElement(using: &random)! }
            strings.append(text)
        }
        var disagreements = 0
        for (index, a) in strings.enumerated() {
            for b in strings[index...].prefix(60) {
                let expected = Self.nfcOrder(a, b)
                if StoredValue.order(.string(a), .string(b)) != expected || StoredValue.sortOrder(.string(b), .string(a)) != expected.reversed {
                    disagreements += 1
                    if disagreements <= 5 { Issue.record("\(a.unicodeScalars.map(\.value)) against \(b.unicodeScalars.map(\.value)): expected \(expected.rawValue)") }
                }
            }
        }
        #expect(disagreements == 0)
    }

    @Test("A range, a sort and an index over strings in both normalizations follow the one order")
    func rangesAndSortsOverMixedNormalization() throws {
        try withTemporaryDirectory { directory in
            let texts = ["e\u{301}", "\u{e9}b", "\u{e9}", "l\u{323}\u{304}", "\u{1e39}z", "\u{1e39}", "f", "e", "\u{ac00}\u{11a8}", "\u{ac01}a"]
            let rows = texts.enumerated().map { Semantics.Row(tag: "t\($0.offset)", s: $0.element) }
            func tags(_ keep: (String) -> Bool) -> [String] { texts.enumerated().filter { keep($0.element) }.map { "t\($0.offset)" } }
            for bound in ["\u{e9}b", "e\u{301}", "\u{1e39}", "l\u{323}\u{304}z", "\u{ac01}"] {
                try Semantics.expect([
                    ("s > %@", [bound], tags { Self.nfcOrder($0, bound) == .orderedDescending }),
                    ("s <= %@", [bound], tags { Self.nfcOrder($0, bound) != .orderedDescending }),
                    ("s == %@", [bound], tags { Self.nfcOrder($0, bound) == .orderedSame }),
                ], directory, rows)
            }
            let sorted = try Semantics.answers(directory, rows, try Semantics.request("s != nil", sort: [SortKey("s"), SortKey("tag")]))
            let expected = texts.indices.sorted { a, b in
                let order = Self.nfcOrder(texts[a], texts[b])
                return order == .orderedSame ? "t\(a)" < "t\(b)" : order == .orderedAscending
            }.map { "t\($0)" }
            for result in sorted { #expect(result == expected) }
        }
    }

    @Test("Comparisons with an empty string are ordinary comparisons, except BEGINSWITH, ENDSWITH and CONTAINS")
    func emptyString() throws {
        try withTemporaryDirectory { directory in
            let rows: [Semantics.Row] = [.init(tag: "empty", s: ""), .init(tag: "a", s: "a"), .init(tag: "B", s: "B"), .init(tag: "nil")]
            let cases: [(String, [String])] = [
                ("s == ''", ["empty"]),
                ("s != ''", ["a", "B", "nil"]),
                ("s > ''", ["a", "B"]),
                ("s >= ''", ["empty", "a", "B"]),
                ("s < 'a'", ["empty", "B"]),
                ("s LIKE ''", ["empty"]),
                ("s LIKE[c] ''", ["empty"]),
                ("s ==[c] ''", ["empty"]),
                ("s !=[c] ''", ["a", "B", "nil"]),
                ("s MATCHES ''", ["empty"]),
                ("s BEGINSWITH ''", []),
                ("s ENDSWITH[c] ''", []),
                ("s CONTAINS ''", []),
                ("s IN {'', 'a'}", ["empty", "a"]),
            ]
            for (format, expected) in cases {
                let results = try Semantics.answers(directory, rows, try Semantics.request(format))
                for result in results { #expect(result.sorted() == expected.sorted(), "\(format)") }
            }
        }
    }

    @Test("Dictionary results group NaN with NaN and zero with negative zero")
    func groupingFollowsTheOrder() throws {
        try withTemporaryDirectory { directory in
            let store = try Semantics.store(directory + "/group.logstore", indexed: false, Self.withNaN)
            defer { store.close() }
            var request = FetchRequest(entityName: "Sample")
            request.propertiesToFetch = [.attribute("x"), .count(as: "count")]
            request.propertiesToGroupBy = ["x"]
            let rows = try store.newContext().fetchDictionaries(request)
            let nanRows = rows.filter { ($0["x"] as? Double)?.isNaN == true }
            #expect(nanRows.count == 1)
            #expect(nanRows.first?["count"] as? Int64 == 3)
            #expect(rows.filter { ($0["x"] as? Double) == 0 }.first?["count"] as? Int64 == 2)
            #expect(rows.count == 7)
        }
    }

    @Test("A fetch whose predicate or sort uses a transient attribute is refused; evaluating in memory uses it")
    func transientAttributes() throws {
        try withTemporaryDirectory { directory in
            let store = try Semantics.store(directory + "/transient.logstore", indexed: false, [.init(tag: "a")])
            defer { store.close() }
            let context = store.newContext()
            let object = try #require(try context.fetch(FetchRequest(entityName: "Sample")).first)
            object["note"] = "draft"
            for request in [
                try Semantics.request("note == 'draft'"),
                FetchRequest(entityName: "Sample", sortDescriptors: [SortKey("note")]),
            ] {
                #expect {
                    _ = try context.fetch(request)
                } throws: { error in
                    let error = error as? LogStoreError
                    return error?.kind == .invalidPredicate && error?.attribute == "note" && error?.message.contains("transient") == true
                }
            }
            #expect(try ObjectPredicate("note == 'draft'").evaluate(with: object))
        }
    }
}
