// The scaling runs as text: the limits, a table per workload, memory.

import Foundation

extension ScalingReport {
    var text: String {
        var lines = ["== Scaling: LogStore and SQLite (GRDB 7.10.0) at \(sizes.map { $0.formatted() }.joined(separator: ", ")) records [scaling]"]
        for skip in skipped { lines.append("  skipped \(skip.size.formatted()) records: \(skip.reason)") }
        for failure in failed { lines.append("  FAILED at \(failure.size.formatted()) records: \(failure.reason)") }
        if let limits {
            lines.append("  machine limits, measured in this run:")
            for row in limits.rows { lines.append("    \(row.name): \(formatted(row.value)) \(row.unit)") }
            lines.append("  a Person's raw values: \(formatted(recordBytes)) bytes")
        }
        let header = ["size", "SQLite with", "LogStore", "SQLite", "ratio", "LS resident", "SQLite resident", "limit", "LS ÷ limit", "LS latency", "SQLite latency"]
        for workload in Workload.allCases {
            let rows = self.rows.filter { $0.workload == workload }
            guard let first = rows.first else { continue }
            lines.append("")
            lines.append("  \(workload.title) [\(workload.rawValue)], \(workload.unit); latency per \(workload.operation)")
            let table = rows.flatMap { row in
                row.comparisons.map { comparison in
                    [row.size.formatted() + (comparison.quiescent ? " quiescent" : ""), comparison.sqliteMemory,
                     Self.range(comparison.logStore), Self.range(comparison.sqlite),
                     formatted(comparison.ratio), Self.resident(comparison.logStoreResident), Self.resident(comparison.sqliteResident),
                     Self.si(row.limit), Self.percent(comparison.logStore.fractionOfLimit),
                     Self.duration(comparison.logStore.latency), Self.duration(comparison.sqlite.latency)]
                }
            }
            lines += Self.columns([header] + table).map { "    " + $0 }
            lines.append("    limit: \(first.limitBasis); results: \(first.check)")
        }
        if !latencyTable.isEmpty {
            lines.append("")
            lines.append("  latency of single saves, every save of every round (nearest rank)")
            lines += Self.columns([Self.latencyHeader] + latencyTable).map { "    " + $0 }
        }
        if !memory.isEmpty {
            lines.append("")
            lines.append("  memory and file size")
            lines += Self.columns([Self.memoryHeader] + memoryTable).map { "    " + $0 }
        }
        lines += notes.map { "  note: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// The table as Markdown, for BENCHMARKS.md: a line per SQLite memory
    /// budget (and per clock, where LogStore's ran on until quiescent).
    var markdown: String {
        var lines = [
            "| workload | size | SQLite with | LogStore | SQLite | ratio | LogStore resident | SQLite resident | LogStore ÷ limit |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for workload in Workload.allCases {
            for row in rows where row.workload == workload {
                for comparison in row.comparisons {
                    let name = workload.rawValue + (comparison.quiescent ? ", until quiescent" : "")
                    lines.append("| \(name) (\(workload.unit)) | \(row.size.formatted()) | \(comparison.sqliteMemory) | \(Self.si(comparison.logStore.median)) | \(Self.si(comparison.sqlite.median)) | \(formatted(comparison.ratio)) | \(Self.resident(comparison.logStoreResident)) | \(Self.resident(comparison.sqliteResident)) | \(Self.percent(comparison.logStore.fractionOfLimit)) |")
                }
            }
        }
        if !latencyTable.isEmpty {
            lines += ["", "Latency of single saves: every save of every round, nearest rank.", ""]
            lines += Self.markdownTable([Self.latencyHeader] + latencyTable)
        }
        if !memory.isEmpty {
            lines += ["", "Memory and file size.", ""]
            lines += Self.markdownTable([Self.memoryHeader] + memoryTable)
        }
        return lines.joined(separator: "\n")
    }

    private static let latencyHeader = ["workload", "size", "LS p50", "LS p99", "LS p99.9", "LS max", "SQLite p50", "SQLite p99", "SQLite p99.9", "SQLite max", "saves (LS / SQLite)"]

    /// A line per workload and size whose saves were timed one by one.
    private var latencyTable: [[String]] {
        rows.compactMap { row in
            guard let logStore = row.logStoreLatencies, let sqlite = row.sqliteLatencies else { return nil }
            return [row.workload.rawValue, row.size.formatted(),
                    Self.duration(logStore.p50), Self.duration(logStore.p99), Self.duration(logStore.p999), Self.duration(logStore.maximum),
                    Self.duration(sqlite.p50), Self.duration(sqlite.p99), Self.duration(sqlite.p999), Self.duration(sqlite.maximum),
                    "\(logStore.count.formatted()) / \(sqlite.count.formatted())"]
        }
    }

    private static let memoryHeader = ["size", "LS peak insert", "LS save's peak (× raw)", "LS peak batch import", "SQLite peak insert", "LS resident B/rec", "SQLite resident B/rec", "LS file B/rec", "SQLite file B/rec", "LS index frame B/rec"]

    private var memoryTable: [[String]] {
        memory.map { row in
            [row.size.formatted(),
             Self.bytes(Double(row.logStorePeakInsert)),
             row.logStoreSavePeak.map { Self.bytes(Double($0)) + " (" + formatted(Double($0) / (Double(row.size) * recordBytes)) + ")" } ?? "–",
             Self.bytes(Double(row.logStorePeakBatchImport)), Self.bytes(Double(row.sqlitePeakInsert)),
             formatted(row.logStoreResidentPerRecord), formatted(row.sqliteResidentPerRecord),
             formatted(row.logStoreFilePerRecord), formatted(row.sqliteFilePerRecord), formatted(row.logStoreIndexFramePerRecord)]
        }
    }

    /// `rows` as a Markdown table, the first its header; numbers right-aligned.
    private static func markdownTable(_ rows: [[String]]) -> [String] {
        let alignment = rows[0].indices.map { $0 == 0 ? "---" : "---:" }
        return ([rows[0], alignment] + rows.dropFirst()).map { "| " + $0.joined(separator: " | ") + " |" }
    }

    /// A median and its range.
    private static func range(_ figures: StoreFigures) -> String {
        si(figures.median) + " (" + si(figures.minimum) + "–" + si(figures.maximum) + ")"
    }

    /// The memory a store added in its child process, or a dash.
    private static func resident(_ memory: ResidentMemory?) -> String {
        memory.map { bytes(Double($0.added)) } ?? "–"
    }

    /// Left-aligned first column, the rest right-aligned.
    private static func columns(_ rows: [[String]]) -> [String] {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
    }

    /// 332000 as "332k", 1.25e6 as "1.25M".
    static func si(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        for (scale, suffix) in [(1e9, "G"), (1e6, "M"), (1e3, "k")] where abs(value) >= scale {
            return formatted(value / scale) + suffix
        }
        return formatted(value)
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "\(seconds)" }
        if seconds >= 1 { return formatted(seconds) + " s" }
        if seconds >= 1e-3 { return formatted(seconds * 1e3) + " ms" }
        if seconds >= 1e-6 { return formatted(seconds * 1e6) + " µs" }
        return formatted(seconds * 1e9) + " ns"
    }

    static func bytes(_ count: Double) -> String {
        count >= 1e9 ? formatted(count / 1e9) + " GB" : count >= 1e6 ? formatted(count / 1e6) + " MB" : formatted(count / 1e3) + " kB"
    }

    static func percent(_ fraction: Double) -> String { formatted(fraction * 100) + " %" }
}

/// One line of a row's table: LogStore beside SQLite with one memory budget,
/// or LogStore timed until quiescent.
struct ScalingLine {
    var sqliteMemory: String
    var logStore: StoreFigures
    var sqlite: StoreFigures
    var ratio: Double
    var logStoreResident: ResidentMemory?
    var sqliteResident: ResidentMemory?
    var quiescent = false
}

extension ScalingRow {
    /// The row's lines: SQLite as `sqlite` ran, each other budget, then
    /// the quiescent clock if LogStore's differed.
    var comparisons: [ScalingLine] {
        var lines = [ScalingLine(sqliteMemory: sqliteMemory, logStore: logStore, sqlite: sqlite, ratio: ratio,
                                logStoreResident: logStoreResident, sqliteResident: sqliteResident)]
        for variant in sqliteVariants {
            lines.append(ScalingLine(sqliteMemory: variant.memory, logStore: logStore, sqlite: variant.figures, ratio: variant.ratio,
                                    logStoreResident: logStoreResident, sqliteResident: variant.resident))
        }
        if let quiescent {
            lines.append(ScalingLine(sqliteMemory: sqliteMemory, logStore: quiescent.logStore, sqlite: quiescent.sqlite, ratio: quiescent.ratio, quiescent: true))
        }
        return lines
    }
}
