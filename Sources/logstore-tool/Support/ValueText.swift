// How the tool writes values: JSON for JSON Lines and --json, text for CSV and tables.

import Foundation
import LogStore

/// Renders the values objects and journal records hold.
///
/// JSON: strings, numbers and booleans as themselves; dates as ISO 8601
/// strings in UTC to the millisecond; data (and transformable values, whose
/// transformers are the app's code) as base64 strings; UUIDs, URLs and
/// decimals as strings; related objects as their ID URIs; a non-finite
/// number as the string "NaN", "Infinity" or "-Infinity".
enum ValueText {
    static func json(_ value: Any?) -> String {
        var bytes: [UInt8] = []
        appendJSON(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` as JSON to UTF-8 `bytes` (bytes, not a `String`:
    /// appending to a String checks its encoding each time, which a dump of
    /// a million records pays for dearly).
    static func appendJSON(_ value: Any?, to bytes: inout [UInt8]) {
        switch value {
        case nil: append("null", to: &bytes)
        case let string as String: appendQuoted(string, to: &bytes)
        case let number as Int32: append(String(number), to: &bytes)
        case let number as Int64: append(String(number), to: &bytes)
        case let number as Double: appendNumber(number, to: &bytes)
        case let date as Date: appendQuoted(isoDate(date), to: &bytes)
        case let id as ObjectID: appendQuoted(id.uriString, to: &bytes)
        case let bool as Bool: append(bool ? "true" : "false", to: &bytes)
        case let number as Int16: append(String(number), to: &bytes)
        case let number as Int: append(String(number), to: &bytes)
        case let number as UInt64: append(String(number), to: &bytes)
        case let number as Float: appendNumber(Double(number), to: &bytes)
        case let decimal as Decimal: appendQuoted(decimal.description, to: &bytes)
        case let ids as [ObjectID]:
            bytes.append(UInt8(ascii: "["))
            for (position, id) in ids.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                appendQuoted(id.uriString, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case let fields as [(String, Any?)]:
            appendObject(fields, to: &bytes)
        case let values as [Any?]:
            bytes.append(UInt8(ascii: "["))
            for (position, value) in values.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                appendJSON(value, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        default: appendQuoted(plain(value), to: &bytes)
        }
    }

    /// An object with its keys in the given order.
    static func appendObject(_ fields: [(String, Any?)], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (position, (key, value)) in fields.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            appendQuoted(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendJSON(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
    }

    private static func appendNumber(_ number: Double, to bytes: inout [UInt8]) {
        if number.isNaN {
            append("\"NaN\"", to: &bytes)
        } else if number.isInfinite {
            append(number < 0 ? "\"-Infinity\"" : "\"Infinity\"", to: &bytes)
        } else {
            append(number.description, to: &bytes)
        }
    }

    /// `string` as a JSON string literal.
    static func appendQuoted(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        // Most strings need no escape: copy them whole.
        let copied = string.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The value as text: what CSV cells and table columns show. `shortIDs`
    /// writes related objects as `Entity/pKEY`, for tables, where the store
    /// is the same for every row.
    static func plain(_ value: Any?, shortIDs: Bool = false) -> String {
        switch value {
        case nil: ""
        case let string as String: string
        case let date as Date: isoDate(date)
        case let data as Data: data.base64EncodedString()
        case let uuid as UUID: uuid.uuidString
        case let url as URL: url.absoluteString
        case let id as ObjectID: shortIDs ? "\(id.entityName)/p\(id.key)" : id.uriString
        case let ids as [ObjectID]: ids.map { plain($0, shortIDs: shortIDs) }.joined(separator: " ")
        case let number as Double: number.description
        case let number as Float: number.description
        case let value?: "\(value)"
        }
    }

    /// A journal value as the object layer would read it, related records
    /// as IDs of `storeID` (names the journal's symbols).
    static func value(of stored: StoredValue, storeID: UUID, name: (Symbol) -> String) -> Any? {
        switch stored.value {
        case let id as RecordID: ObjectID(storeID: storeID, entityName: name(id.entity), key: id.key)
        case let ids as [RecordID]: ids.map { ObjectID(storeID: storeID, entityName: name($0.entity), key: $0.key) }
        case let value: value
        }
    }

    /// `2026-11-23T10:15:30.123Z`: ISO 8601 in UTC, to the millisecond,
    /// made by hand: a formatter or `String(format:)` per value costs more
    /// than the rest of a dumped record.
    ///
    /// A date a calendar cannot print (NaN, infinite, or outside the years
    /// 1 to 9999, all of which the format stores) is its seconds since the
    /// format's epoch instead: `nan s since 2001-01-01T00:00:00Z`.
    static func isoDate(_ date: Date) -> String {
        // 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z.
        guard date.timeIntervalSince1970 >= -62_135_596_800, date.timeIntervalSince1970 < 253_402_300_800 else {
            return "\(date.timeIntervalSinceReferenceDate) s since 2001-01-01T00:00:00Z"
        }
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        var seconds = time_t(Int64((milliseconds / 1000).rounded(.down)))
        let fraction = Int(milliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = ""
        text.reserveCapacity(24)
        func append(_ number: Int, width: Int) {
            let digits = String(number)
            if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
            text += digits
        }
        append(Int(parts.tm_year) + 1900, width: 4)
        text += "-"
        append(Int(parts.tm_mon) + 1, width: 2)
        text += "-"
        append(Int(parts.tm_mday), width: 2)
        text += "T"
        append(Int(parts.tm_hour), width: 2)
        text += ":"
        append(Int(parts.tm_min), width: 2)
        text += ":"
        append(Int(parts.tm_sec), width: 2)
        text += "."
        append(fraction, width: 3)
        text += "Z"
        return text
    }
}
