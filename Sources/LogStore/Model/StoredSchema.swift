// The model as the store file keeps it, and the lightweight-migration check.

import Foundation

/// The stored parts of a model, written into the store file as JSON in the
/// reserved `__Schema` record (FORMAT.md §5.4), so that a store can be
/// checked against the app's model and inspected without the app's code.
///
/// Its JSON form is the one `logstore-tool schema --json` prints. Types are
/// named as ``AttributeType/description`` names them. Fields marked
/// "not recorded before" are nil in files written by earlier versions.
public struct StoredSchema: Codable, Hashable, Sendable {
    // Fields added after format version 1 are optional, so that models
    // recorded before them still decode (absent means "not recorded").
    /// A stored attribute (transient ones are not recorded).
    public struct AttributeSchema: Codable, Hashable, Sendable {
        public internal(set) var name: String
        /// `String`, `Int32`, …, `transformable(NAME)`.
        public internal(set) var type: String
        public internal(set) var optional: Bool
        public internal(set) var hasDefault: Bool
        /// Whether fetches keep an index on it (not recorded before format version 2).
        public internal(set) var indexed: Bool?
        /// The default value as text: dates in ISO 8601, data in base64
        /// (not recorded before format version 2).
        public internal(set) var defaultValue: String?
        /// The validation rules, as people read them (not recorded before format version 2).
        public internal(set) var rules: [String]?
    }

    /// A relationship, recorded on both of its sides.
    public struct RelationshipSchema: Codable, Hashable, Sendable {
        public internal(set) var name: String
        public internal(set) var destination: String
        public internal(set) var inverse: String
        public internal(set) var toMany: Bool
        /// Not recorded before format version 2.
        public internal(set) var deleteRule: DeleteRule?
        /// For to-one: whether nil is valid (not recorded before format version 2).
        public internal(set) var optional: Bool?
        public internal(set) var minimumCount: Int?
        public internal(set) var maximumCount: Int?

        /// What a lightweight migration may not change.
        var shape: [String] { [destination, inverse, toMany ? "to-many" : "to-one"] }
    }

    /// An entity with its stored properties, in the model's order.
    public struct EntitySchema: Codable, Hashable, Sendable {
        public internal(set) var name: String
        public internal(set) var attributes: [AttributeSchema]
        public internal(set) var relationships: [RelationshipSchema]
    }

    /// The entities, in the model's order.
    public internal(set) var entities: [EntitySchema]

    init(entities: [EntitySchema]) { self.entities = entities }

    init(_ model: Model) {
        entities = model.entities.map { entity in
            EntitySchema(
                name: entity.name,
                attributes: entity.attributes.filter { !$0.isTransient }.map {
                    AttributeSchema(
                        name: $0.name, type: $0.type.description, optional: $0.isOptional, hasDefault: $0.defaultValue != nil,
                        indexed: $0.isIndexed, defaultValue: $0.defaultValue.map($0.type.recordedText(of:)), rules: $0.rules.isEmpty ? nil : $0.rules.map(\.description))
                },
                relationships: entity.relationships.map {
                    let definition = $0.definition
                    return RelationshipSchema(
                        name: $0.name, destination: $0.destination, inverse: definition.inverse, toMany: $0.isToMany,
                        deleteRule: definition.deleteRule, optional: definition.isOptional,
                        minimumCount: definition.minimumCount, maximumCount: definition.maximumCount)
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
                if changed.shape != relationship.shape {
                    differences.append("relationship \(old.name).\(relationship.name) changed (destination, inverse or to-many)")
                }
            }
        }
        return differences
    }
}
