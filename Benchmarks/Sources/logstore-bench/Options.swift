// The command line, parsed by hand: four flags do not need a parser dependency.

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

    static func usage(groups: [String]) -> String {
        """
        usage: logstore-bench [--quick] [--json] [--only NAME] [--directory DIR]

          --quick          a short run (what CI runs): smaller files, fewer repetitions
          --json           print one JSON document with every figure (progress goes to stderr)
          --only NAME      run one group: \(groups.joined(separator: ", "))
          --directory DIR  put the benchmark files in a new directory inside DIR
                           (default: a new directory under /tmp)
          --help           print this message
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
