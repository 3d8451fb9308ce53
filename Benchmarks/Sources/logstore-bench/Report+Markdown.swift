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
        lines += ["", "## Every target in this run", ""] + targets
        for group in groups {
            lines += ["", "## \(group.title) [\(group.name)]", ""]
            lines.append(Self.markdown(group))
        }
        return lines.joined(separator: "\n")
    }

    /// One row per figure or ratio that has a target, across the groups.
    private var targets: [String] {
        var lines = ["| group | measurement | value | widest range | target |", "|---|---|---:|---:|---|"]
        for group in groups {
            for figure in group.figures where figure.target != nil {
                lines.append("| \(group.name) | \(Self.cell(figure.name)) | \(formatted(figure.value)) \(figure.unit) | \(Self.range(figure.minimum, figure.maximum)) | \(Self.verdict(figure.target, figure.met)) |")
            }
            for comparison in group.comparisons where comparison.target != nil {
                lines.append("| \(group.name) | \(Self.cell(comparison.name)) | \(formatted(comparison.ratio)) | \(Self.range(comparison.low, comparison.high)) | \(Self.verdict(comparison.target, comparison.met)) |")
            }
        }
        return lines.count > 2 ? lines : ["No group of this run has a target."]
    }

    private static func range(_ low: Double?, _ high: Double?) -> String {
        guard let low, let high else { return "" }
        return "\(formatted(low)) – \(formatted(high))"
    }

    private static func markdown(_ group: GroupReport) -> String {
        var lines: [String] = []
        if !group.figures.isEmpty {
            lines += ["| measurement | median | range over the rounds | target |", "|---|---:|---:|---|"]
            for figure in group.figures {
                lines.append("| \(cell(figure.name)) | \(formatted(figure.value)) \(figure.unit) | \(range(figure.minimum, figure.maximum)) | \(verdict(figure.target, figure.met)) |")
            }
        }
        if !group.comparisons.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines += ["| ratio | median ÷ median | widest range | target |", "|---|---:|---:|---|"]
            for comparison in group.comparisons {
                lines.append("| \(cell(comparison.name)) | \(formatted(comparison.ratio)) | \(range(comparison.low, comparison.high)) | \(verdict(comparison.target, comparison.met)) |")
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
