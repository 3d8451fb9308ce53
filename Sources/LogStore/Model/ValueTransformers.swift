// Value transformers: the app's types turned into Data and back, registered by name.

import Foundation

/// Turns values of an app's type into `Data` for storage, and back.
///
/// Core Data's transformable attributes name an `NSValueTransformer`; LogStore's
/// name a `StoreValueTransformer` registered with ``ValueTransformers/register(_:named:)``
/// before the store opens. Throw ``LogStoreError`` with kind `.wrongType`
/// for a value of the wrong type; the save reports it with entity and key.
public protocol StoreValueTransformer: Sendable {
    /// `value` as bytes.
    func transformedValue(_ value: Any) throws(LogStoreError) -> Data
    /// The value `data` was made from.
    func reverseTransformedValue(_ data: Data) throws(LogStoreError) -> Any
}

/// The registry of value transformers, by name (process-wide, like Foundation's).
public enum ValueTransformers {
    private static let registry = Protected<[String: any StoreValueTransformer]>([:])

    /// Registers `transformer` under `name`, replacing any registered before.
    public static func register(_ transformer: any StoreValueTransformer, named name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer registered under `name`.
    public static func transformer(named name: String) throws(LogStoreError) -> any StoreValueTransformer {
        guard let transformer = registry.withLock({ $0[name] }) else {
            throw LogStoreError(.transformerFailed, "no value transformer is registered under the name \"\(name)\"; call ValueTransformers.register(_:named:) before opening the store")
        }
        return transformer
    }

    static func isRegistered(_ name: String) -> Bool { registry.withLock { $0[name] != nil } }
}

/// A ready-made transformer for any `Codable` type: JSON, with sorted keys so
/// that equal values make equal bytes (fetches compare transformed data).
public struct CodableTransformer<Value: Codable & Sendable>: StoreValueTransformer {
    public init() {}

    public func transformedValue(_ value: Any) throws(LogStoreError) -> Data {
        guard let value = value as? Value else {
            throw LogStoreError(.wrongType, "CodableTransformer<\(Value.self)> was given a \(type(of: value)); give it a \(Value.self)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do { return try encoder.encode(value) } catch {
            throw LogStoreError(.transformerFailed, "CodableTransformer<\(Value.self)> could not encode a value: \(error)")
        }
    }

    public func reverseTransformedValue(_ data: Data) throws(LogStoreError) -> Any {
        do { return try JSONDecoder().decode(Value.self, from: data) } catch {
            throw LogStoreError(.transformerFailed, "CodableTransformer<\(Value.self)> could not decode \(data.count) stored bytes: \(error)")
        }
    }
}
