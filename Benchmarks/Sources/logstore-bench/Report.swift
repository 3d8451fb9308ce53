// What a run found: figures, ratios against their targets, facts and notes,
// printed as text or as one JSON document.

import Foundation

/// A goal a figure or ratio is held against. Nothing fails when it is
/// missed: the report says "NOT MET" and the run goes on.
enum Target: Sendable {
    /// How every verdict of the harness is reached, stated once: the report
    /// and BENCHMARKS.md quote it.
    static let rule = "a target is met when the median of the rounds of one full run meets it; each group runs in a fresh process, its cases in interleaved rounds, and the figure's range across the rounds is reported beside it, so a verdict the range straddles is visible as such"

    case atLeast(Double)
    case atMost(Double)

    func isMet(by value: Double) -> Bool {
        switch self {
        case .atLeast(let minimum): value >= minimum
        case .atMost(let maximum): value <= maximum
        }
    }

    var description: String {
        switch self {
        case .atLeast(let minimum): "≥ " + String(format: "%g", minimum)
        case .atMost(let maximum): "≤ " + String(format: "%g", maximum)
        }
    }
}

/// One measured quantity: the median over the repetitions, with their range.
struct Figure: Codable, Sendable {
    var name: String
    var value: Double
    var unit: String
    var minimum: Double?
    var maximum: Double?
    var target: String?
    var met: Bool?
}

/// A ratio of two figures of the same run.
struct Comparison: Codable, Sendable {
    var name: String
    var ratio: Double
    var numerator: String
    var denominator: String
    /// The ratio's widest range over the rounds: the lowest numerator over
    /// the highest denominator, and the other way round.
    var low: Double?
    var high: Double?
    var target: String?
    var met: Bool?
}

/// A named fact that is not a number: a setting, a capability.
struct Fact: Codable, Sendable {
    var name: String
    var value: String
}

/// The results of one benchmark group.
struct GroupReport: Codable, Sendable {
    let name: String
    let title: String
    var figures: [Figure] = []
    var comparisons: [Comparison] = []
    var facts: [Fact] = []
    var notes: [String] = []

    init(name: String, title: String) {
        self.name = name
        self.title = title
    }

    /// Adds the median of `rates` times `scale`, with its range.
    @discardableResult
    mutating func add(_ name: String, _ rates: Rates, scale: Double = 1, unit: String, target: Target? = nil) -> Figure {
        add(Figure(name: name, value: rates.median * scale, unit: unit,
                   minimum: rates.minimum * scale, maximum: rates.maximum * scale), target: target)
    }

    /// Adds a single value (a size, a count) that was not repeated.
    @discardableResult
    mutating func add(_ name: String, value: Double, unit: String, target: Target? = nil) -> Figure {
        add(Figure(name: name, value: value, unit: unit), target: target)
    }

    private mutating func add(_ figure: Figure, target: Target?) -> Figure {
        var figure = figure
        figure.target = target?.description
        figure.met = target?.isMet(by: figure.value)
        figures.append(figure)
        return figure
    }

    /// Adds `numerator ÷ denominator`, held against `target` when there is one.
    mutating func compare(_ name: String, _ numerator: Figure, over denominator: Figure, target: Target? = nil) {
        let ratio = numerator.value / denominator.value
        var low: Double?, high: Double?
        if let numeratorLow = numerator.minimum, let numeratorHigh = numerator.maximum,
           let denominatorLow = denominator.minimum, let denominatorHigh = denominator.maximum {
            low = numeratorLow / denominatorHigh
            high = numeratorHigh / denominatorLow
        }
        comparisons.append(Comparison(
            name: name, ratio: ratio, numerator: numerator.name, denominator: denominator.name,
            low: low, high: high, target: target?.description, met: target?.isMet(by: ratio)))
    }

    mutating func fact(_ name: String, _ value: String) { facts.append(Fact(name: name, value: value)) }
    mutating func note(_ text: String) { notes.append(text) }
}

/// The whole run.
struct Report: Encodable, Sendable {
    var mode: String
    var statistic: String
    var units = "MB = 10^6 bytes, GB = 10^9 bytes; KiB, MiB, GiB = 2^10, 2^20, 2^30 bytes"
    var machine: Machine
    var run: RunInfo
    var scaling: ScalingReport?
    var groups: [GroupReport] = []

    /// Writes results.json, every table as Markdown (report.md, which
    /// BENCHMARKS.md quotes), the charts of the scaling runs (throughput.svg,
    /// latency.svg, memory.svg) and their table alone (table.md) into
    /// `directory`, creating it.
    func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var files = ["results.json": try json() + "\n", "report.md": markdown + "\n"]
        if let scaling, !scaling.rows.isEmpty {
            files["throughput.svg"] = scaling.throughputChart.svg
            files["latency.svg"] = scaling.latencyChart.svg
            files["memory.svg"] = scaling.memoryChart.svg
            files["table.md"] = scaling.markdown + "\n"
        }
        for (name, text) in files {
            try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
    }

    /// How results.json spells a ratio that is not finite, both ways.
    static let nonConformingFloats = (
        encoding: JSONEncoder.NonConformingFloatEncodingStrategy.convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan"),
        decoding: JSONDecoder.NonConformingFloatDecodingStrategy.convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan"))

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = Self.nonConformingFloats.encoding
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    var text: String {
        var lines = [
            "logstore-bench, \(mode) run: \(statistic)",
            "machine: \(machine.summary)",
            "built by: \(run.toolchain), commit \(run.commit)",
            "units: \(units)",
        ]
        if let scaling {
            lines.append("")
            lines.append(scaling.text)
        }
        for group in groups {
            lines.append("")
            lines.append("== \(group.title) [\(group.name)]")
            let rows = group.figures.map(Self.row) + group.comparisons.map(Self.row)
            let width = rows.map(\.label.count).max() ?? 0
            for row in rows {
                lines.append("  " + row.label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + row.text)
            }
            lines += group.facts.map { "  \($0.name): \($0.value)" }
            lines += group.notes.map { "  note: \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ figure: Figure) -> (label: String, text: String) {
        var text = "\(formatted(figure.value)) \(figure.unit)"
        if let minimum = figure.minimum, let maximum = figure.maximum {
            text += "  (runs \(formatted(minimum)) to \(formatted(maximum)))"
        }
        return (figure.name, text + verdict(figure.target, figure.met))
    }

    private static func row(_ comparison: Comparison) -> (label: String, text: String) {
        var text = formatted(comparison.ratio)
        if let low = comparison.low, let high = comparison.high {
            text += "  (widest range \(formatted(low)) to \(formatted(high)))"
        }
        return ("ratio: " + comparison.name, text + verdict(comparison.target, comparison.met))
    }

    private static func verdict(_ target: String?, _ met: Bool?) -> String {
        guard let target, let met else { return "" }
        return "  target \(target): \(met ? "met" : "NOT MET")"
    }
}

/// A number with three significant digits, or none after the point when it
/// is large: 0.812, 12.3, 4521.
func formatted(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    let magnitude = abs(value)
    let decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3
    return String(format: "%.\(decimals)f", value)
}
