// The machine's own limits, measured in the same run as the stores: what no
// store on this machine can beat, so every figure can be read as a fraction.

import Foundation
@_spi(Benchmarks) import LogStore

/// Bandwidths and rates of the hardware and kernel under the stores.
struct MachineLimits: Encodable, Sendable {
    /// Sequential 1 MiB writes to a new file, then one fdatasync, in bytes/s.
    var sequentialWrite: Double
    /// Appends of 100 bytes, each followed by fdatasync, per second.
    var syncedWrites: Double
    /// The same 100-byte writes over bytes already written and synced, as a
    /// write-ahead log reused after a checkpoint takes them: no fdatasync
    /// records a new file size. Per second.
    var syncedOverwrites: Double
    /// LZ4 compression of the Person records' bytes, input bytes/s.
    var lz4Compress: Double
    /// LZ4 decompression of the same, output bytes/s.
    var lz4Decompress: Double
    /// memcpy between two 256 MiB buffers, bytes/s.
    var memoryCopy: Double
    /// Dependent reads at random places in 256 MiB (a cache miss each), per second.
    var randomMemoryReads: Double
    /// Starting the harness as a child process that exits at once, per second.
    var processStarts: Double

    /// Measures every limit `repetitions` times and keeps the medians.
    /// `records` is the bytes of Person records the stores hold.
    static func measure(_ context: BenchmarkContext, records: [UInt8]) throws -> MachineLimits {
        context.log("limits: disk, LZ4, memory and process start")
        let writeBytes = context.scaled(full: 512 << 20, quick: 64 << 20)
        let syncDuration = context.scaled(full: Duration.seconds(1), quick: .milliseconds(300))
        let memoryBytes = context.scaled(full: 256 << 20, quick: 64 << 20)
        let chase = RandomChase(bytes: 256 << 20)
        let rates = try measureInRounds(repetitions: context.repetitions, [
            { try sequentialWriteSample(bytes: writeBytes, context) },
            { try syncedWriteSample(for: syncDuration, context) },
            { try syncedOverwriteSample(for: syncDuration, context) },
            { try lz4Samples(records).compress },
            { try lz4Samples(records).decompress },
            { memoryCopySample(bytes: memoryBytes) },
            { chase.sample(reads: context.scaled(full: 4_000_000, quick: 1_000_000)) },
            { try Probe.startSample(count: context.scaled(full: 20, quick: 5)) },
        ])
        return MachineLimits(
            sequentialWrite: rates[0].median, syncedWrites: rates[1].median, syncedOverwrites: rates[2].median,
            lz4Compress: rates[3].median, lz4Decompress: rates[4].median,
            memoryCopy: rates[5].median, randomMemoryReads: rates[6].median, processStarts: rates[7].median)
    }

    /// The limits as rows of the report.
    var rows: [(name: String, value: Double, unit: String)] {
        [
            ("sequential write (1 MiB pwrite, then fdatasync)", sequentialWrite / 1e6, "MB/s"),
            ("pwrite of 100 bytes + fdatasync", syncedWrites, "per s"),
            ("pwrite of 100 bytes + fdatasync, over written bytes", syncedOverwrites, "per s"),
            ("LZ4 compress, Person record bytes", lz4Compress / 1e6, "MB/s"),
            ("LZ4 decompress, Person record bytes", lz4Decompress / 1e6, "MB/s"),
            ("memory copy (memcpy, 256 MiB)", memoryCopy / 1e6, "MB/s"),
            ("random dependent memory reads in 256 MiB", randomMemoryReads / 1e6, "M per s"),
            ("process start and exit (the harness, doing nothing)", processStarts, "per s"),
        ]
    }

    // MARK: - Measurements

    private static func sequentialWriteSample(bytes: Int, _ context: BenchmarkContext) throws -> Sample {
        let file = try PlainFile(path: context.scratch.freshPath("limit-write.plain"))
        defer { context.scratch.remove(file.path) }
        let chunk = [UInt8](repeating: 0x5a, count: 1 << 20)
        return try Sample.timing(work: Double(bytes)) {
            for _ in 0..<(bytes >> 20) { try chunk.withUnsafeBytes { try file.append($0) } }
            try file.synchronize()
        }
    }

