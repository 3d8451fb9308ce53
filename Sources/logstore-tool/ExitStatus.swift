// The tool's exit codes: few, stable, one named constant each.

import ArgumentParser
import Foundation
import LogStore

/// Exit codes of every subcommand. Scripts depend on them: never renumber.
enum ExitStatus {
    /// Everything is fine.
    static let ok = ExitCode(0)
    /// The command ran and found a problem (verify found damage).
    static let problemFound = ExitCode(1)
    /// The command line is wrong: ArgumentParser's own code, `EX_USAGE` of sysexits(3).
    static let usage = ExitCode.validationFailure
    /// The file cannot be opened: missing, not a store, locked, unreadable header.
    static let cannotOpen = ExitCode(3)

    static let documentation = "0 ok, 1 problem found, 3 cannot open the file (missing, not a store, locked, damaged header), 64 usage error."

    /// Prints `error` to standard error and returns the exit code for it.
    static func report(_ error: LogStoreError) -> ExitCode {
        printError("logstore-tool: \(error.message)")
        return cannotOpen
    }
}

func printError(_ text: String) {
    var standardError = StandardError()
    print(text, to: &standardError)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
