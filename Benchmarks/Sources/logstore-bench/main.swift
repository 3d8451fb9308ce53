// logstore-bench: runs the benchmark groups and prints what they measured.
//
//   swift run -c release --package-path Benchmarks logstore-bench [--quick] [--json] [--only NAME]
//       [--sizes LIST] [--output DIR] [--directory DIR]
//
// The scaling runs (every workload at 10^4 to 10^7 records, LogStore beside
// SQLite and the machine's limits) write results.json, report.md and SVG
// charts to the output directory; the groups after them measure each issue's
// targets. A whole run starts each group in a fresh process of its own;
// `--only NAME` runs that one group in this process.
//
// Nothing here asserts a timing: the harness reports figures, ratios to
// baselines measured in the same run, and whether each target was met.

import Foundation

let groups: [any BenchmarkGroup.Type] = [
    AppendThroughput.self, CommitThroughput.self, Crc32cThroughput.self, Lz4Throughput.self,
    SmallTransactionCompression.self, Recovery.self, RecoveryScan.self, ObjectThroughput.self, FetchThroughput.self, SnapshotThroughput.self,
    ToolThroughput.self, RelationshipThroughput.self,
    AppWrites.self, AppStorage.self, AnchorWorkloads.self,
]
let groupNames = [ScalingMatrix.name] + groups.map { $0.name }

// A child process doing one measurement for its parent (Scaling/Probe.swift).
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "--probe" {
    Probe.main(Array(CommandLine.arguments.dropFirst(2)))
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("logstore-bench: \(message)\n".utf8))
    exit(status)
}

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()), groups: groupNames)
} catch {
    guard let message = error.message else {
        print(Options.usage(groups: groupNames))
        exit(0)
    }
    fail("\(message)\n\n\(Options.usage(groups: groupNames))", status: 2)
}

do {
    let scratch = try ScratchDirectory(inside: options.directory ?? "/tmp")
    defer { scratch.removeAll() }
    let context = BenchmarkContext(quick: options.quick, scratch: scratch, corpus: TextCorpus(size: 8 << 20))
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    var report = Report(
        mode: options.quick ? "quick" : "full",
        statistic: "each figure is the median of \(context.repetitions) rounds, the cases of a group run in interleaved rounds",
        machine: Machine.current(directory: scratch.path),
        run: RunInfo.current(packageDirectory: repository.path))
    let output = options.output ?? repository.appendingPathComponent(options.quick ? "Benchmarks/results-quick" : "Benchmarks/results").path
    if options.only == nil || options.only == ScalingMatrix.name {
        report.scaling = try ScalingMatrix.run(in: context, sizes: options.scalingSizes, minutesPerSize: options.minutesPerSize)
        // Written now as well, so a failure in a group loses none of it.
        try report.write(to: output)
    }
    var failedGroups: [String] = []
    for group in groups where options.only == nil || options.only == group.name {
        if options.only == nil {
            // A group that fails is reported and the run goes on, so an hour's run is not lost to one group.
            do {
                report.groups.append(try GroupProcess.run(group.name, options: options, scratch: scratch))
            } catch {
                context.log("FAILED: \(group.name): \(error)")
                failedGroups.append("\(group.name) (\(error))")
            }
            try report.write(to: output)
        } else {
            report.groups.append(try group.run(in: context))
        }
    }
    report.machine.noteEnd()
    try report.write(to: output)
    print(options.json ? try report.json() : report.text)
    context.log("results and charts written to \(output)")
    if let failed = report.scaling?.failed, !failed.isEmpty {
        fail("the scaling runs failed at \(failed.map { $0.size.formatted() }.joined(separator: ", ")) records (see above)", status: 1)
    }
    if !failedGroups.isEmpty {
        fail("groups failed: \(failedGroups.joined(separator: "; "))", status: 1)
    }
} catch {
    fail("\(error)", status: 1)
}
