// The machine a run measured, as the report states it.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU, cores, kernel and the filesystem holding the benchmark files.
struct Machine: Encodable, Sendable {
    var cpu: String
    var cores: Int
    var kernel: String
    var directory: String
    var filesystem: String
    /// The 1, 5 and 15-minute load averages when the run started and when
    /// it ended: other work on the machine shows in them and in the spread
    /// of the rounds.
    var loadAverageAtStart: String
    var loadAverageAtEnd: String?

    /// Reads the description of this machine, for files in `directory`.
    static func current(directory: String) -> Machine {
        Machine(
            cpu: cpuModel() ?? "unknown",
            cores: ProcessInfo.processInfo.activeProcessorCount,
            kernel: kernelRelease(),
            directory: directory,
            filesystem: filesystemType(of: directory) ?? "unknown",
            loadAverageAtStart: loadAverages() ?? "unknown")
    }

    var summary: String {
        "\(cpu), \(cores) cores, Linux \(kernel); files in \(directory) (\(filesystem)); load average at start \(loadAverageAtStart)"
            + (loadAverageAtEnd.map { ", at end \($0)" } ?? "")
    }

    /// Records the load averages now, as the run ends.
    mutating func noteEnd() { loadAverageAtEnd = Self.loadAverages() ?? "unknown" }

    private static func cpuModel() -> String? {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
    }

    private static func loadAverages() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func kernelRelease() -> String {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// The type of the mount with the longest mount point that contains
    /// `path`, from /proc/mounts (what `df -T` prints).
    private static func filesystemType(of path: String) -> String? {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return nil }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (point: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1]), type = String(fields[2])
            let contains = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if contains, point.count >= (best?.point.count ?? 0) { best = (point, type) }
        }
        return best?.type
    }
}
