// `logstore-tool demo PATH`: creates an inventory store through the journal
// API, changes it, reads it back and answers a query, printing each step.

import ArgumentParser
import Foundation
import LogStore

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a demo inventory store (scenario 1's data) and read it back.",
        discussion: """
            Writes asset types and items with thumbnails in a few large saves, then
            single-item saves that move and delete items, reopens the file and
            replays it to answer "items worth more than $50". Until the object layer
            lands, this uses the journal API directly.
            """)

    @Argument(help: "Where to create the store.")
    var path: String = "demo.logstore"

    @Option(help: "How many items to insert.")
    var items = 5_000

    @Flag(help: "Replace the file if it exists.")
    var overwrite = false

    func validate() throws {
        guard items > 0 else { throw ValidationError("--items must be positive") }
    }

    func run() async throws {
        if FileManager.default.fileExists(atPath: path) {
            guard overwrite else {
                printError("logstore-tool: \(path) exists; pass --overwrite to replace it")
                throw ExitStatus.cannotOpen
            }
            try FileManager.default.removeItem(atPath: path)
        }
        do throws(LogStoreError) {
            try runDemo()
        } catch {
            throw ExitStatus.report(error)
        }
    }

    private func runDemo() throws(LogStoreError) {
        let started = ContinuousClock.now
        var random = SplitMix64(seed: 42)
        let journal = try Journal(path: path)
        let assetType = journal.symbol(for: "AssetType"), label = journal.symbol(for: "label")
        let item = journal.symbol(for: "Item")
        let name = journal.symbol(for: "itemName"), serial = journal.symbol(for: "serialNumber")
        let value = journal.symbol(for: "valueInDollars"), created = journal.symbol(for: "dateCreated")
        let key = journal.symbol(for: "itemKey"), thumbnail = journal.symbol(for: "thumbnail")
        let ordering = journal.symbol(for: "orderingValue"), type = journal.symbol(for: "assetType")

        let types = ["Furniture", "Jewelry", "Electronics"].enumerated().map { index, text in
            RecordChange.insert(RecordID(entity: assetType, key: UInt64(index + 1)), [Field(label, .string(text))])
        }
        try journal.append(types)
        print("created \(path) and saved 3 asset types")

        let adjectives = ["Red", "Shiny", "Old", "Small", "Large", "Fancy", "Plain", "Antique"]
        let nouns = ["Chair", "Ring", "Laptop", "Table", "Watch", "Lamp", "Phone", "Sofa"]
        var nextKey: UInt64 = 1
        for batchStart in stride(from: 0, to: items, by: 1_000) {
            var changes: [RecordChange] = []
            for position in batchStart..<min(batchStart + 1_000, items) {
                let noun = Int(random.next() % UInt64(nouns.count))
                let fields = [
                    Field(name, .string("\(adjectives[Int(random.next() % UInt64(adjectives.count))]) \(nouns[noun])")),
                    Field(serial, .string(String(random.next() % 0xFFFF_FFFF, radix: 16, uppercase: true))),
                    Field(value, .int32(Int32(random.next() % 200))),
                    Field(created, .date(Date())),
                    Field(key, .string(UUID().uuidString)),
                    Field(thumbnail, .data(Demo.thumbnail(for: noun, random: &random))),
                    Field(ordering, .double(Double(position + 1))),
                    Field(type, .reference(RecordID(entity: assetType, key: UInt64(noun % 3 + 1)))),
                ]
                changes.append(.insert(RecordID(entity: item, key: nextKey), fields))
                nextKey += 1
            }
            try journal.append(changes)
        }
        print("saved \(items) items with thumbnails in \((items + 999) / 1_000) transactions")

        var moved = 0, deleted = 0
        for step in 0..<200 {
            let target = RecordID(entity: item, key: random.next() % UInt64(items) + 1)
            if step % 4 == 3 {
                try journal.append([.delete(target)])
                deleted += 1
            } else {
                try journal.append([.update(target, [Field(ordering, .double(Double(random.next() % 1_000_000) / 100))])])
                moved += 1
            }
        }
        print("moved \(moved) items and deleted \(deleted) in one save each (fsync every commit)")
        let statistics = journal.statistics
        journal.close()

        let reader = try Journal(path: path, options: JournalOptions(access: .readOnly))
        var values: [UInt64: Int32] = [:]
        var transactions = 0
        try reader.forEachTransaction { transaction in
            transactions += 1
            for change in transaction.changes where change.recordID.entity == item {
                switch change {
                case .insert(let id, let fields), .update(let id, let fields):
                    for field in fields where field.attribute == value {
                        if case .int32(let dollars) = field.value { values[id.key] = dollars }
                    }
                case .delete(let id):
                    values[id.key] = nil
                }
            }
        }
        reader.close()
        let expensive = values.values.filter { $0 > 50 }.count
        print("reopened and replayed \(transactions) transactions: \(values.count) items, \(expensive) worth more than $50")
        let ratio = Double(statistics.rawPayloadBytes) / Double(max(statistics.bytesWritten, 1))
        print("wrote \(formatBytes(statistics.bytesWritten)) in \(statistics.framesWritten) frames (\(String(format: "%.2f", ratio))x smaller than raw, headers included) with \(statistics.syncs) fsyncs in \(ContinuousClock.now - started)")
    }

    /// A stand-in for a JPEG thumbnail: a header and a few runs of pixels,
    /// about as compressible as small real images.
    static func thumbnail(for kind: Int, random: inout SplitMix64) -> Data {
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, UInt8(kind)]
        while bytes.count < 256 {
            let run = Int(random.next() % 12) + 1
            let pixel = UInt8(truncatingIfNeeded: random.next())
            bytes.append(contentsOf: repeatElement(pixel, count: run))
        }
        return Data(bytes)
    }
}

/// A small seeded generator, so the demo writes the same data every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
