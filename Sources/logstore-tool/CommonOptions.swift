// Options every file-reading subcommand shares: the store path and --json.

import ArgumentParser
import Foundation

struct CommonOptions: ParsableArguments {
    @Argument(help: "The store file.")
    var file: String

    @Flag(help: "Print one JSON document instead of text.")
    var json = false

    /// Prints `value` as pretty JSON with sorted, stable keys.
    func emitJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// Wraps a result with the JSON format version, so scripts can tell layouts apart.
struct JSONDocument<Body: Encodable>: Encodable {
    var formatVersion = 1
    var result: Body
}

func formatBytes(_ count: UInt64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
}
