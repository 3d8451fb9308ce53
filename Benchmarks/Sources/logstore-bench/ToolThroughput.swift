// Benchmark 9: logstore-tool as people and scripts run it. dump of
// 1,000,000 records as JSON Lines against `sqlite3 -json` dumping the same
// rows, and verify's throughput on a store of about 1 GiB beside a plain
// sequential read of the same file.

import Foundation
import LogStore

enum ToolThroughput: BenchmarkGroup {
    static let name = "tool"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "9. logstore-tool: dump against sqlite3 -json, verify throughput")
        let tool = try buildTool(context)
        let sqlite3 = which("sqlite3")

        // 1. dump, JSON Lines, to /dev/null, from a compacted store (as the
        //    default policy leaves one), against sqlite3 -json.
        let count = context.scaled(full: 1_000_000, quick: 50_000)
        context.log("tool: \(count.formatted()) people in both engines")
        let people = PersonValues.make(count, seed: 9)
        let data = try PeopleDataSet(people, model: try PersonModel.make(), named: "tool", context)
        defer { data.remove(context) }
        do {
            let store = try Store(path: data.storePath, model: try PersonModel.make(), options: JournalOptions(compaction: .manual))
            defer { store.close() }
            _ = try store.compact()
        }
        let dump = [tool.path, "dump", data.storePath, "--entity", "Person"]
        let printed = context.scratch.freshPath("tool-output.txt")
        defer { context.scratch.remove(printed) }
        // Each timed run prints into a file; after the clock stops, every
        // person's ID and values in it are compared with the ones written.
        func checkedRun(_ arguments: [String], by command: String) -> () throws -> Sample {
            {
                let sample = try Sample.timing(work: Double(count)) { try run(arguments, printingTo: printed) }
                try DumpedPeople.check(try Data(contentsOf: URL(fileURLWithPath: printed)), people, by: command)
                return sample
            }
        }
        if let sqlite3 {
            let select = [sqlite3, "-json", data.sqlitePath, "SELECT * FROM person"]
            context.log("tool: dump and sqlite3 -json, \(context.repetitions) rounds")
            let rates = try measureInRounds(repetitions: context.repetitions, [
                checkedRun(dump, by: "logstore-tool dump"), checkedRun(select, by: "sqlite3 -json"),
            ])
            let logstore = report.add("logstore-tool dump --format jsonl > file", rates[0], unit: "records/s")
            let sqlite = report.add("sqlite3 -json 'SELECT * FROM person' > file", rates[1], unit: "records/s")
            report.compare("dump ÷ sqlite3 -json", logstore, over: sqlite)
        } else {
            let rates = try measureInRounds(repetitions: context.repetitions, [checkedRun(dump, by: "logstore-tool dump")])
            report.add("logstore-tool dump --format jsonl > file", rates[0], unit: "records/s")
            report.note("sqlite3 (the SQLite shell) is not installed, so dump is not compared with sqlite3 -json: apt-get install sqlite3")
        }

        // 2. verify on a store of about 1 GiB (64 MiB in a quick run).
        let target = context.scaled(full: 1 << 30, quick: 64 << 20)
        let path = context.scratch.freshPath("tool-verify.logstore")
        defer { context.scratch.remove(path) }
        context.log("tool: writing a store of \(target >> 20) MiB to verify")
        try writeBlobs(path, totalBytes: target)
        let size = Double(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0)
        let verify = [tool.path, "verify", path]
        try run(verify)  // also warms the page cache for both cases
        let verifyRates = try measureInRounds(repetitions: context.repetitions, [
            { try Sample.timing(work: size / 1e6) { try run(verify) } },
            { try Sample.timing(work: size / 1e6) { try run(["/bin/cat", path]) } },
        ])
        let verified = report.add("verify, \(String(format: "%.0f", size / 1_048_576)) MiB store", verifyRates[0], unit: "MB/s")
        let read = report.add("cat of the same file > /dev/null (read limit)", verifyRates[1], unit: "MB/s")
        report.compare("verify ÷ sequential read", verified, over: read)
        report.fact("verify store", "\(Int(size)) bytes: blobs of 4 KiB, half of each random, saved 1,000 per transaction under the default compaction policy")
        report.note("every timed run of dump and of sqlite3 -json prints into a file, read back after the clock stops and every person's ID and values compared with the ones written (dates to the millisecond dump prints, within 2 ms for the rounding of printing and parsing, doubles to the 15 digits sqlite3 prints)")
        report.note("dump reads a compacted store (a snapshot and no journal), as the default policy leaves one; both commands print into a file in the page cache, with a warm page cache for their input")
        report.note("verify checks every frame's checksum and decodes every block and transaction, then opens the store and checks relationships and indexes against the records")
        return report
    }

    /// Builds the release tool of the package this harness sits in.
    private static func buildTool(_ context: BenchmarkContext) throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        context.log("tool: building logstore-tool (release) in \(root.path)")
        try run(["/usr/bin/env", "swift", "build", "-c", "release", "--product", "logstore-tool", "--package-path", root.path], quiet: true)
        let tool = root.appendingPathComponent(".build/release/logstore-tool")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else { throw BenchmarkError("\(tool.path) was not built") }
        return tool
    }

    private static func which(_ program: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Runs `arguments` with its output thrown away, or written into a new
    /// file at `printingTo`; throws unless it exits 0.
    private static func run(_ arguments: [String], quiet: Bool = false, printingTo path: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
                throw BenchmarkError("could not create \(path) for the output of \(arguments[0])")
            }
            process.standardOutput = file
        } else {
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        }
        if quiet { process.standardError = FileHandle(forWritingAtPath: "/dev/null") }
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("\(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }

    /// A store of about `totalBytes` of 4 KiB blobs, half random (so half
    /// compresses away), saved 1,000 per transaction.
    private static func writeBlobs(_ path: String, totalBytes: Int) throws {
        let model = try Model {
            Entity("Blob") {
                Attribute("name", .string)
                Attribute("body", .data)
            }
        }
        let store = try Store(path: path, model: model, options: JournalOptions(durability: .deferredToOS))
        defer { store.close() }
        var random = SeededRandom(seed: 99)
        let context = store.newContext()
        var written = 0, number = 0
        while written < totalBytes {
            for _ in 0..<1_000 {
                var body = [UInt8](repeating: UInt8(number % 251), count: 4096)
                for index in stride(from: 0, to: 2048, by: 8) {
                    withUnsafeBytes(of: random.next()) { body.replaceSubrange(index..<(index + 8), with: $0) }
                }
                let blob = try context.insert("Blob")
                blob["name"] = "blob \(number)"
                blob["body"] = Data(body)
                number += 1
            }
            try context.save()
            context.reset()
            // About half of each body compresses away.
            written += 1_000 * 2_100
        }
    }
}

