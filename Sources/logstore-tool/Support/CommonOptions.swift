// Options every file-reading subcommand shares, and opening the store.

import ArgumentParser
import Foundation
import LogStore

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
        print(String(decoding: try encoder.encode(JSONDocument(result: value)), as: UTF8.self))
    }
}

/// Wraps a result with the JSON format version, so scripts can tell layouts apart.
struct JSONDocument<Body: Encodable>: Encodable {
    var formatVersion = 1
    var result: Body
}

/// The store at `path` opened with the model its file records, read-only
/// unless `writing`; errors are reported and become exit codes.
func openStore(_ path: String, writing: Bool = false) throws -> Store {
    let options = JournalOptions(access: writing ? .readWrite : .readOnly, createIfMissing: false, compaction: .manual)
    do {
        return try Store(recordedModelAt: path, options: options)
    } catch {
        throw ExitStatus.report(error)
    }
}

/// Runs `body`, turning a LogStore error into its report and exit code.
func reporting<T>(_ body: () throws(LogStoreError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw ExitStatus.report(error)
    }
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
