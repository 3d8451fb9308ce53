// Benchmark 3b: LZ4 block compression and decompression of record payloads.

import Foundation
@_spi(Benchmarks) import LogStore

/// `LZ4.Compressor` (what the journal writer uses) and `LZ4.decompress`
/// over frames of text-like records.
enum Lz4Throughput: BenchmarkGroup {
    static let name = "lz4"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "3b. LZ4 block compression and decompression")
        let bytesPerRun = context.scaled(full: 256 << 20, quick: 32 << 20)
        context.log("lz4: \(bytesPerRun >> 20) MiB per run, \(context.repetitions) rounds")

        for (label, size) in [("1 KiB", 1024), ("64 KiB", 64 << 10)] {
            // 1 MiB of distinct frames, so no single input is learned by the branch predictor.
            let frames = context.corpus.slices((1 << 20) / size, of: size, seed: UInt64(size) + 3)
            let compressed = try frames.map { frame in
                guard let block = frame.withUnsafeBytes(LZ4.compressed) else { throw BenchmarkError("LZ4 failed to compress a frame") }
                return block
            }
            let passes = bytesPerRun / (frames.count * size)
            var scratch = [UInt8](repeating: 0, count: LZ4.compressBound(size))
            let work = Double(passes * frames.count * size)
            let compressor = LZ4.Compressor()
            let rates = try measureInRounds(repetitions: context.repetitions, [
                {
                    Sample(work: work, seconds: scratch.withUnsafeMutableBytes { destination in
                        Stopwatch.seconds {
                            for _ in 0..<passes {
                                for frame in frames { _ = frame.withUnsafeBytes { compressor.compress($0, into: destination) } }
                            }
                        }
                    })
                },
                {
                    Sample(work: work, seconds: try scratch.withUnsafeMutableBytes { all in
                        let destination = UnsafeMutableRawBufferPointer(rebasing: all[0..<size])
                        return try Stopwatch.seconds {
                            for _ in 0..<passes {
                                for frame in compressed { try frame.withUnsafeBytes { try LZ4.decompress($0, into: destination) } }
                            }
                        }
                    })
                },
            ])
            report.add("LZ4.Compressor.compress, \(label) frames (input bytes)", rates[0], scale: 1e-6, unit: "MB/s")
            report.add("LZ4.decompress, \(label) frames (output bytes)", rates[1], scale: 1e-6, unit: "MB/s")
            let compressedBytes = compressed.reduce(0) { $0 + $1.count }
            report.add("compressed ÷ raw, \(label) frames", value: Double(compressedBytes) / Double(frames.count * size), unit: "×")
        }
        report.note("frames are slices of text-like records (JSON lines of inventory items); each frame is compressed on its own, as the journal does")
        return report
    }
}
