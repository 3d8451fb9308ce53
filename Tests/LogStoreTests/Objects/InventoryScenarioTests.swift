// Scenario 1 of SCENARIOS.md: items and asset types, with a relaunch.

import Foundation
import InventoryExample
import Testing
@testable import LogStore

@Suite("Scenario 1: inventory")
struct InventoryScenarioTests {
    @Test("First launch creates three asset types; items get hooks, ordering and asset types; moves and deletes save only what changed; a relaunch shows everything")
    func inventory() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/inventory.logstore"
            let model = try Inventory.model()
            do {
                let store = try Store(path: path, model: model)
                let context = store.newContext()
                if try context.count("AssetType") == 0 {
                    for label in ["Furniture", "Jewelry", "Electronics"] { try context.insert(AssetType.self).label = label }
                }
                let types = try context.fetchAll(AssetType.self)
                let furniture = try #require(types.first { $0.label == "Furniture" })
                for (index, (name, value)) in [("Chair", 60), ("Ring", 900), ("Lamp", 25), ("Desk", 140)].enumerated() {
                    let item = try context.insert(Item.self)
                    #expect(item.dateCreated != nil && UUID(uuidString: item.itemKey ?? "") != nil, "awakeFromInsert ran")
                    item.itemName = name
                    item.valueInDollars = Int32(value)
                    item.orderingValue = (try Inventory.items(context).last { $0 !== item }?.orderingValue ?? 0) + 1
                    #expect(item.orderingValue == Double(index + 1))
                    if name == "Chair" || name == "Desk" { item.assetType = furniture }
                }
                try Inventory.items(context)[0].thumbnail = Thumbnail(width: 2, height: 1, pixels: [255, 0, 0, 255, 0, 0, 255, 255])
                #expect(furniture.items.compactMap(\.itemName).sorted() == ["Chair", "Desk"], "the inverse follows")
                try context.save()
                #expect(!context.hasChanges)
                store.close()
            }
            // Relaunch: move the lamp between chair and ring, delete the ring.
            do {
                let store = try Store(path: path, model: model)
                let context = store.newContext()
                #expect(try context.count("AssetType") == 3, "asset types are created once")
                var items = try Inventory.items(context)
                #expect(items.map(\.itemName) == ["Chair", "Ring", "Lamp", "Desk"])
                #expect(items[0].thumbnail == Thumbnail(width: 2, height: 1, pixels: [255, 0, 0, 255, 0, 0, 255, 255]))
                #expect(items[0].assetType?.label == "Furniture")
                items[2].orderingValue = (items[0].orderingValue + items[1].orderingValue) / 2
                try context.delete(items[1])
                // Bytes written, not the file's size, which runs into reserved space.
                let before = store.journal.statistics.bytesWritten
                try context.save()
                let grown = store.journal.statistics.bytesWritten - before
                #expect(grown < 200, "a move and a delete append \(grown) bytes: only what changed")
                // Expensive stuff: the same predicate fetches and filters in memory.
                items = try Inventory.items(context)
                #expect(items.map(\.itemName) == ["Chair", "Lamp", "Desk"])
                let expensive = try ObjectPredicate("valueInDollars > %d", 50)
                let fetched = try context.fetch(FetchRequest(entityName: "Item", predicate: expensive, sortDescriptors: [SortKey("orderingValue")]), as: Item.self)
                #expect(fetched.map(\.itemName) == ["Chair", "Desk"])
                #expect(try items.filter(expensive).map(\.itemName) == ["Chair", "Desk"])
                #expect(try context.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("assetType.label == 'Furniture'"))).count == 2)
                store.close()
            }
            do {
                let store = try Store(path: path, model: model)
                defer { store.close() }
                let context = store.newContext()
                #expect(try Inventory.items(context).map(\.itemName) == ["Chair", "Lamp", "Desk"])
                let furniture = try #require(try context.fetchAll(AssetType.self).first { $0.label == "Furniture" })
                #expect(furniture.items.compactMap(\.itemName).sorted() == ["Chair", "Desk"])
            }
        }
    }
}