    /// 100-byte appends, each fdatasynced, for `duration`: the machine's durable-write rate.
    static func syncedWriteSample(for duration: Duration, _ context: BenchmarkContext) throws -> Sample {
        let file = try PlainFile(path: context.scratch.freshPath("limit-sync.plain"))
        defer { context.scratch.remove(file.path) }
        let record = [UInt8](repeating: 0x61, count: 100)
        return try Stopwatch.repeatFor(duration) {
            try record.withUnsafeBytes { try file.append($0) }
            try file.synchronize()
        }
    }

    /// 100-byte writes, each fdatasynced, for `duration`, over 16 MiB
    /// written and synced first (more than the duration's writes reach).
    static func syncedOverwriteSample(for duration: Duration, _ context: BenchmarkContext) throws -> Sample {
        let file = try PlainFile(path: context.scratch.freshPath("limit-overwrite.plain"))
        defer { context.scratch.remove(file.path) }
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<16 { try zeros.withUnsafeBytes { try file.append($0) } }
        try file.synchronize()
        file.rewind()
        let record = [UInt8](repeating: 0x61, count: 100)
        return try Stopwatch.repeatFor(duration) {
            try record.withUnsafeBytes { try file.append($0) }
            try file.synchronize()
        }
    }

    /// Compresses `records` in 64 KiB blocks (the limit figures were
    /// always measured so; snapshot data blocks are 4 KiB by default),
    /// then decompresses them.
    private static func lz4Samples(_ records: [UInt8]) throws -> (compress: Sample, decompress: Sample) {
        let block = 64 << 10
        let compressor = LZ4.Compressor()
        var output = [UInt8](repeating: 0, count: LZ4.compressBound(block))
        var blocks: [[UInt8]] = []
        let compress = records.withUnsafeBytes { all in
            output.withUnsafeMutableBytes { destination in
                Sample.timing(work: Double(all.count)) {
                    for start in stride(from: 0, to: all.count, by: block) {
                        let source = UnsafeRawBufferPointer(rebasing: all[start..<min(start + block, all.count)])
                        let size = compressor.compress(source, into: destination)
                        blocks.append(Array(destination.prefix(size)))
                    }
                }
            }
        }
        let decompress = try output.withUnsafeMutableBytes { destination in
            try Sample.timing(work: Double(records.count)) {
                for (index, compressed) in blocks.enumerated() {
                    let size = min(block, records.count - index * block)
                    try compressed.withUnsafeBytes { try LZ4.decompress($0, into: UnsafeMutableRawBufferPointer(rebasing: destination[0..<size])) }
                }
            }
        }
        return (compress, decompress)
    }

    private static func memoryCopySample(bytes: Int) -> Sample {
        let source = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let destination = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        defer { source.deallocate(); destination.deallocate() }
        memset(source, 0x33, bytes)
        memset(destination, 0, bytes)  // fault the pages in before the clock starts
        let sample = Sample.timing(work: Double(bytes)) { memcpy(destination, source, bytes) }
        keep(destination.load(fromByteOffset: bytes / 2, as: UInt8.self))
        return sample
    }
}

/// A random cycle through a large array: each read's address depends on the
/// one before, so the CPU cannot overlap the misses. The floor under any
/// lookup that lands somewhere new in memory.
private final class RandomChase {
    private var next: [UInt32]

    init(bytes: Int) {
        let count = bytes / MemoryLayout<UInt32>.stride
        // Sattolo's shuffle: one cycle through every slot.
        var order = Array(0..<UInt32(count))
        var random = SeededRandom(seed: 0xc4a5e)
        for index in stride(from: count - 1, to: 0, by: -1) {
            order.swapAt(index, Int.random(in: 0..<index, using: &random))
        }
        next = [UInt32](repeating: 0, count: count)
        for index in 0..<count { next[Int(order[index])] = order[(index + 1) % count] }
    }

    func sample(reads: Int) -> Sample {
        var slot: UInt32 = 0
        let sample = next.withUnsafeBufferPointer { table in
            Sample.timing(work: Double(reads)) {
                for _ in 0..<reads { slot = table[Int(slot)] }
            }
        }
        keep(slot)
        return sample
    }
}
