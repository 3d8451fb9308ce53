// `logstore-tool schema FILE`: the model the file records.

import ArgumentParser
import LogStore

struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the model a store records: entities, attributes, relationships, indexes.",
        discussion: "--json prints the recorded model as stored (FORMAT.md §5.4).")

    @OptionGroup var common: CommonOptions

    func run() throws {
        let store = try openStore(common.file)
        defer { store.close() }
        let schema = store.storedSchema
        if common.json {
            try common.emitJSON(schema)
            return
        }
        for (position, entity) in schema.entities.enumerated() {
            if position > 0 { print() }
            print("entity \(entity.name)")
            for attribute in entity.attributes {
                var options = [attribute.optional ? "optional" : "required"]
                if attribute.indexed == true { options.append("indexed") }
                if let value = attribute.defaultValue {
                    options.append("default \(value)")
                } else if attribute.hasDefault {
                    options.append("has a default")
                }
                options += attribute.rules ?? []
                print("  attribute    \(attribute.name): \(attribute.type) (\(options.joined(separator: ", ")))")
            }
            for relationship in entity.relationships {
                var options = [relationship.toMany ? "to-many" : "to-one"]
                if let rule = relationship.deleteRule { options.append("delete rule \(rule.rawValue)") }
                if !relationship.toMany, let optional = relationship.optional { options.append(optional ? "optional" : "required") }
                if let minimum = relationship.minimumCount { options.append("at least \(minimum)") }
                if let maximum = relationship.maximumCount { options.append("at most \(maximum)") }
                print("  relationship \(relationship.name) -> \(relationship.destination), inverse \(relationship.inverse) (\(options.joined(separator: ", ")))")
            }
            let indexes = entity.attributes.filter { $0.indexed == true }.map(\.name)
            print("  indexes      \(indexes.isEmpty ? "none" : indexes.joined(separator: ", "))")
        }
    }
}
