// Benchmark 4: how well small transactions compress, frame by frame as the
// journal does it, against the alternatives.

import Foundation
@_spi(Benchmarks) import LogStore

/// Bytes stored for small inventory-item transactions (100 to 300 bytes
/// encoded) by the journal's per-frame LZ4 with raw fallback, against LZ4
/// on each one always and LZ4 over batches of several transactions.
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
        let raws = try frames.map { try $0.rawPayload() }
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
        let journal = report.add("journal: LZ4 per frame, raw when not smaller", value: Double(journalBytes) * perTransaction, unit: "bytes/transaction")
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

        let sizes = raws.map(\.count).sorted()
        report.fact("transactions", "\(count), encoded sizes \(sizes.first ?? 0) to \(sizes.last ?? 0) bytes, median \(sizes[sizes.count / 2])")
        report.fact("frames the journal compressed", "\(frames.filter(\.isCompressed).count) of \(count); the others are stored raw because LZ4 did not make them smaller")
        report.note("(b), LZ4 with a dictionary or streaming over earlier transactions (LZ4_loadDict, LZ4_compress_fast_continue): not measured, because the LogStore package does not export its CLZ4 module as a product, so this package cannot call liblz4's streaming API through it")
        report.note("each transaction inserts one item: name, serial number, price, quantity, creation date, UUID and notes of 5 to 28 words; raw payloads are read back from the journal file, so they are exactly what the journal encodes (the first one also declares the names)")
        return report
    }

    /// The size of `bytes` as one LZ4 block.
    private static func lz4Size(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { LZ4.compressed($0)?.count ?? $0.count }
    }
}
