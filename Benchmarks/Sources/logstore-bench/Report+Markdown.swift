// The whole run as Markdown (report.md): what BENCHMARKS.md quotes, written
// by the run itself so that every table there traces to its results.json.

import Foundation

extension Report {
    /// Every figure, ratio, fact and note of the run, with the commit, the
    /// machine, the load at start and end, and the rule for "met".
    var markdown: String {
        var lines = [
            "Written by `logstore-bench` (\(mode) run) with its `results.json`.",
            "",
            "- commit: `\(run.commit)`, built by \(run.toolchain)",
            "- started: \(run.date)",
            "- machine: \(machine.cpu), \(machine.cores) cores, Linux \(machine.kernel), files on \(machine.filesystem)",
            "- load average (1, 5, 15 min) at start: \(machine.loadAverageAtStart); at end: \(machine.loadAverageAtEnd ?? "not recorded")",
            "- statistic: \(statistic)",
            "- rule for \"met\": \(Target.rule)",
            "- units: \(units)",
        ]
        if let scaling {
            lines += ["", "## Scaling: LogStore and SQLite at \(scaling.sizes.map { $0.formatted() }.joined(separator: ", ")) records [scaling]", ""]
            for skip in scaling.skipped { lines.append("Skipped \(skip.size.formatted()) records: \(skip.reason)\n") }
            for failure in scaling.failed { lines.append("**Failed** at \(failure.size.formatted()) records: \(failure.reason)\n") }
            lines.append(scaling.markdown)
            if !scaling.notes.isEmpty { lines += [""] + scaling.notes.map { "- \($0)" } }
        }
        for group in groups {
            lines += ["", "## \(group.title) [\(group.name)]", ""]
            lines.append(Self.markdown(group))
        }
        return lines.joined(separator: "\n")
    }

    private static func markdown(_ group: GroupReport) -> String {
        var lines: [String] = []
        if !group.figures.isEmpty {
            lines += ["| measurement | median | range over the rounds | target |", "|---|---:|---:|---|"]
            for figure in group.figures {
                let range = figure.minimum.flatMap { low in figure.maximum.map { "\(formatted(low)) – \(formatted($0))" } } ?? ""
                lines.append("| \(cell(figure.name)) | \(formatted(figure.value)) \(figure.unit) | \(range) | \(verdict(figure.target, figure.met)) |")
            }
        }
        if !group.comparisons.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines += ["| ratio | median ÷ median | widest range | target |", "|---|---:|---:|---|"]
            for comparison in group.comparisons {
                let range = comparison.low.flatMap { low in comparison.high.map { "\(formatted(low)) – \(formatted($0))" } } ?? ""
                lines.append("| \(cell(comparison.name)) | \(formatted(comparison.ratio)) | \(range) | \(verdict(comparison.target, comparison.met)) |")
            }
        }
        if !group.facts.isEmpty || !group.notes.isEmpty { lines.append("") }
        lines += group.facts.map { "- \($0.name): \($0.value)" }
        lines += group.notes.map { "- \($0)" }
        return lines.joined(separator: "\n")
    }

    /// "≥ 3: met", "≤ 0.5: **not met**", or nothing without a target.
    private static func verdict(_ target: String?, _ met: Bool?) -> String {
        guard let target, let met else { return "" }
        return "\(target): " + (met ? "met" : "**not met**")
    }

    /// Text that cannot break a table row.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
