// The tool's exit codes: few, stable, one named constant each.

import ArgumentParser
import Foundation
import LogStore

/// Exit codes of every subcommand. Scripts depend on them: never renumber.
enum ExitStatus {
    /// Everything is fine.
    static let ok = ExitCode(0)
    /// The command ran and found a problem: verify found damage, recover
    /// left something out, history has no such transaction.
    static let problemFound = ExitCode(1)
    /// The command line is wrong, a predicate does not parse, or names an
    /// entity or key the store lacks.
    static let usage = ExitCode(2)
    /// The file cannot be opened: missing, not a store, damaged header or
    /// snapshot, no recorded model; or, to change it, a file that a
    /// compaction or salvage replaced (read it, or recover it).
    static let cannotOpen = ExitCode(3)
    /// Another process has the store open for writing.
    static let locked = ExitCode(4)
    /// The operation failed part way (an I/O error, a full disk); the store
    /// is as it was.
    static let failed = ExitCode(5)

    static let documentation = """
        0 ok; 1 problem found (damage, data left out, nothing found); 2 usage error \
        (bad arguments, a predicate that does not parse, an unknown entity or key); \
        3 cannot open the file (missing, not a store, damaged; to change it, replaced by a compaction or salvage, or renamed while open); 4 locked by another \
        process; 5 the operation failed (I/O error, disk full) and changed nothing.
        """

    /// Prints `error` to standard error and returns the exit code for its kind.
    static func report(_ error: LogStoreError) -> ExitCode {
        printError("logstore-tool: \(error.message)")
        switch error.kind {
        case .storeLocked: return locked
        case .invalidPredicate, .unknownEntity, .unknownKey, .invalidArgument: return usage
        case .io where error.errno == ENOENT: return cannotOpen
        case .io, .writeFailed, .closed, .diskFull: return failed
        default: return cannotOpen
        }
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
