// logstore-tool: inspect and verify LogStore files without the app's code.

import ArgumentParser

@main
struct LogStoreTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logstore-tool",
        abstract: "Inspect, verify and demonstrate LogStore store files.",
        discussion: """
            Results go to standard output; progress and warnings to standard error.
            Exit codes: \(ExitStatus.documentation)
            """,
        subcommands: [Info.self, Verify.self, Demo.self]
    )
}
