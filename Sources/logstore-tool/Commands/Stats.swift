// `logstore-tool stats FILE`: what the records hold, attribute by attribute.

import ArgumentParser
import Foundation
import LogStore

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarize each entity's records: counts, and per attribute how many are set, the smallest and largest value, the average size.",
        discussion: "Reads every record once, so it takes about as long as a dump.")

    @OptionGroup var common: CommonOptions

    struct AttributeStats: Encodable {
        var name: String
        var type: String
        /// Records where it is not nil.
        var filled = 0
        /// Numbers and dates: the extremes, as JSON Lines would print them.
        var minimum: String?
        var maximum: String?
        /// Strings and data: the average length in bytes of those set.
        var averageBytes: Double?
        fileprivate var lowest: Double?
        fileprivate var highest: Double?
        fileprivate var totalBytes = 0

        enum CodingKeys: String, CodingKey { case name, type, filled, minimum, maximum, averageBytes }
    }

    struct RelationshipStats: Encodable {
        var name: String
        /// Records pointing to at least one object through it.
        var linked = 0
        /// Links in all.
        var links = 0
    }

    struct EntityStats: Encodable {
        var name: String
        var records = 0
        var attributes: [AttributeStats]
        var relationships: [RelationshipStats]
    }

    func run() throws {
        let store = try openStore(common.file)
        defer { store.close() }
        let recorded = Dictionary(store.storedSchema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var result: [EntityStats] = []
        for entity in store.model.entities {
            let types = Dictionary((recorded[entity.name]?.attributes ?? []).map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
            var stats = EntityStats(
                name: entity.name,
                attributes: entity.attributes.map { AttributeStats(name: $0.name, type: types[$0.name] ?? $0.type.description) },
                relationships: entity.relationshipDefinitions.map { RelationshipStats(name: $0.name) })
            let reader = RecordReader(store: store, entity: entity)
            let attributeCount = entity.attributes.count
            try reporting { () throws(LogStoreError) in
                try reader.forEach(FetchRequest(entityName: entity.name)) { _, values in
                    stats.records += 1
                    for (slot, value) in values.enumerated() {
                        if slot < attributeCount {
                            Self.add(value, to: &stats.attributes[slot])
                        } else {
                            let targets = (value as? [ObjectID])?.count ?? (value == nil ? 0 : 1)
                            stats.relationships[slot - attributeCount].links += targets
                            if targets > 0 { stats.relationships[slot - attributeCount].linked += 1 }
                        }
                    }
                }
            }
            for position in stats.attributes.indices {
                let attribute = stats.attributes[position]
                if let lowest = attribute.lowest, let highest = attribute.highest {
                    let type = entity.attributes[position].type
                    stats.attributes[position].minimum = Self.text(lowest, type)
                    stats.attributes[position].maximum = Self.text(highest, type)
                }
                if attribute.totalBytes > 0 { stats.attributes[position].averageBytes = Double(attribute.totalBytes) / Double(attribute.filled) }
            }
            result.append(stats)
        }
        if common.json {
            try common.emitJSON(result)
            return
        }
        for (position, entity) in result.enumerated() {
            if position > 0 { print() }
            print("\(entity.name): \(entity.records) records")
            for attribute in entity.attributes {
                var parts = ["\(attribute.filled) set"]
                if let minimum = attribute.minimum, let maximum = attribute.maximum { parts.append("from \(minimum) to \(maximum)") }
                if let average = attribute.averageBytes { parts.append(String(format: "%.1f bytes on average", average)) }
                print("  \(attribute.name) (\(attribute.type)): \(parts.joined(separator: ", "))")
            }
            for relationship in entity.relationships {
                print("  \(relationship.name): \(relationship.linked) records linked, \(relationship.links) links")
            }
        }
    }

    /// An extreme as its attribute's type prints it.
    private static func text(_ number: Double, _ type: AttributeType) -> String {
        switch type {
        case .date: ValueText.isoDate(Date(timeIntervalSince1970: number))
        case .int16, .int32, .int64: String(Int64(number))
        default: number.description
        }
    }

    private static func add(_ value: Any?, to stats: inout AttributeStats) {
        guard let value else { return }
        stats.filled += 1
        let number: Double? = switch value {
        case let value as Int16: Double(value)
        case let value as Int32: Double(value)
        case let value as Int64: Double(value)
        case let value as Double: value
        case let value as Float: Double(value)
        case let value as Date: value.timeIntervalSince1970
        default: nil
        }
        if let number, !number.isNaN {
            stats.lowest = min(stats.lowest ?? number, number)
            stats.highest = max(stats.highest ?? number, number)
        }
        switch value {
        case let string as String: stats.totalBytes += string.utf8.count
        case let data as Data: stats.totalBytes += data.count
        default: break
        }
    }
}
