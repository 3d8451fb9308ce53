// Benchmark 5: opening a large journal, which reads, checksums, decompresses
// and decodes every frame.

import Foundation
@_spi(Benchmarks) import LogStore

/// Open time of a journal of mixed-size transactions, read-only and
/// read-write, with a warm page cache and (as root) a cold one, beside a
/// plain sequential read of the same file.
enum Recovery: BenchmarkGroup {
    static let name = "recovery"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "5. Recovery: opening a journal with strict recovery (every frame checked and decoded)")
        let targetSize = context.scaled(full: 1 << 30, quick: 64 << 20)
        let path = context.scratch.freshPath("recovery.logstore")
        defer { context.scratch.remove(path) }
        context.log("recovery: writing a \(targetSize >> 20) MiB journal")
        let (written, buildRate) = try build(path, size: UInt64(targetSize), context)
        try synchronizeFile(at: path)
        let fileSize = Double(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0)

        func openCase(_ access: JournalOptions.Access, cold: Bool) -> () throws -> Sample {
            {
                if cold { _ = PageCache.drop() }
                var journal: Journal?
                let seconds = try Stopwatch.seconds { journal = try Journal(path: path, options: JournalOptions(access: access)) }
                defer { journal?.close() }
                guard let recovery = journal?.recovery, recovery.outcome == .clean, recovery.frameCount == written.framesWritten else {
                    throw BenchmarkError("opening \(path) did not find the \(written.framesWritten) frames it was written with")
                }
                return Sample(work: fileSize, seconds: seconds)
            }
        }
        func readCase(cold: Bool) -> () throws -> Sample {
            {
                if cold { _ = PageCache.drop() }
                var bytes = 0
                let seconds = try Stopwatch.seconds { bytes = try readSequentially(path) }
                return Sample(work: Double(bytes), seconds: seconds)
            }
        }

        let canDrop = PageCache.drop()
        for cold in canDrop ? [false, true] : [false] {
            let cache = cold ? "cold page cache" : "warm page cache"
            context.log("recovery: opening it, \(cache), \(context.repetitions) rounds")
            let rates = try measureInRounds(repetitions: context.repetitions, [openCase(.readOnly, cold: cold), openCase(.readWrite, cold: cold), readCase(cold: cold)])
            let readOnly = report.add("open read-only, \(cache)", rates[0], scale: 1e-6, unit: "MB/s", target: .atLeast(500))
            let readWrite = report.add("open read-write, \(cache)", rates[1], scale: 1e-6, unit: "MB/s", target: .atLeast(500))
            let plain = report.add("plain sequential read, 4 MiB preads, \(cache)", rates[2], scale: 1e-6, unit: "MB/s")
            report.compare("open read-only ÷ plain read, \(cache)", readOnly, over: plain)
            report.compare("open read-write ÷ plain read, \(cache)", readWrite, over: plain)
        }
        if !canDrop {
            report.note("cold page cache not measured: /proc/sys/vm/drop_caches is not writable (it needs root)")
        }
        report.add("writing it: append with .deferredToOS, 1 to 16 KiB payloads", value: buildRate * 1e-6, unit: "MB/s")
        report.fact("file", "\(Int(fileSize)) bytes, \(written.framesWritten) frames, \(written.rawPayloadBytes) raw payload bytes (LZ4 stores them in \(String(format: "%.0f", 100 * (fileSize - Double(StoredFrame.headerSize * written.framesWritten)) / Double(written.rawPayloadBytes)))%)")
        report.note("MB/s is the file size divided by the time Journal(path:options:) takes with default (strict) recovery; the file was written with .deferredToOS, closed and fsynced first")
        report.note("warm: the file is in the page cache (just written, or just read); cold: sync and echo 3 > /proc/sys/vm/drop_caches before each timed open or read")
        report.note("transactions are one insert of one .data field of 1 to 16 KiB (uniformly random) of text-like records")
        return report
    }

    /// Writes a journal of at least `size` bytes at `path` and returns what
    /// was written and the append rate in payload bytes per second.
    private static func build(_ path: String, size: UInt64, _ context: BenchmarkContext) throws -> (JournalStatistics, Double) {
        let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
        defer { journal.close() }
        let records = DataRecords(journal)
        var random = SeededRandom(seed: 5)
        var payloadBytes = 0
        var key: UInt64 = 0
        let seconds = try Stopwatch.seconds {
            while journal.statistics.bytesWritten + journal.header.framesStart < size {
                let payload = context.corpus.slice(Int.random(in: 1024...16_384, using: &random), using: &random)
                key += 1
                try records.append(key: key, payload)
                payloadBytes += payload.count
            }
        }
        return (journal.statistics, Double(payloadBytes) / seconds)
    }
}
