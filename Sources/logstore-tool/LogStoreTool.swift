// logstore-tool: inspect, query, compact and recover LogStore files without the app's code.

import ArgumentParser
import Foundation

@main
struct LogStoreTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logstore-tool",
        abstract: "Inspect, query, verify, compact and recover LogStore store files.",
        discussion: """
            Every command but demo, compact and recover opens the store read-only and never \
            changes it; they work while an app has the store open. Results go to standard \
            output; progress and errors to standard error. --json output is one document \
            {"formatVersion": 1, "result": …}, whose shapes README.md documents.

            Exit codes: \(ExitStatus.documentation)
            """,
        subcommands: [Demo.self, Info.self, Schema.self, Stats.self, Verify.self, Dump.self, Query.self, History.self, Compact.self, Recover.self]
    )

    /// ArgumentParser's own usage code is 64 (sysexits' EX_USAGE); this
    /// tool documents 2, like most Unix tools, so usage errors are mapped.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure else { exit(withError: error) }
            printError(fullMessage(for: error))
            Foundation.exit(ExitStatus.usage.rawValue)
        }
    }
}
