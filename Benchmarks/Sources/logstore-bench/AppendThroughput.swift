// Benchmark 1: appends with .deferredToOS against plain pwrite(2) of the same bytes.

import Foundation
@_spi(Benchmarks) import LogStore

/// Append throughput without fsync, in the caller's payload bytes, beside
/// `pwrite(2)` of the same payloads in the same-size chunks.
enum AppendThroughput: BenchmarkGroup {
    static let name = "append"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "1. Append throughput, durability .deferredToOS, against plain pwrite(2)")
        try measure("1 KiB", size: 1024, count: context.scaled(full: 131_072, quick: 16_384), target: .atLeast(0.7), context, into: &report)
        try measure("100 B", size: 100, count: context.scaled(full: 400_000, quick: 40_000), target: nil, context, into: &report)
        report.note("a transaction is one insert of one .data field holding a slice of text-like records (JSON lines of inventory items, cut at a random offset); the baseline pwrite(2)s the same slices, one call each, to a file in the same directory")
        report.note("both are timed from the first write to the last, without fsync; MB/s counts the caller's payload bytes only")
        return report
    }

    private static func measure(
        _ label: String, size: Int, count: Int, target: Target?, _ context: BenchmarkContext, into report: inout GroupReport
    ) throws {
        context.log("append: \(count) transactions of \(label), \(context.repetitions) rounds")
        let payloads = context.corpus.slices(count, of: size, seed: UInt64(size))
        let payloadBytes = Double(count * size)
        var written: (statistics: JournalStatistics, framesStart: UInt64)?
        let journalCase = { (compression: JournalOptions.Compression) in
            {
                let journal = try context.scratch.freshJournal("append.logstore", durability: .deferredToOS, compression: compression)
                defer {
                    journal.close()
                    context.scratch.remove(journal.path)
                }
                let records = DataRecords(journal)
                let seconds = try Stopwatch.seconds {
                    for (index, payload) in payloads.enumerated() { try records.append(key: UInt64(index + 1), payload) }
                }
                if compression == .lz4 { written = (journal.statistics, journal.header.framesStart) }
                return Sample(work: payloadBytes, seconds: seconds)
            } as () throws -> Sample
        }
        let rates = try measureInRounds(repetitions: context.repetitions, [
            journalCase(.lz4),
            journalCase(.none),
            {
                let file = try PlainFile(path: context.scratch.freshPath("append.plain"))
                defer { context.scratch.remove(file.path) }
                return try Sample.timing(work: payloadBytes) {
                    for payload in payloads { try payload.withUnsafeBytes { try file.append($0) } }
                }
            },
        ])
        let logStore = report.add("LogStore append, \(label)", rates[0], scale: 1e-6, unit: "MB/s")
        report.add("LogStore append, \(label), transactions", rates[0], scale: 1 / Double(size), unit: "transactions/s")
        let uncompressed = report.add("LogStore append, compression: .none, \(label)", rates[1], scale: 1e-6, unit: "MB/s")
        let plain = report.add("plain pwrite, \(label) chunks", rates[2], scale: 1e-6, unit: "MB/s")
        report.compare("LogStore ÷ plain pwrite, \(label)", logStore, over: plain, target: target)
        report.compare("LogStore, compression: .none ÷ plain pwrite, \(label)", uncompressed, over: plain, target: target)
        guard let written else { throw BenchmarkError("no journal run recorded its statistics") }
        let fileBytes = Double(written.statistics.bytesWritten + written.framesStart)
        report.add("journal file size ÷ payload, \(label)", value: fileBytes / payloadBytes, unit: "×")
        report.fact("journal, \(label)", "\(written.statistics.framesWritten) frames, \(written.statistics.rawPayloadBytes) raw payload bytes stored in \(written.statistics.bytesWritten) bytes (40-byte frame headers included), after \(written.framesStart) bytes of header and anchor pages")
    }
}
