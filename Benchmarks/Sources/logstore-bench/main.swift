// logstore-bench: runs the benchmark groups and prints what they measured.
//
//   swift run -c release --package-path Benchmarks logstore-bench [--quick] [--json] [--only NAME] [--directory DIR]
//
// Nothing here asserts a timing: the harness reports figures, ratios to
// baselines measured in the same run, and whether each target was met.

import Foundation

let groups: [any BenchmarkGroup.Type] = [
    AppendThroughput.self, CommitThroughput.self, Crc32cThroughput.self, Lz4Throughput.self,
    SmallTransactionCompression.self, Recovery.self, ObjectThroughput.self, FetchThroughput.self, SnapshotThroughput.self,
    ToolThroughput.self,
]
let groupNames = groups.map { $0.name }

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
    var report = Report(
        mode: options.quick ? "quick" : "full",
        statistic: "each figure is the median of \(context.repetitions) runs, the cases of a group run in interleaved rounds",
        machine: Machine.current(directory: scratch.path))
    for group in groups where options.only == nil || options.only == group.name {
        report.groups.append(try group.run(in: context))
    }
    print(options.json ? try report.json() : report.text)
} catch {
    fail("\(error)", status: 1)
}