/// People as `logstore-tool dump` (JSON Lines) or `sqlite3 -json` (a JSON
/// array, a row per line) print them, checked against the people written.
private enum DumpedPeople {
    static func check(_ output: Data, _ people: [PersonValues], by command: String) throws {
        var seen = [Bool](repeating: false, count: people.count)
        let dateParser = ISO8601DateFormatter()
        dateParser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in output.split(separator: UInt8(ascii: "\n")) {
            var line = line[...]
            while let first = line.first, first == UInt8(ascii: "[") || first == UInt8(ascii: ",") { line = line.dropFirst() }
            while let last = line.last, last == UInt8(ascii: "]") || last == UInt8(ascii: ",") || last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty { continue }
            guard let row = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { throw BenchmarkError("\(command) printed a line that is not an object") }
            // dump prints an ID's URI, ending /pKEY; sqlite3 the integer id.
            let key = (row["id"] as? String).flatMap { $0.split(separator: "p").last.flatMap { Int($0) } } ?? (row["id"] as? Int) ?? 0
            guard people.indices.contains(key - 1), !seen[key - 1] else { throw BenchmarkError("\(command) printed person \(key) twice or out of range") }
            seen[key - 1] = true
            let written = people[key - 1]
            let date: Date? = (row["dateCreated"] as? String).flatMap { dateParser.date(from: $0) }
                ?? (row["dateCreated"] as? Double).map { Date(timeIntervalSinceReferenceDate: $0) }
            guard row["firstName"] as? String == written.firstName, row["lastName"] as? String == written.lastName,
                  (row["age"] as? Int).map(Int64.init) == written.age,
                  let ordering = row["orderingValue"] as? Double, abs(ordering - written.orderingValue) < 1e-6,
                  let date, abs(date.timeIntervalSince(written.dateCreated)) < 2e-3
            else { throw BenchmarkError("\(command) printed person \(key) as \(String(decoding: line, as: UTF8.self)), not the values written (\(written))") }
        }
        let missing = seen.count { !$0 }
        guard missing == 0 else { throw BenchmarkError("\(command) left out \(missing) of \(people.count) people") }
    }
}
