// `logstore-tool demo PATH`: scenario 1's inventory app, run against a new store.

import ArgumentParser
import Foundation
import InventoryExample
import LogStore

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a demo inventory store (scenario 1 of SCENARIOS.md) and use it as the app would.",
        discussion: """
            Creates the asset types on first launch, inserts items with thumbnails in a few \
            saves, moves, re-types and deletes items in one save each, compacts, relaunches, \
            and answers the app's fetches. Then try: logstore-tool info PATH, schema PATH, \
            query PATH Item "valueInDollars > 150" --sort orderingValue --limit 5.
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

    func run() throws {
        if FileManager.default.fileExists(atPath: path) {
            guard overwrite else {
                printError("logstore-tool: \(path) exists; pass --overwrite to replace it, or choose another path")
                throw ExitStatus.usage
            }
            try FileManager.default.removeItem(atPath: path)
        }
        try reporting { () throws(LogStoreError) in try runDemo() }
    }

    private func runDemo() throws(LogStoreError) {
        let started = ContinuousClock.now
        var random = SplitMix64(seed: 42)
        let model = try Inventory.model()
        // Compaction on request only, so the demo shows each step.
        let options = JournalOptions(compaction: .manual)
        var store = try Store(path: path, model: model, options: options)
        var context = store.newContext()

        if try context.count("AssetType") == 0 {
            for label in Inventory.labels { try context.insert(AssetType.self).label = label }
            try context.save()
            print("first launch: created \(path) and the asset types \(Inventory.labels.joined(separator: ", "))")
        }
        let types = try context.fetch(FetchRequest(entityName: "AssetType", sortDescriptors: [SortKey("label")]), as: AssetType.self)

        var ordering = 0.0
        for batchStart in stride(from: 0, to: items, by: 1_000) {
            for _ in batchStart..<min(batchStart + 1_000, items) {
                let item = try context.insert(Item.self)  // awakeFromInsert sets dateCreated and itemKey
                let noun = Int(random.next() % UInt64(DemoWords.nouns.count))
                item.itemName = "\(DemoWords.adjectives[Int(random.next() % UInt64(DemoWords.adjectives.count))]) \(DemoWords.nouns[noun])"
                item.serialNumber = String(random.next() % 0xFFFF_FFFF, radix: 16, uppercase: true)
                item.valueInDollars = Int32(random.next() % 200)
                item.thumbnail = Thumbnail.sample(kind: noun, random: &random)
                ordering += 1
                item.orderingValue = ordering
                item.assetType = types[noun % types.count]
            }
            try context.save()
        }
        let saves = (items + 999) / 1_000
        print("inserted \(items) items with thumbnails in \(saves) save\(saves == 1 ? "" : "s")")

        // The list, as the app shows it; moves set the midpoint of the new neighbours.
        var list = try Inventory.items(context)
        var moved = 0, retyped = 0, deleted = 0
        // With few items, the deletes may take them all; one item cannot move.
        for step in 0..<150 where !list.isEmpty {
            let position = Int(random.next() % UInt64(list.count))
            let item = list[position]
            switch step % 3 {
            case 0 where list.count > 1:
                let destination = Int(random.next() % UInt64(list.count - 1)) + 1
                list.remove(at: position)
                item.orderingValue = (list[destination - 1].orderingValue + (destination < list.count ? list[destination].orderingValue : list[destination - 1].orderingValue + 2)) / 2
                list.insert(item, at: destination)
                moved += 1
            case 0, 1:
                item.assetType = types[Int(random.next() % UInt64(types.count))]
                retyped += 1
            default:
                try context.delete(item)
                list.remove(at: position)
                deleted += 1
            }
            try context.save()  // one small transaction: only what changed
        }
        print("moved \(moved) items, changed the asset type of \(retyped) and deleted \(deleted), one save each (fsync every commit)")

        let report = try store.compact()
        print("compacted: the journal of \(report.sequence) saves became a snapshot of \(report.records) records; the file went from \(formatBytes(report.bytesBefore)) to \(formatBytes(report.bytesAfter))")
        for item in list.prefix(3) { item.valueInDollars += 10 }
        try context.save()
        print("raised the price of 3 items in one more save, kept in the journal after the snapshot")

        // Relaunch: close, reopen, and read everything back.
        store.close()
        store = try Store(path: path, model: model, options: options)
        context = store.newContext()
        let sorted = try Inventory.items(context)
        print("relaunched: \(sorted.count) items; the first three by orderingValue are \(sorted.prefix(3).map { "\"\($0.itemName ?? "")\"" }.joined(separator: ", "))")
        let expensive = try ObjectPredicate("valueInDollars > 50")
        let fetched = try context.count(for: FetchRequest(entityName: "Item", predicate: expensive))
        let filtered = try sorted.filter(expensive).count
        print("expensive stuff (valueInDollars > 50): \(fetched) fetched, \(filtered) by filtering the list in memory")
        for type in try context.fetch(FetchRequest(entityName: "AssetType", sortDescriptors: [SortKey("label")]), as: AssetType.self) {
            let items = try context.count(for: FetchRequest(entityName: "Item", predicate: ObjectPredicate("assetType.label == %@", type.label)))
            print("  \(type.label ?? ""): \(items) items (its inverse set holds \(type.items.count))")
        }
        store.close()
        print("done in \(ContinuousClock.now - started)")
    }
}

/// The words the demo's items are named with.
enum DemoWords {
    static let adjectives = ["Red", "Shiny", "Old", "Small", "Large", "Fancy", "Plain", "Antique"]
    static let nouns = ["Chair", "Ring", "Laptop", "Table", "Watch", "Lamp", "Phone", "Sofa"]
}

extension Thumbnail {
    /// Runs of gray, about as compressible as small real thumbnails.
    static func sample(kind: Int, random: inout SplitMix64) -> Thumbnail {
        var pixels: [UInt8] = []
        while pixels.count < 16 * 16 {
            let run = Int(random.next() % 12) + 1
            pixels.append(contentsOf: repeatElement(UInt8(truncatingIfNeeded: random.next() &+ UInt64(kind)), count: min(run, 256 - pixels.count)))
        }
        return Thumbnail(width: 16, height: 16, pixels: pixels)
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
