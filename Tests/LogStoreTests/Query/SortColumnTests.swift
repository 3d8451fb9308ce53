// The sort's shortcut for ASCII text (SortColumn.asciiPrefixes) against the
// one definition of string order, StoredValue.compare: wherever it decides
// a comparison, it decides it as the definition does.

import Foundation
import Testing
@testable import LogStore

@Suite("Sort columns")
struct SortColumnTests {
    /// Strings around the prefix's 15 bytes: a shared stem of 13, 14 and 15
    /// bytes, endings of up to three letters, and a few short ones.
    static let texts: [String?] = {
        var texts: [String?] = [nil, "", "a", "m", "ab"]
        for stem in ["abcdefghijklm", "abcdefghijklmn", "abcdefghijklmno"] {
            var endings = [""]
            for _ in 0..<3 { endings += endings.flatMap { ending in ["a", "n", "z"].map { ending + $0 } } }
            texts += Set(endings).sorted().map { stem + $0 }
        }
        return texts
    }()

    @Test("Prefixes that differ order as the strings do; equal ones of whole strings mean equal strings")
    func prefixesAgreeWithTheDefinition() throws {
        let column = SortColumn(Self.texts.map { .value($0.map(StoredValue.string) ?? .null) }, options: [])
        let prefixes = try #require(column.asciiPrefixes)
        var decidedEqual = 0, leftToTheStrings = 0
        for a in Self.texts.indices {
            for b in Self.texts.indices {
                let expected = column.compare(a, b)
                if prefixes[a] != prefixes[b] {
                    #expect((prefixes[a] < prefixes[b]) == (expected < 0), "\(String(describing: Self.texts[a])) against \(String(describing: Self.texts[b]))")
                } else if SortColumn.prefixDecides(prefixes[a]) {
                    #expect(expected == 0, "\(String(describing: Self.texts[a])) against \(String(describing: Self.texts[b]))")
                    if a != b { decidedEqual += 1 }
                } else {
                    leftToTheStrings += 1
                }
            }
        }
        // Both shortcuts were taken (a 14-byte text is in the list twice,
        // from two stems), and some pairs needed the strings.
        #expect(decidedEqual > 0)
        #expect(leftToTheStrings > 0)
        // The column's compare is itself the definition's.
        for a in Self.texts.indices {
            for b in Self.texts.indices {
                guard let x = Self.texts[a], let y = Self.texts[b] else { continue }
                #expect(column.compare(a, b) == StoredValue.compare(x, y).rawValue)
            }
        }
    }

    @Test("Equal strings of at most 15 bytes tie on the prefix alone; longer ones do not")
    func equalStringsTie() throws {
        let values: [String?] = ["abcdefghijklmno", "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnop", nil, nil, "", ""]
        let column = SortColumn(values.map { .value($0.map(StoredValue.string) ?? .null) }, options: [])
        let prefixes = try #require(column.asciiPrefixes)
        for pair in stride(from: 0, to: values.count, by: 2) {
            #expect(prefixes[pair] == prefixes[pair + 1])
            #expect(SortColumn.prefixDecides(prefixes[pair]) == (values[pair].map { $0.utf8.count <= 15 } ?? true))
        }
        #expect(prefixes[6] > prefixes[4], "the empty string sorts after nil")
    }

    @Test("A column with one non-ASCII string, or one holding NUL, has no prefixes; nor has a column of numbers")
    func noPrefixesWithoutPlainASCII() {
        for odd in ["café", "a\u{0}b", "e\u{301}"] {
            let column = SortColumn((["abc", odd, nil] as [String?]).map { .value($0.map(StoredValue.string) ?? .null) }, options: [])
            #expect(column.asciiPrefixes == nil, "\(odd.debugDescription)")
        }
        #expect(SortColumn([.value(.int64(1)), .value(.int64(2))], options: []).asciiPrefixes == nil)
    }

    @Test("A fetch sorted by text with ties, then by a second key, gives the order of the definition")
    func fetchSortsTiesByTheNextKey() throws {
        try withTemporaryDirectory { directory in
            // Duplicates of every text, each with a different second key, in
            // an order unlike either key's.
            var rows: [Semantics.Row] = []
            for (position, text) in Self.texts.enumerated() {
                for copy in 0..<3 {
                    rows.append(Semantics.Row(tag: "t\(position)-\(copy)", n: Int64((position * 7 + copy * 13) % 5), s: text))
                }
            }
            var random = JournalFixtures.SeededGenerator(seed: 11)
            rows.shuffle(using: &random)
            for ascending in [true, false] {
                let request = try Semantics.request("tag BEGINSWITH 't'", sort: [SortKey("s", ascending: ascending), SortKey("n")])
                let expected = rows.sorted { a, b in
                    let first = Self.order(a.s, b.s)
                    if first != 0 { return (first < 0) == ascending }
                    return (a.n ?? 0) < (b.n ?? 0)
                }
                let answers = try Semantics.answers(directory, rows, request)
                // Rows equal in both keys come in insertion order: compare
                // the keys' values, not the tags.
                let rowsByTag = Dictionary(uniqueKeysWithValues: rows.map { ($0.tag, $0) })
                for answer in answers {
                    #expect(answer.map { rowsByTag[$0]?.s } == expected.map(\.s))
                    #expect(answer.map { rowsByTag[$0]?.n } == expected.map(\.n))
                }
            }
        }
    }

    /// The definition's order of two optional strings: nil first.
    private static func order(_ a: String?, _ b: String?) -> Int {
        switch (a, b) {
        case (nil, nil): 0
        case (nil, _): -1
        case (_, nil): 1
        case let (x?, y?): StoredValue.compare(x, y).rawValue
        }
    }
}
