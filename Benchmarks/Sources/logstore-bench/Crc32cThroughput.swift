// Benchmark 3a: CRC32C, which open runs over every byte, against memcpy.

import Foundation
@_spi(Benchmarks) import LogStore

/// `CRC32C.checksum` over buffers of a real journal file, beside `memcpy`
/// of the same buffer.
enum Crc32cThroughput: BenchmarkGroup {
    static let name = "crc32c"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "3a. CRC32C throughput, against memcpy")
        report.fact("CRC32C.isHardwareAccelerated", "\(CRC32C.isHardwareAccelerated)")
        let path = context.scratch.freshPath("crc32c.logstore")
        defer { context.scratch.remove(path) }
        _ = try InventoryItems.writeJournal(at: path, count: 8_000)
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let framesStart = try StoredFrame.framesStart(of: file, path: path)
        let bytesPerRun = context.scaled(full: 1 << 30, quick: 1 << 27)
        context.log("crc32c: \(bytesPerRun >> 20) MiB per run, \(context.repetitions) rounds")

        for (label, size) in [("4 KiB", 4096), ("1 MiB", 1 << 20)] {
            guard file.count >= framesStart + size else { throw BenchmarkError("the sample journal is smaller than \(label)") }
            let source = Array(file[framesStart..<(framesStart + size)])
            var destination = [UInt8](repeating: 0, count: size)
            let passes = bytesPerRun / size
            var checksums: UInt32 = 0
            let rates = try measureInRounds(repetitions: context.repetitions, [
                {
                    Sample(work: Double(passes * size), seconds: source.withUnsafeBytes { raw in
                        Stopwatch.seconds { for _ in 0..<passes { checksums ^= CRC32C.checksum(raw) } }
                    })
                },
                {
                    Sample(work: Double(passes * size), seconds: source.withUnsafeBytes { raw in
                        destination.withUnsafeMutableBytes { target in
                            Stopwatch.seconds { for _ in 0..<passes { copy(raw, to: target) } }
                        }
                    })
                },
            ])
            let crc = report.add("CRC32C.checksum, \(label) buffer", rates[0], scale: 1e-9, unit: "GB/s")
            let memcpy = report.add("memcpy, \(label) buffer", rates[1], scale: 1e-9, unit: "GB/s")
            report.compare("CRC32C ÷ memcpy, \(label)", crc, over: memcpy)
            keep((checksums, destination))
        }
        report.note("the buffers are the first bytes of a journal file of inventory-item inserts (frame headers and LZ4 payloads), checksummed or copied over and over in place (cache-warm)")
        return report
    }

    /// memcpy behind a call the optimizer does not see into, so a loop of
    /// identical copies stays a loop of copies.
    @inline(never) @_optimize(none)
    private static func copy(_ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawBufferPointer) {
        destination.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: source.count)
    }
}
