// Benchmark 4: how well small transactions compress, frame by frame as the
// journal does it, against the alternatives.

import Foundation
@_spi(Benchmarks) import LogStore

/// Bytes stored for small inventory-item transactions (100 to 300 bytes
/// encoded) by the journal as it writes them (LZ4 against a 4 KiB store
/// dictionary once it has one, FORMAT.md §5.3), against LZ4 on each one
/// alone, LZ4 over batches, larger dictionaries and a streaming dictionary.
enum SmallTransactionCompression: BenchmarkGroup {
    static let name = "small-transactions"
    static let batchSize = 16

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "4. Compression of small transactions (inventory-item inserts)")
        let count = context.scaled(full: 20_000, quick: 2_000)
        context.log("small-transactions: \(count) inventory-item inserts")
        let path = context.scratch.freshPath("small.logstore")
        defer { context.scratch.remove(path) }
        let written = try InventoryItems.writeJournal(at: path, count: count)
        let frames = try StoredFrame.read(path: path)
        let raws = frames.map(\.transactionPayload)
        guard frames.count == count, UInt64(frames.reduce(0) { $0 + $1.size }) == written.bytesWritten else {
            throw BenchmarkError("the frames read back from \(path) do not add up to what journal.statistics says was written")
        }

        let rawBytes = raws.reduce(0) { $0 + $1.count }
        let journalBytes = frames.reduce(0) { $0 + $1.stored.count }
        let eachAloneBytes = raws.reduce(0) { $0 + lz4Size($1) }
        let batches = stride(from: 0, to: raws.count, by: batchSize).map { Array(raws[$0..<min($0 + batchSize, raws.count)].joined()) }
        // A batch keeps the journal's rule: raw when LZ4 does not shrink it.
        let batchedBytes = batches.reduce(0) { $0 + min(lz4Size($1), $1.count) }

        let perTransaction = 1 / Double(count)
        let raw = report.add("raw encoded payload", value: Double(rawBytes) * perTransaction, unit: "bytes/transaction")
        let journal = report.add("journal as written (store dictionary after 4 KiB)", value: Double(journalBytes) * perTransaction, unit: "bytes/transaction")
        let eachAlone = report.add("(a) LZ4 on each transaction, always", value: Double(eachAloneBytes) * perTransaction, unit: "bytes/transaction")
        let batched = report.add("(c) LZ4 over batches of \(batchSize) transactions", value: Double(batchedBytes) * perTransaction, unit: "bytes/transaction")
        let header = Double(StoredFrame.headerSize)
        let journalOnDisk = report.add("journal on disk, 40-byte frame header included", value: journal.value + header, unit: "bytes/transaction")
        let batchedOnDisk = report.add("(c) on disk, one 40-byte header per batch", value: batched.value + header / Double(batchSize), unit: "bytes/transaction")
        report.compare("journal ÷ raw", journal, over: raw)
        report.compare("(a) each alone ÷ raw", eachAlone, over: raw)
        report.compare("(c) batches of \(batchSize) ÷ raw", batched, over: raw)
        report.compare("(c) batches of \(batchSize) ÷ journal", batched, over: journal)
        report.compare("(c) on disk ÷ journal on disk", batchedOnDisk, over: journalOnDisk)
        try measureDictionaries(raws, journalSizes: frames.map(\.stored.count), into: &report)

        let sizes = raws.map(\.count).sorted()
        report.fact("transactions", "\(count), encoded sizes \(sizes.first ?? 0) to \(sizes.last ?? 0) bytes, median \(sizes[sizes.count / 2])")
        report.fact("frames the journal compressed", "\(frames.filter(\.isCompressed).count) of \(count); the others are stored raw because LZ4 did not make them smaller")
        report.fact("frames compressed against the store dictionary", "\(frames.filter(\.usesDictionary).count) of \(count)")
        report.note("(b) store dictionary: the last D bytes of the first \(trainingCount) transactions' raw payloads; measured on the transactions after those, each compressed alone against it (LZ4_loadDict + LZ4_compress_fast_continue) and checked to decompress with LZ4_decompress_safe_usingDict; raw when not smaller, as the journal does")
        report.note("(b) streaming: each transaction against the 64 KiB of raw payloads before it, as an LZ4 stream would; a frame then cannot be read without every frame before it")
        report.note("each transaction inserts one item: name, serial number, price, quantity, creation date, UUID and notes of 5 to 28 words; raw payloads are read back from the journal file, so they are exactly what the journal encodes (the first one also declares the names)")
        return report
    }

    static let trainingCount = 500

    /// Option (b): LZ4 against a dictionary, store-level (fixed, trained on
    /// the first transactions) or streaming (the transactions just before).
    private static func measureDictionaries(_ raws: [[UInt8]], journalSizes: [Int], into report: inout GroupReport) throws {
        guard raws.count > trainingCount * 2 else { return }
        let training = Array(raws[..<trainingCount].joined())
        let tested = raws.indices.dropFirst(trainingCount)
        let perTransaction = 1 / Double(tested.count)
        let raw = report.add("after the first \(trainingCount): raw encoded payload", value: Double(tested.reduce(0) { $0 + raws[$1].count }) * perTransaction, unit: "bytes/transaction")
        let journal = report.add("after the first \(trainingCount): journal as written", value: Double(tested.reduce(0) { $0 + journalSizes[$1] }) * perTransaction, unit: "bytes/transaction")
        for dictionarySize in [4 << 10, 16 << 10, 64 << 10] {
            let compressor = DictionaryCompressor(dictionary: Array(training.suffix(dictionarySize)))
            var stored = 0
            let seconds = try Stopwatch.seconds {
                for index in tested {
                    let block = compressor.compress(raws[index])
                    guard compressor.decompress(block, rawSize: raws[index].count) == raws[index] else {
                        throw BenchmarkError("a block compressed against a \(dictionarySize)-byte dictionary did not decompress to its input")
                    }
                    stored += min(block.count, raws[index].count)
                }
            }
            let label = "(b) store dictionary of \(dictionarySize >> 10) KiB"
            let measured = report.add(label, value: Double(stored) * perTransaction, unit: "bytes/transaction")
            report.add("\(label): compress, load and check", value: seconds * 1e6 * perTransaction, unit: "µs/transaction")
            report.compare("\(label) ÷ raw", measured, over: raw)
            report.compare("\(label) ÷ journal", measured, over: journal)
        }
        var streamed = 0
        for index in tested {
            let history = Array(raws[max(0, index - 512)..<index].joined().suffix(64 << 10))
            streamed += min(DictionaryCompressor(dictionary: history).compress(raws[index]).count, raws[index].count)
        }
        let streaming = report.add("(b) streaming, 64 KiB of history", value: Double(streamed) * perTransaction, unit: "bytes/transaction")
        report.compare("(b) streaming ÷ raw", streaming, over: raw)
        report.compare("(b) streaming ÷ journal", streaming, over: journal)
    }

    /// The size of `bytes` as one LZ4 block.
    private static func lz4Size(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { LZ4.compressed($0)?.count ?? $0.count }
    }
}
