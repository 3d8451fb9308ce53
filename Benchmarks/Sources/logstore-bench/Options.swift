// The command line, parsed by hand: a few flags do not need a parser dependency.

import Foundation

/// What the command line asked for.
struct Options: Sendable {
    /// A short run for CI: smaller files, fewer and shorter repetitions.
    var quick = false
    /// Print one JSON document instead of the text report.
    var json = false
    /// The one group to run, by name; nil runs them all.
    var only: String?
    /// Where benchmark files go; nil means a new directory under /tmp.
    var directory: String?
    /// The store sizes of the scaling runs; nil for the mode's default.
    var sizes: [Int]?
    /// Where the JSON results and the SVG charts are written; nil for
    /// Benchmarks/results (Benchmarks/results-quick in a quick run).
    var output: String?
    /// The scaling runs skip a size whose estimated time is over this.
    var minutesPerSize = 45.0

    /// The scaling sizes this run uses.
    var scalingSizes: [Int] { sizes ?? (quick ? [10_000] : [10_000, 100_000, 1_000_000, 10_000_000]) }

    static func usage(groups: [String]) -> String {
        """
        usage: logstore-bench [--quick] [--json] [--only NAME] [--sizes LIST] [--output DIR] [--directory DIR]

          --quick             a short run (what CI runs): smaller files, fewer repetitions,
                              scaling at 10^4 records only
          --json              print one JSON document with every figure (progress goes to stderr)
          --only NAME         run one group: \(groups.joined(separator: ", "))
          --sizes LIST        the scaling runs' sizes, as powers of ten or counts:
                              4,5,6,7 (the default) or 10000,50000
          --minutes-per-size M  skip a scaling size estimated to take longer (default 45)
          --output DIR        write results.json and the SVG charts there
                              (default: Benchmarks/results, or Benchmarks/results-quick)
          --directory DIR     put the benchmark files in a new directory inside DIR
                              (default: a new directory under /tmp)
          --help              print this message
        """
    }

    /// Parses `arguments` (without the program name). `groups` are the
    /// names `--only` accepts.
    static func parse(_ arguments: [String], groups: [String]) throws(UsageError) -> Options {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": options.quick = true
            case "--json": options.json = true
            case "--help", "-h": throw UsageError(nil)
            case "--only":
                guard let name = rest.popFirst() else { throw UsageError("--only needs a group name") }
                guard groups.contains(name) else { throw UsageError("unknown group \"\(name)\"") }
                options.only = name
            case "--directory":
                guard let directory = rest.popFirst(), !directory.isEmpty else { throw UsageError("--directory needs a path") }
                options.directory = directory
            case "--sizes":
                guard let list = rest.popFirst() else { throw UsageError("--sizes needs a list such as 4,5,6") }
                options.sizes = try list.split(separator: ",").map { item throws(UsageError) in
                    guard let number = Int(item), number > 0 else { throw UsageError("--sizes: \"\(item)\" is not a size") }
                    // 1 to 9 are powers of ten; anything larger is a count.
                    return number < 10 ? Int(pow(10, Double(number))) : number
                }
            case "--minutes-per-size":
                guard let minutes = rest.popFirst().flatMap(Double.init), minutes > 0 else { throw UsageError("--minutes-per-size needs a number of minutes") }
                options.minutesPerSize = minutes
            case "--output":
                guard let directory = rest.popFirst(), !directory.isEmpty else { throw UsageError("--output needs a directory") }
                options.output = directory
            default:
                throw UsageError("unknown argument \"\(argument)\"")
            }
        }
        return options
    }
}

/// A command line the harness does not understand; `message` is nil when
/// the user asked for help.
struct UsageError: Error {
    var message: String?
    init(_ message: String?) { self.message = message }
}
