// Scenario 1 of SCENARIOS.md as an app writes it: the model, its managed
// object classes and its thumbnail transformer. One definition serves the
// demo (`logstore-tool demo`) and the scenario's test.

import Foundation
import LogStore

/// An item of the inventory: Core Data's `NSManagedObject` subclass, as
/// scenario 1's app declares it.
public final class Item: ManagedObject {
    @Managed("itemName") public var itemName: String?
    @Managed("serialNumber") public var serialNumber: String?
    @Managed("valueInDollars") public var valueInDollars: Int32
    @Managed("dateCreated") public var dateCreated: Date?
    @Managed("itemKey") public var itemKey: String?
    @Managed("thumbnail") public var thumbnail: Thumbnail?
    @Managed("orderingValue") public var orderingValue: Double
    @Managed("assetType") public var assetType: AssetType?

    /// A new item is stamped with the time and a fresh key.
    public override func awakeFromInsert() {
        super.awakeFromInsert()
        dateCreated = Date()
        itemKey = UUID().uuidString
    }
}

/// A kind of asset (Furniture, Jewelry, Electronics) and its items.
public final class AssetType: ManagedObject {
    @Managed("label") public var label: String?
    @Managed("items") public var items: Set<Item>
}

/// A stand-in for an item's photo: a small grayscale image.
public struct Thumbnail: Sendable, Equatable {
    public var width: UInt16
    public var height: UInt16
    public var pixels: [UInt8]

    public init(width: UInt16, height: UInt16, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }
}

/// Stores a thumbnail as its size (two little-endian `UInt16`) and its pixels.
public struct ThumbnailTransformer: StoreValueTransformer {
    public init() {}

    public func transformedValue(_ value: Any) throws(LogStoreError) -> Data {
        guard let thumbnail = value as? Thumbnail else {
            throw LogStoreError(.wrongType, "ThumbnailTransformer was given a \(type(of: value)); give it a Thumbnail")
        }
        var data = Data()
        withUnsafeBytes(of: thumbnail.width.littleEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: thumbnail.height.littleEndian) { data.append(contentsOf: $0) }
        data.append(contentsOf: thumbnail.pixels)
        return data
    }

    public func reverseTransformedValue(_ data: Data) throws(LogStoreError) -> Any {
        let bytes = [UInt8](data)
        guard bytes.count >= 4 else {
            throw LogStoreError(.transformerFailed, "ThumbnailTransformer was given \(bytes.count) bytes, fewer than the 4 of its size")
        }
        return Thumbnail(width: UInt16(bytes[0]) | UInt16(bytes[1]) << 8, height: UInt16(bytes[2]) | UInt16(bytes[3]) << 8, pixels: Array(bytes[4...]))
    }
}

/// Scenario 1's model and the app's list.
public enum Inventory {
    /// The asset types the app creates on first launch.
    public static let labels = ["Electronics", "Furniture", "Jewelry"]

    /// The model, with `ThumbnailTransformer` registered under the name it uses.
    public static func model() throws(LogStoreError) -> Model {
        ValueTransformers.register(ThumbnailTransformer(), named: "ThumbnailTransformer")
        return try Model {
            Entity("Item", Item.self) {
                Attribute("itemName", .string)
                Attribute("serialNumber", .string)
                Attribute("valueInDollars", .int32, default: Int32(0), indexed: true, rules: [.minimum(0)])
                Attribute("dateCreated", .date)
                Attribute("itemKey", .string)
                Attribute("thumbnail", .transformable("ThumbnailTransformer"))
                Attribute("orderingValue", .double, default: 0.0, indexed: true)
                Relationship("assetType", to: "AssetType", inverse: "items")
            }
            Entity("AssetType", AssetType.self) {
                Attribute("label", .string, optional: false, rules: [.minimumLength(1)])
                Relationship("items", to: "Item", inverse: "assetType", toMany: true, deleteRule: .deny)
            }
        }
    }

    /// The list, as the app shows it: every item by `orderingValue`.
    public static func items(_ context: ObjectContext) throws(LogStoreError) -> [Item] {
        try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortKey("orderingValue")]), as: Item.self)
    }
}
