// The model and the values the query-plan generators use: every kind of
// attribute twice, indexed and not, and values chosen where the one order
// of stored values (Sources/LogStore/Store/ValueOrder.swift) has its edges,
// so that a plan that departs from it at an edge shows.

import Foundation
import LogStore

/// The kinds of attribute an item has, each as an indexed attribute named
/// after the kind (`double`) and an unindexed twin (`plainDouble`).
public enum ValueKind: String, CaseIterable, Sendable {
    case double, float, int16, int32, int64, bool, date, string, uuid

    /// The indexed attribute.
    public var indexed: String { rawValue }
    /// The unindexed twin.
    public var plain: String { "plain" + rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    var type: AttributeType {
        switch self {
        case .double: .double
        case .float: .float
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .bool: .bool
        case .date: .date
        case .string: .string
        case .uuid: .uuid
        }
    }

    /// Kinds whose values take part in arithmetic.
    var isArithmetic: Bool { ![.bool, .string, .uuid].contains(self) }

    /// How many values ``value(_:)`` offers.
    var count: Int {
        switch self {
        case .double: QueryPlanValues.doubles.count
        case .float: QueryPlanValues.floats.count
        case .int16: QueryPlanValues.int16s.count
        case .int32: QueryPlanValues.int32s.count
        case .int64: QueryPlanValues.int64s.count
        case .bool: 2
        case .date: QueryPlanValues.dates.count
        case .string: QueryPlanValues.strings.count
        case .uuid: QueryPlanValues.uuids.count
        }
    }

    /// Value `index` of this kind, as the attribute's Swift type.
    func value(_ index: Int) -> any Sendable {
        switch self {
        case .double: QueryPlanValues.doubles[index]
        case .float: QueryPlanValues.floats[index]
        case .int16: QueryPlanValues.int16s[index]
        case .int32: QueryPlanValues.int32s[index]
        case .int64: QueryPlanValues.int64s[index]
        case .bool: index == 1
        case .date: QueryPlanValues.dates[index]
        case .string: QueryPlanValues.strings[index]
        case .uuid: QueryPlanValues.uuids[index]
        }
    }
}

/// The model of the query-plan tests: one entity, `Item`, with each
/// ``ValueKind`` indexed and not, a to-one `parent` and its inverse, the
/// to-many `children`, so that key paths, `@count`, aggregates,
/// `ANY`/`ALL`/`NONE` and `SUBQUERY` have something to walk.
public enum QueryPlanModel {
    public static let entity = "Item"

    public static let model: Model = try! Model {
        Entity(entity) {
            for kind in ValueKind.allCases {
                Attribute(kind.indexed, kind.type, indexed: true)
                Attribute(kind.plain, kind.type)
            }
            Relationship("parent", to: entity, inverse: "children")
            Relationship("children", to: entity, inverse: "parent", toMany: true)
        }
    }
}

/// The values attributes and constants are drawn from. Numbers sit where
/// integers and doubles part (2⁵³, 2⁶³), at the ends of each width, at
/// NaN, the infinities, both zeros and the subnormals, and repeat across
/// kinds (3, 42, 32767) so that comparisons across kinds find equals.
/// Strings mix case, composed and decomposed accents, ß, emoji, combining
/// marks, the empty string, LIKE's wildcards, and UUIDs spelled in
/// either case.
enum QueryPlanValues {
    static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.5, 3, 42, 0.1, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, 1e-300, 0x1p53, 0x1p53 + 2, -0x1p53, 0x1p63, -0x1p63, 0x1p64, 32767, -32768, 2_147_483_647,
    ]
    static let floats: [Float] = [
        0, -0.0, 1, -1, 0.5, 3, 42, 0.1, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
        0x1p24, 0x1p24 + 2, 0x1p63, -0x1p63, 32767,
    ]
    static let int64s: [Int64] = [
        0, 1, -1, 3, 42, 1 << 53, (1 << 53) + 1, (1 << 53) - 1, -(1 << 53), -(1 << 53) - 1, .max, .min, .max - 1, .min + 1,
        32767, -32768, 2_147_483_647, (1 << 24) + 1,
    ]
    static let int32s: [Int32] = [0, 1, -1, 3, 42, .max, .min, 32767, (1 << 24) + 1]
    static let int16s: [Int16] = [0, 1, -1, 3, 42, .max, .min]
    static let dates: [Date] = [0, 1, 3, -1, 0.5, 42, 1e15, -1e15, 0x1p53, 9e18].map(Date.init(timeIntervalSinceReferenceDate:))
        + [.distantPast, .distantFuture]
    static let uuids: [UUID] = [
        UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
        UUID(uuidString: "FFFFFFFF-0000-4000-8000-00000000000A")!,
    ]
    static let strings: [String] = [
        "", "a", "A", "ab", "abc", "ABC", "Abc", "b", "B", " ", "3", "42", "0",
        "\u{E9}", "e\u{301}", "E\u{301}", "\u{C9}", "e", "E", "\u{E9}t\u{E9}", "ete",
        "\u{DF}", "ss", "SS", "stra\u{DF}e", "STRASSE", "a\u{308}", "\u{E4}", "Zo\u{EB}", "zoe", "ZOE",
        "\u{1F600}", "a\u{1F600}", "\u{1F1FA}\u{1F1F8}", "\u{301}", "a*", "a?c", "\\",
        "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621E1F8-c36c-495A-93fc-0C247A3E6E5F",
    ]
    /// Patterns for LIKE, beside the strings themselves.
    static let likePatterns: [String] = ["*", "?", "a*", "*b*", "A?c", "e*", "*\u{E9}", "*\u{301}*", "??", "*s*"]
    /// Regular expressions for MATCHES.
    static let regexes: [String] = [".*", "a.*", "[a-z]+", ".*\u{E9}.*", "(?i)abc", "\\d+", ".", "[^a]*", "e\u{301}"]
}
