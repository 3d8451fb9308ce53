// The value encoding of FORMAT.md §5.2: a type code byte, then the value.

import Foundation

/// Type codes of the value encoding. Stable: files depend on them.
enum ValueTypeCode: UInt8 {
    case null = 0
    case `false` = 1
    case `true` = 2
    case int16 = 3
    case int32 = 4
    case int64 = 5
    case float = 6
    case double = 7
    case string = 8
    case date = 9
    case data = 10
    case uuid = 11
    case reference = 12
    case references = 13
    /// Format version 3.
    case decimal = 14
}

extension ByteWriter {
    mutating func append(_ value: StoredValue) {
        switch value {
        case .null:
            append(ValueTypeCode.null.rawValue)
        case .bool(let flag):
            append((flag ? ValueTypeCode.true : .false).rawValue)
        case .int16(let number):
            append(ValueTypeCode.int16.rawValue)
            appendSignedVarint(Int64(number))
        case .int32(let number):
            append(ValueTypeCode.int32.rawValue)
            appendSignedVarint(Int64(number))
        case .int64(let number):
            append(ValueTypeCode.int64.rawValue)
            appendSignedVarint(number)
        case .float(let number):
            append(ValueTypeCode.float.rawValue)
            appendFixed(number.bitPattern)
        case .double(let number):
            append(ValueTypeCode.double.rawValue)
            appendFixed(number.bitPattern)
        case .string(let string):
            append(ValueTypeCode.string.rawValue)
            appendLengthPrefixed(string)
        case .date(let date):
            // Seconds since 2001-01-01 as Date keeps them, so a round trip is exact.
            append(ValueTypeCode.date.rawValue)
            appendFixed(date.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let data):
            append(ValueTypeCode.data.rawValue)
            data.withUnsafeBytes { appendLengthPrefixed($0) }
        case .uuid(let uuid):
            append(ValueTypeCode.uuid.rawValue)
            withUnsafeBytes(of: uuid.uuid) { append($0) }
        case .decimal(let number):
            append(ValueTypeCode.decimal.rawValue)
            appendLengthPrefixed(DecimalText.text(number))
        case .reference(let id):
            append(ValueTypeCode.reference.rawValue)
            append(id)
        case .references(let ids):
            append(ValueTypeCode.references.rawValue)
            appendVarint(UInt64(ids.count))
            for id in ids { append(id) }
        }
    }

    mutating func append(_ id: RecordID) {
        appendVarint(UInt64(id.entity.rawValue))
        appendVarint(id.key)
    }
}

extension RecordID {
    /// Every record key is below this (FORMAT.md §5.1): a key at or past it
    /// in a file is damage. It leaves room to count one past any key and
    /// to add a reservation to it without overflow, and keeps every key an
    /// `Int64` as key reservations store them (§5.5). The store would take
    /// centuries to hand out this many.
    static let keyLimit: UInt64 = 1 << 62
}

