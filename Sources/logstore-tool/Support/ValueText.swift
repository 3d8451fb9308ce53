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
        var text = ""
        appendJSON(value, to: &text)
        return text
    }

    static func appendJSON(_ value: Any?, to text: inout String) {
        switch value {
        case nil: text += "null"
        case let string as String: appendQuoted(string, to: &text)
        case let bool as Bool: text += bool ? "true" : "false"
        case let number as Int16: text += String(number)
        case let number as Int32: text += String(number)
        case let number as Int64: text += String(number)
        case let number as Int: text += String(number)
        case let number as UInt64: text += String(number)
        case let number as Double: appendNumber(number, to: &text)
        case let number as Float: appendNumber(Double(number), to: &text)
        case let decimal as Decimal: appendQuoted(decimal.description, to: &text)
        case let ids as [ObjectID]:
            text += "["
            for (position, id) in ids.enumerated() {
                if position > 0 { text += "," }
                appendQuoted(id.uriRepresentation.absoluteString, to: &text)
            }
            text += "]"
        case let fields as [(String, Any?)]:
            appendObject(fields, to: &text)
        case let values as [Any?]:
            text += "["
            for (position, value) in values.enumerated() {
                if position > 0 { text += "," }
                appendJSON(value, to: &text)
            }
            text += "]"
        default: appendQuoted(plain(value), to: &text)
        }
    }

    /// An object with its keys in the given order.
    static func appendObject(_ fields: [(String, Any?)], to text: inout String) {
        text += "{"
        for (position, (key, value)) in fields.enumerated() {
            if position > 0 { text += "," }
            appendQuoted(key, to: &text)
            text += ":"
            appendJSON(value, to: &text)
        }
        text += "}"
    }

    private static func appendNumber(_ number: Double, to text: inout String) {
        if number.isNaN {
            text += "\"NaN\""
        } else if number.isInfinite {
            text += number < 0 ? "\"-Infinity\"" : "\"Infinity\""
        } else {
            text += number.description
        }
    }

    /// `string` as a JSON string literal.
    static func appendQuoted(_ string: String, to text: inout String) {
        text += "\""
        var clean = true
        for byte in string.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            clean = false
            break
        }
        if clean {
            text += string
        } else {
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
                default: text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
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
        case let id as ObjectID: shortIDs ? "\(id.entityName)/p\(id.key)" : id.uriRepresentation.absoluteString
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
    /// made by hand because a formatter per value is slow and one shared
    /// across threads is not safe.
    static func isoDate(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        var seconds = time_t(Int64((milliseconds / 1000).rounded(.down)))
        let fraction = Int(milliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), fraction)
    }
}
