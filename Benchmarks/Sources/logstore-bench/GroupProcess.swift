// Each group of a whole run in a fresh process: one group's heap, caches and
// background threads cannot slow or speed the next, and a crash loses one group.

import Foundation

enum GroupProcess {
    /// Runs this executable again with `--only name`, the same mode and
    /// scratch location, writing into a temporary output directory, and
    /// returns the group's report from the results.json it wrote. Progress
    /// goes to this process's stderr; the child's printed report is dropped,
    /// since the parent prints the whole run.
    static func run(_ name: String, options: Options, scratch: ScratchDirectory) throws -> GroupReport {
        let output = scratch.freshPath("group-\(name)")
        defer { try? FileManager.default.removeItem(atPath: output) }
        var arguments = ["--only", name, "--output", output, "--directory", scratch.path]
        if options.quick { arguments.append("--quick") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw BenchmarkError("the \(name) group's process ended with \(process.terminationReason == .exit ? "status" : "signal") \(process.terminationStatus)")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: output + "/results.json"))
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = Report.nonConformingFloats.decoding
        let groups = try decoder.decode(GroupsOnly.self, from: data).groups
        guard let report = groups.first(where: { $0.name == name }) else {
            throw BenchmarkError("the \(name) group's process wrote no report for it")
        }
        return report
    }

    /// The part of a results.json the parent reads back.
    private struct GroupsOnly: Decodable {
        var groups: [GroupReport]
    }
}
