// The model a store file records, rebuilt for tools that lack the app's code.

import Foundation

extension AttributeType {
    /// The type a recorded model names (the inverse of ``description``).
    init?(recordedName name: String) {
        let plain: [String: AttributeType] = [
            "String": .string, "Bool": .bool, "Int16": .int16, "Int32": .int32, "Int64": .int64, "Double": .double,
            "Float": .float, "Date": .date, "Data": .data, "UUID": .uuid, "URL": .url, "Decimal": .decimal,
        ]
        if let type = plain[name] {
            self = type
        } else if name.hasPrefix("transformable("), name.hasSuffix(")") {
            self = .transformable(String(name.dropFirst("transformable(".count).dropLast()))
        } else {
            return nil
        }
    }

    /// Dates to the millisecond, in UTC.
    private static var dateFormat: ISO8601DateFormatter {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format
    }

    /// A default value as the stored model writes it: text that
    /// ``recordedValue(_:)`` reads back exactly.
    func recordedText(of value: Any) -> String {
        switch (self, value) {
        case (.date, let date as Date): Self.dateFormat.string(from: date)
        case (.data, let data as Data): data.base64EncodedString()
        case (.url, let url as URL): url.absoluteString
        default: "\(value)"
        }
    }

    /// The value `text` (made by ``recordedText(of:)``) stands for, nil when it does not parse.
    func recordedValue(_ text: String) -> (any Sendable)? {
        switch self {
        case .string: text
        case .bool: Bool(text)
        case .int16: Int16(text)
        case .int32: Int32(text)
        case .int64: Int64(text)
        case .double: Double(text)
        case .float: Float(text)
        case .date: Self.dateFormat.date(from: text)
        case .data: Data(base64Encoded: text)
        case .uuid: UUID(uuidString: text)
        case .url: URL(string: text)
        case .decimal: Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        case .transformable: nil
        }
    }
}

extension Model {
    /// The model `schema` records: every entity's objects are plain
    /// ``ManagedObject``s, and a transformable attribute reads as the `Data`
    /// its transformer made (transformers are the app's code). Validation
    /// rules, derived attributes and fetched properties are the app's code
    /// too, and are left out.
    convenience init(recorded schema: StoredSchema, path: String) throws(LogStoreError) {
        var entities: [Entity] = []
        for recorded in schema.entities {
            var entity = Entity(recorded.name)
            for attribute in recorded.attributes {
                guard let type = AttributeType(recordedName: attribute.type) else {
                    throw LogStoreError(.corruptFrame, "the model recorded in \(path) gives \(recorded.name).\(attribute.name) the type \"\(attribute.type)\", which this LogStore does not know; open it with a newer LogStore", path: path, entity: recorded.name, attribute: attribute.name)
                }
                let readType: AttributeType = if case .transformable = type { .data } else { type }
                entity.attributes.append(Attribute(
                    attribute.name, readType, optional: attribute.optional,
                    default: attribute.defaultValue.flatMap(readType.recordedValue), indexed: attribute.indexed ?? false))
            }
            entity.relationships = recorded.relationships.map {
                Relationship(
                    $0.name, to: $0.destination, inverse: $0.inverse, toMany: $0.toMany, deleteRule: $0.deleteRule ?? .nullify,
                    optional: $0.optional ?? true, minimumCount: $0.minimumCount, maximumCount: $0.maximumCount)
            }
            entities.append(entity)
        }
        try self.init(entities: entities, recorded: schema)
    }
}
