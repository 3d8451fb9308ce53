// Drives logstore-crash-child: start it on a store, read the sequence
// numbers it acknowledges, kill it with SIGKILL.

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A running `logstore-crash-child`, appending to a store (with fsync every
/// commit unless told otherwise) and printing each acknowledged sequence number.
final class CrashChild {
    let process = Process()
    private let output = Pipe()
    private var pending = Data()
    /// Sequence numbers the child printed, so far as read.
    private(set) var acknowledged: [UInt64] = []
    /// Other lines it printed ("stage renaming"), so far as read.
    private(set) var lines: [String] = []

    /// `durability`: `fsync`, `group` or `deferred`.
    convenience init(store path: String, seed: UInt64, durability: String = "fsync") throws {
        try self.init(arguments: [path, String(seed), durability])
    }

    init(arguments: [String]) throws {
        process.executableURL = try Executables.url(of: "logstore-crash-child")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Blocks until the child acknowledged at least one transaction; false if
    /// it exited first.
    func waitForFirstAcknowledgement() -> Bool {
        while acknowledged.isEmpty {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            take(chunk)
        }
        return true
    }

    /// Blocks until the child printed at least `count` numbers; false if it
    /// exited first.
    func waitForAcknowledgements(_ count: Int) -> Bool {
        while acknowledged.count < count {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            take(chunk)
        }
        return true
    }

    /// Blocks until the child printed a line `matches` accepts; false if it
    /// exited first.
    func waitForLine(where matches: (String) -> Bool) -> Bool {
        var seen = lines.count
        while true {
            if lines[seen...].contains(where: matches) { return true }
            seen = lines.count
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            take(chunk)
        }
    }

    /// Kills the child with SIGKILL, waits for it, and reads everything it
    /// printed (again: it does nothing twice). Only complete lines count: a number is acknowledged once its
    /// newline is out.
    func kill() {
        if process.isRunning { _ = Glibc.kill(pid, SIGKILL) }
        process.waitUntilExit()
        take(output.fileHandleForReading.readDataToEndOfFile())
    }

    private func take(_ chunk: Data) {
        pending.append(chunk)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
            if let number = UInt64(line) { acknowledged.append(number) } else { lines.append(line) }
            pending.removeSubrange(pending.startIndex...newline)
        }
    }
}
