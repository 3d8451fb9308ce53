// What the entries of a paged table are sorted under (FORMAT.md §13.5), and
// the one order the writer sorts them in and the reader searches them by.

import Foundation

/// What a paged table is sorted by, and so what its groups are.
enum PagedTableType: UInt64, Sendable {
    /// The key directory: an entity's records by key, with their data blocks.
    case keys = 0
    /// A secondary index: records by the value an attribute holds, then key.
    case values = 1
    /// The reverse of a stored relationship: sources by target, then source.
    case targets = 2
}

/// The group an entry of a paged table belongs to: an entity's position,
/// an indexed value, or a relationship's target key.
///
/// A string or data value longer than ``PagedGroup/longestWholeValue`` bytes
/// is held by its first bytes, marked cut: the cut group holds every longer
/// value with that prefix, so no value makes an index block large, and a
/// lookup meeting a cut group reads the records to compare.
enum PagedGroup: Sendable {
    case entity(Int)
    case value(StoredValue, cut: Bool)
    case target(UInt64)

    /// The longest string (as NFC UTF-8) or data an index holds whole.
    static let longestWholeValue = 1024
    /// Normalizing to NFC at most triples a string's UTF-8 bytes, so one of
    /// at most this many is whole without normalizing it.
    private static let longestUnnormalizedValue = longestWholeValue / 3

    /// The group `value` belongs to in a secondary index: the value itself,
    /// or its cut prefix when it is longer than ``longestWholeValue``.
    ///
    /// A string is cut in its NFC form (the standard library's, as
    /// ``StoredValue/compare(_:_:)-(String,String)`` compares), back to a
    /// whole scalar, so that the prefix sorts as the strings holding it do.
    static func indexing(_ value: StoredValue) -> PagedGroup {
        switch value {
        case .data(let bytes) where bytes.count > longestWholeValue:
            return .value(.data(bytes.prefix(longestWholeValue)), cut: true)
        case .string(let text) where text.utf8.count > longestUnnormalizedValue:
            let normal = text._nfcCodeUnits
            guard normal.count > longestWholeValue else {
                return .value(text.utf8.count > longestWholeValue ? .string(String(decoding: normal, as: UTF8.self)) : value, cut: false)
            }
            // Back to the start of the scalar the limit falls in. A prefix of
            // an NFC string that ends between scalars is itself in NFC:
            // composition and reordering within it are as they were.
            var end = longestWholeValue
            while normal[end] & 0xC0 == 0x80 { end -= 1 }
            return .value(.string(String(decoding: normal[..<end], as: UTF8.self)), cut: true)
        default:
            return .value(value, cut: false)
        }
    }

    /// Whether an index of an attribute whose type a recorded model names
    /// `storedType` (``StoredSchema/AttributeSchema/type``) may hold cut
    /// groups: one whose values are strings or data (URLs are held as
    /// strings, transformable values as data), or of a type this version
    /// does not know.
    static func mayCut(storedType: String) -> Bool {
        let neverCut: [AttributeType] = [.bool, .int16, .int32, .int64, .double, .float, .date, .uuid, .decimal]
        return !neverCut.contains { $0.description == storedType }
    }

    /// The order of entries' groups in a table.
    ///
    /// Entities and targets by number. Values by ``StoredValue/sortOrder(_:_:)``,
    /// except around a cut group: a value that starts with the group's prefix
    /// (or equals it) sorts before the group, since every value the group
    /// holds is longer in its first differing place; anything else sorts as
    /// it does against the prefix. A cut string was cut before a scalar of
    /// more UTF-8 bytes than were left, so any whole string, or shorter cut
    /// prefix, extending the prefix continues with a smaller scalar.
    static func order(_ left: PagedGroup, _ right: PagedGroup) -> ComparisonResult {
        switch (left, right) {
        case (.entity(let a), .entity(let b)): return StoredValue.compare(a, b)
        case (.target(let a), .target(let b)): return StoredValue.compare(a, b)
        case (.value(let a, let aCut), .value(let b, let bCut)):
            switch (aCut, bCut) {
            case (false, false): return StoredValue.sortOrder(a, b)
            case (false, true): return order(a, cutPrefix: b)
            case (true, false): return order(b, cutPrefix: a).reversed
            case (true, true):
                if StoredValue.sortOrder(a, b) == .orderedSame { return .orderedSame }
                if startsWith(b, prefix: a) { return .orderedDescending }
                if startsWith(a, prefix: b) { return .orderedAscending }
                return StoredValue.sortOrder(a, b)
            }
        default:
            // One table holds one kind of group; kinds order as declared.
            return StoredValue.compare(left.kindRank, right.kindRank)
        }
    }

    /// The order of (group, key) positions in a table.
    static func order(_ left: (group: PagedGroup, key: UInt64), _ right: (group: PagedGroup, key: UInt64)) -> ComparisonResult {
        let groups = order(left.group, right.group)
        return groups == .orderedSame ? StoredValue.compare(left.key, right.key) : groups
    }

    private static func order(_ whole: StoredValue, cutPrefix prefix: StoredValue) -> ComparisonResult {
        startsWith(whole, prefix: prefix) ? .orderedAscending : StoredValue.sortOrder(whole, prefix)
    }

    /// Whether `value` begins with `prefix`: NFC scalars of strings, bytes of data.
    private static func startsWith(_ value: StoredValue, prefix: StoredValue) -> Bool {
        switch (value, prefix) {
        case (.string(let text), .string(let start)):
            return text._nfcCodeUnits.starts(with: start.utf8)
        case (.data(let bytes), .data(let start)):
            return bytes.starts(with: start)
        default:
            return false
        }
    }

    private var kindRank: Int {
        switch self {
        case .entity: 0
        case .value: 1
        case .target: 2
        }
    }

    /// Whether a value decoded as a group of a table is one a writer makes:
    /// never a relationship's value, and cut exactly when it is a string or
    /// data at most ``longestWholeValue`` bytes long that a longer value
    /// begins with (a cut string is in NFC).
    static func isValidIndexedValue(_ value: StoredValue, cut: Bool) -> Bool {
        switch value {
        case .reference, .references: return false
        case .string(let text):
            guard cut || text.utf8.count > longestUnnormalizedValue else { return true }
            let normal = text._nfcCodeUnits
            guard normal.count <= longestWholeValue else { return false }
            return !cut || (!text.isEmpty && normal.elementsEqual(text.utf8))
        case .data(let bytes): return bytes.count <= longestWholeValue && (!cut || bytes.count == longestWholeValue)
        default: return !cut
        }
    }
}