extension ByteReader {
    /// Reads one value. `trusted` skips the UTF-8 check of strings: only for
    /// bytes LogStore encoded in memory itself, never for bytes from a file.
    mutating func readValue(trusted: Bool = false) throws(DecodeFailure) -> StoredValue {
        let code = try readByte()
        guard let type = ValueTypeCode(rawValue: code) else {
            throw DecodeFailure("unknown value type code \(code) at byte \(position - 1)")
        }
        switch type {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int16:
            return .int16(try readNarrow(Int16.self))
        case .int32:
            return .int32(try readNarrow(Int32.self))
        case .int64:
            return .int64(try readSignedVarint())
        case .float:
            return .float(Float(bitPattern: try readFixed(UInt32.self)))
        case .double:
            return .double(Double(bitPattern: try readFixed(UInt64.self)))
        case .string:
            return .string(trusted ? String(decoding: try readLengthPrefixed(), as: UTF8.self) : try readString())
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readFixed(UInt64.self))))
        case .data:
            return .data(Data(try readLengthPrefixed()))
        case .uuid:
            let raw = try readBytes(count: 16)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
            return .uuid(UUID(uuid: uuid))
        case .decimal:
            let text = trusted ? String(decoding: try readLengthPrefixed(), as: UTF8.self) : try readString()
            guard let number = DecimalText.number(text) else {
                throw DecodeFailure("\"\(text.prefix(64))\" is not a decimal in its canonical text, before byte \(position)")
            }
            return .decimal(number)
        case .reference:
            return .reference(try readRecordID())
        case .references:
            // Each ID takes at least two bytes (two varints).
            let count = try readCount(minimumItemSize: 2)
            var ids: [RecordID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(try readRecordID()) }
            return .references(ids)
        }
    }

    /// A signed varint that must fit in `Narrow`: an `int16` or `int32`
    /// value's bytes after its type code.
    @inline(__always)
    private mutating func readNarrow<Narrow: FixedWidthInteger & SignedInteger>(_: Narrow.Type) throws(DecodeFailure) -> Narrow {
        let number = try readSignedVarint()
        guard let narrow = Narrow(exactly: number) else { throw DecodeFailure("\(Narrow.self) value out of range at byte \(position)") }
        return narrow
    }

    /// Checks the next value as ``readValue()`` would and moves past it,
    /// without copying out strings, data or lists; `checkReference` sees
    /// each ID a value refers to.
    @inline(__always)
    mutating func skipValue(checkingReferences checkReference: (RecordID) throws(DecodeFailure) -> Void) throws(DecodeFailure) {
        try skipValue(checking: true, checkReference)
    }

    /// Skips a value written by this codec, without checking strings: for
    /// bytes LogStore wrote to memory itself, never for bytes read from a
    /// file. Lands where ``readValue(trusted:)`` would.
    @inline(__always)
    mutating func skipTrustedValue() throws(DecodeFailure) {
        try skipValue(checking: false) { _ throws(DecodeFailure) in }
    }

    /// Moves past the next value, where ``readValue(trusted:)`` would land;
    /// `checking` (bytes from a file) fails where it would fail, without
    /// building the value, while bytes LogStore wrote itself skip the
    /// checks of ranges, UTF-8 and decimal text.
    @inline(__always)
    private mutating func skipValue(checking: Bool, _ checkReference: (RecordID) throws(DecodeFailure) -> Void) throws(DecodeFailure) {
        switch try peekByte() {
        case ValueTypeCode.null.rawValue, ValueTypeCode.false.rawValue, ValueTypeCode.true.rawValue:
            _ = try readByte()
        case ValueTypeCode.int16.rawValue:
            _ = try readByte()
            if checking { _ = try readNarrow(Int16.self) } else { _ = try readVarint() }
        case ValueTypeCode.int32.rawValue:
            _ = try readByte()
            if checking { _ = try readNarrow(Int32.self) } else { _ = try readVarint() }
        case ValueTypeCode.int64.rawValue:
            _ = try readByte()
            _ = try readVarint()
        case ValueTypeCode.float.rawValue:
            _ = try readByte()
            try skip(MemoryLayout<UInt32>.size)
        case ValueTypeCode.double.rawValue, ValueTypeCode.date.rawValue:
            _ = try readByte()
            try skip(MemoryLayout<UInt64>.size)
        case ValueTypeCode.uuid.rawValue:
            _ = try readByte()
            try skip(16)
        case ValueTypeCode.string.rawValue:
            _ = try readByte()
            if checking { _ = try readUTF8() } else { try skip(try readCount()) }
        case ValueTypeCode.data.rawValue:
            _ = try readByte()
            try skip(try readCount())
        case ValueTypeCode.decimal.rawValue where !checking:
            _ = try readByte()
            try skip(try readCount())
        case ValueTypeCode.reference.rawValue:
            _ = try readByte()
            try checkReference(try readRecordID())
        case ValueTypeCode.references.rawValue:
            _ = try readByte()
            let count = try readCount(minimumItemSize: 2)
            for _ in 0..<count { try checkReference(try readRecordID()) }
        default:
            // A decimal's text is checked by parsing it, and an unknown type
            // code fails as it does there.
            _ = try readValue(trusted: !checking)
        }
    }

    // The skips and reads below dispatch on the type code's byte: making
    // the enum case first was a call per value, and a scan makes them for
    // every value before the one it tests.

    /// The value at the reader as an integer, when it is an `int16`,
    /// `int32` or `int64` (then read past), or nil, the reader left where it
    /// was: bytes written from valid values, so no range is checked.
    @inline(__always)
    mutating func readTrustedInteger() throws(DecodeFailure) -> Int64? {
        switch try peekByte() {
        case ValueTypeCode.int16.rawValue, ValueTypeCode.int32.rawValue, ValueTypeCode.int64.rawValue:
            _ = try readByte()
            return try readSignedVarint()
        default:
            return nil
        }
    }

    mutating func readRecordID() throws(DecodeFailure) -> RecordID {
        let entity = try readVarint()
        guard let narrow = UInt32(exactly: entity) else { throw DecodeFailure("entity symbol \(entity) out of range at byte \(position)") }
        return RecordID(entity: Symbol(rawValue: narrow), key: try readKey())
    }

    /// A record key: a varint below ``RecordID/keyLimit``.
    mutating func readKey() throws(DecodeFailure) -> UInt64 {
        let key = try readVarint()
        guard key < RecordID.keyLimit else {
            throw DecodeFailure("record key \(key) before byte \(position) is not below the limit of 2^62")
        }
        return key
    }

    mutating func readSymbol() throws(DecodeFailure) -> Symbol {
        let number = try readVarint()
        guard let narrow = UInt32(exactly: number) else { throw DecodeFailure("symbol \(number) out of range at byte \(position)") }
        return Symbol(rawValue: narrow)
    }
}

/// A decimal's text in the value encoding: the shortest spelling Swift
/// gives it, with "." and no exponent, read back exactly (FORMAT.md §5.2).
enum DecimalText {
    private static let posix = Locale(identifier: "en_US_POSIX")

    static func text(_ number: Decimal) -> String { number.isNaN ? "NaN" : number.description }

    /// The decimal `text` spells, only when `text` is its canonical
    /// spelling: `Decimal(string:)` alone would read "12abc" as 12.
    static func number(_ text: String) -> Decimal? {
        if text == "NaN" { return .nan }
        guard let number = Decimal(string: text, locale: posix), number.description == text else { return nil }
        return number
    }

    /// The decimal a double's shortest spelling names (0.1 for the double
    /// nearest 0.1), or nil when it has none (infinity, NaN, or outside
    /// Decimal's range).
    static func number(_ double: Double) -> Decimal? {
        guard double.isFinite else { return nil }
        return Decimal(string: "\(double)", locale: posix)
    }

    /// The double nearest `number`, correctly rounded (Foundation's
    /// `doubleValue` is not: it gives 19.990000000000002 for 19.99).
    static func double(_ number: Decimal) -> Double {
        number.isNaN ? .nan : Double(number.description) ?? .nan
    }
}
