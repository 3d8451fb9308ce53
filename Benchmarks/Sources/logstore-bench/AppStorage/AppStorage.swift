// The app-storage group: workloads an app database is judged on, each beside
// SQLite through GRDB (WAL), with the same data, indexes and durability, and
// both engines' answers compared by content.

import Foundation

/// Reopening after a long history, space reclaimed after deleting half the
/// records, and authors with their books inserted and traversed against a JOIN.
enum AppStorage: BenchmarkGroup {
    static let name = "app-storage"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "App storage: reopen after a long history, space reclaimed after deleting half, one-to-many inserts and a JOIN traversal, against GRDB 7.10.0 on SQLite (WAL)")
        try ReopenAfterHistory.measure(context, into: &report)
        try SpaceReclaimed.measure(context, into: &report)
        try AuthorsWithBooks.measure(context, into: &report)
        return report
    }
}

/// Timings of several cases in interleaved rounds, kept as seconds (a
/// figure in milliseconds is `scale: 1e3`), for workloads done once per
/// sample: an open, a compaction.
func secondsInRounds(repetitions: Int, _ cases: [() throws -> Double]) throws -> [Rates] {
    var samples = Array(repeating: [Double](), count: cases.count)
    for _ in 0..<repetitions {
        for (index, run) in cases.enumerated() { samples[index].append(try run()) }
    }
    return samples.map(Rates.init(samples:))
}

/// The size in bytes of each file at `paths` that exists, summed.
func bytesOnDisk(_ paths: [String]) -> Int {
    paths.reduce(0) { total, file in total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0) }
}
