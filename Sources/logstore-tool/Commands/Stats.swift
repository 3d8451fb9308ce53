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
        fileprivate var lowest: Extreme?
        fileprivate var highest: Extreme?
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
                    stats.attributes[position].minimum = lowest.text
                    stats.attributes[position].maximum = highest.text
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

    /// A smallest or largest value, kept in its own type: an Int64 near
    /// 2⁶³ or a decimal with 30 digits does not survive a trip through Double.
    /// One attribute's values are all of one case; NaN is left out.
    fileprivate enum Extreme: Comparable {
        case integer(Int64)
        case number(Double)
        case decimal(Decimal)
        case date(Date)

        init?(_ value: Any) {
            switch value {
            case let value as Int16: self = .integer(Int64(value))
            case let value as Int32: self = .integer(Int64(value))
            case let value as Int64: self = .integer(value)
            case let value as Double where !value.isNaN: self = .number(value)
            case let value as Float where !value.isNaN: self = .number(Double(value))
            case let value as Decimal where !value.isNaN: self = .decimal(value)
            case let value as Date where !value.timeIntervalSinceReferenceDate.isNaN: self = .date(value)
            default: return nil
            }
        }

        /// As JSON Lines would print the value.
        var text: String {
            switch self {
            case .integer(let value): "\(value)"
            case .number(let value): value.description
            case .decimal(let value): value.description
            case .date(let value): ValueText.isoDate(value)
            }
        }
    }

    private static func add(_ value: Any?, to stats: inout AttributeStats) {
        guard let value else { return }
        stats.filled += 1
        if let extreme = Extreme(value) {
            stats.lowest = min(stats.lowest ?? extreme, extreme)
            stats.highest = max(stats.highest ?? extreme, extreme)
        }
        switch value {
        case let string as String: stats.totalBytes += string.utf8.count
        case let data as Data: stats.totalBytes += data.count
        default: break
        }
    }
}
