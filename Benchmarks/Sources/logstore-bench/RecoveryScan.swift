// Benchmark 5b: opening a file damaged so as to make the scan after the
// damage as costly as it can be, beside a clean file of the same size.

import Foundation
@_spi(Benchmarks) import LogStore

/// Read-only open of a store whose frames are followed by a region with a
/// frame magic every 16 bytes (or a whole frame header every 48), each
/// declaring a frame that runs to the end of the file and fails its
/// checksum; and of a clean journal of the same size. The scan after damage
/// is one linear pass (FORMAT.md §6), so its rate stays within a small
/// factor of a clean open's whatever the file holds.
enum RecoveryScan: BenchmarkGroup {
    static let name = "recovery-scan"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "5b. Recovery scan: opening a file with a candidate frame every few bytes after damage")
        let size = context.scaled(full: 16 << 20, quick: 4 << 20)
        let clean = context.scratch.freshPath("recovery-scan-clean.logstore")
        let hostile = [16, 48].map { context.scratch.freshPath("recovery-scan-\($0).logstore") }
        defer { for path in [clean] + hostile { context.scratch.remove(path) } }
        context.log("recovery-scan: writing a clean journal and two damaged files of \(size >> 20) MiB")
        try writeJournal(at: clean, size: size, context)
        for (path, period) in zip(hostile, [16, 48]) { try writeHostile(at: path, size: size, period: period, context) }

        func openCase(_ path: String, expecting outcome: RecoveryReport.Outcome) -> () throws -> Sample {
            {
                let bytes = Double(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber ?? 0)
                var journal: Journal?
                let seconds = try Stopwatch.seconds { journal = try Journal(path: path, options: JournalOptions(access: .readOnly)) }
                defer { journal?.close() }
                guard journal?.recovery.outcome == outcome else {
                    throw BenchmarkError("opening \(path) ended \(String(describing: journal?.recovery)), not \(outcome)")
                }
                return Sample(work: bytes, seconds: seconds)
            }
        }
        context.log("recovery-scan: opening each read-only, \(context.repetitions) rounds")
        let rates = try measureInRounds(repetitions: context.repetitions, [
            openCase(clean, expecting: .clean), openCase(hostile[0], expecting: .tornTail), openCase(hostile[1], expecting: .tornTail),
        ])
        let cleanRate = report.add("open read-only, clean journal", rates[0], scale: 1e-6, unit: "MB/s")
        let every16 = report.add("open read-only, a frame magic every 16 bytes after damage", rates[1], scale: 1e-6, unit: "MB/s")
        let every48 = report.add("open read-only, a whole frame header every 48 bytes after damage", rates[2], scale: 1e-6, unit: "MB/s")
        report.compare("magic every 16 bytes ÷ clean", every16, over: cleanRate)
        report.compare("header every 48 bytes ÷ clean", every48, over: cleanRate)
        report.fact("files", "\(size) bytes each; the damaged ones hold 3 valid frames, then the candidates, each declaring a frame that ends at the end of the file")
        report.note("MB/s is the file size divided by the time Journal(path:options:) takes read-only (warm page cache); the damaged files end in a torn tail, since no candidate is valid")
        report.note("every 16 bytes the magics overwrite each other's later header fields, so no candidate's header parses; every 48 bytes each header passes every check but the checksum, which the scan computes for all of them in its one pass")
        return report
    }

    /// A journal of 1 to 16 KiB data records, at least `size` bytes.
    private static func writeJournal(at path: String, size: Int, _ context: BenchmarkContext) throws {
        let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
        defer { journal.close() }
        let records = DataRecords(journal)
        var random = SeededRandom(seed: 55)
        var key: UInt64 = 0
        while journal.statistics.bytesWritten + journal.header.framesStart < UInt64(size) {
            key += 1
            try records.append(key: key, context.corpus.slice(Int.random(in: 1024...16_384, using: &random), using: &random))
        }
    }

    /// Three small saves, then candidate frame headers every `period` bytes
    /// up to `size` bytes (FORMAT.md §3 layout, written by hand: the
    /// library's encoder only writes valid frames).
    private static func writeHostile(at path: String, size: Int, period: Int, _ context: BenchmarkContext) throws {
        do {
            let journal = try Journal(path: path)
            defer { journal.close() }
            let records = DataRecords(journal)
            for key in 1...3 { try records.append(key: UInt64(key), Data(repeating: UInt8(key), count: 100)) }
        }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let valid = bytes.count
        bytes += [UInt8](repeating: 0xA5, count: size - valid)
        func store<T: FixedWidthInteger>(_ value: T, at offset: Int, into header: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { for (index, byte) in $0.enumerated() { header[offset + index] = byte } }
        }
        for start in stride(from: valid, to: size - StoredFrame.headerSize, by: period) {
            var header = [UInt8](repeating: 0, count: StoredFrame.headerSize)
            header.replaceSubrange(0..<4, with: Array("LSFR".utf8))
            let storedSize = UInt32(size - start - StoredFrame.headerSize)
            store(storedSize, at: 8, into: &header)      // storedSize
            store(storedSize, at: 12, into: &header)     // rawSize: codec 0 needs them equal
            store(UInt64(4), at: 16, into: &header)      // sequence: after the 3 saves
            header[32] = 1                               // kind: transaction
            store(UInt32(1), at: 36, into: &header)      // durable distance
            let kept = min(period, StoredFrame.headerSize)
            bytes.replaceSubrange(start..<(start + kept), with: header[0..<kept])
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
