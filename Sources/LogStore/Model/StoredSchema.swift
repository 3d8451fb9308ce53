// The model as the store file keeps it, and the lightweight-migration check.

import Foundation

/// The stored parts of a model, written into the store file as JSON in the
/// reserved `__Schema` record (FORMAT.md §5.4), so that a store can be
/// checked against the app's model and inspected without the app's code.
struct StoredSchema: Codable, Equatable, Sendable {
    struct AttributeSchema: Codable, Equatable, Sendable {
        var name: String
        var type: String
        var optional: Bool
        var hasDefault: Bool
    }

    struct RelationshipSchema: Codable, Equatable, Sendable {
        var name: String
        var destination: String
        var inverse: String
        var toMany: Bool
    }

    struct EntitySchema: Codable, Equatable, Sendable {
        var name: String
        var attributes: [AttributeSchema]
        var relationships: [RelationshipSchema]
    }

    var entities: [EntitySchema]

    init(entities: [EntitySchema]) { self.entities = entities }

    init(_ model: Model) {
        entities = model.entities.map { entity in
            EntitySchema(
                name: entity.name,
                attributes: entity.attributes.filter { !$0.isTransient }.map {
                    AttributeSchema(name: $0.name, type: $0.type.description, optional: $0.isOptional, hasDefault: $0.defaultValue != nil)
                },
                relationships: entity.relationships.map {
                    RelationshipSchema(name: $0.name, destination: $0.destination, inverse: $0.definition.inverse, toMany: $0.isToMany)
                })
        }
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain strings and booleans cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    static func decode(_ data: Data, path: String) throws(LogStoreError) -> StoredSchema {
        do { return try JSONDecoder().decode(StoredSchema.self, from: data) } catch {
            throw LogStoreError(.corruptFrame, "the model stored in \(path) does not decode (\(error)); the file is damaged: run \"logstore-tool verify \(path)\"", path: path)
        }
    }

    /// What stops `newer` from opening a store written with `self`: empty
    /// when the change is a lightweight migration (added entities, optional
    /// attributes, attributes with defaults, relationships).
    func differences(to newer: StoredSchema) -> [String] {
        var differences: [String] = []
        let newEntities = Dictionary(newer.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for old in entities {
            guard let new = newEntities[old.name] else {
                differences.append("entity \(old.name) was removed")
                continue
            }
            let newAttributes = Dictionary(new.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for attribute in old.attributes {
                guard let changed = newAttributes[attribute.name] else {
                    differences.append("attribute \(old.name).\(attribute.name) was removed")
                    continue
                }
                if changed.type != attribute.type {
                    differences.append("attribute \(old.name).\(attribute.name) changed type from \(attribute.type) to \(changed.type)")
                }
                if attribute.optional && !changed.optional && !changed.hasDefault {
                    differences.append("attribute \(old.name).\(attribute.name) became required without a default value")
                }
            }
            let oldNames = Set(old.attributes.map(\.name))
            for attribute in new.attributes where !oldNames.contains(attribute.name) && !attribute.optional && !attribute.hasDefault {
                differences.append("attribute \(old.name).\(attribute.name) was added as required without a default value, which existing \(old.name) records cannot have")
            }
            let newRelationships = Dictionary(new.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for relationship in old.relationships {
                guard let changed = newRelationships[relationship.name] else {
                    differences.append("relationship \(old.name).\(relationship.name) was removed")
                    continue
                }
                if changed != relationship {
                    differences.append("relationship \(old.name).\(relationship.name) changed (destination, inverse or to-many)")
                }
            }
        }
        return differences
    }
}
