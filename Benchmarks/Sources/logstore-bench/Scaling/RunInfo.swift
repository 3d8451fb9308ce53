// Where a run's numbers came from: the toolchain and the commit.

import Foundation

/// The toolchain and source revision a run was built from, for its JSON.
struct RunInfo: Encodable, Sendable {
    var toolchain: String
    var commit: String
    var date: String

    /// Asks `swift --version` and `git` in the package's directory; each
    /// says "unknown" when the command is not there.
    static func current(packageDirectory: String) -> RunInfo {
        let toolchain = run("/usr/bin/env", ["swift", "--version"], in: packageDirectory)?
            .split(separator: "\n").first.map(String.init) ?? "unknown"
        var commit = run("/usr/bin/env", ["git", "rev-parse", "HEAD"], in: packageDirectory)?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
        if let status = run("/usr/bin/env", ["git", "status", "--porcelain", "--untracked-files=no"], in: packageDirectory),
           !status.isEmpty {
            commit += " (with uncommitted changes)"
        }
        return RunInfo(toolchain: toolchain, commit: commit, date: ISO8601DateFormatter().string(from: Date()))
    }

    private static func run(_ executable: String, _ arguments: [String], in directory: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
