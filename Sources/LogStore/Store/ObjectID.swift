// Object IDs: the only thing that crosses from one context to another.

import Foundation

/// The permanent identity of an object: its store, entity and key.
///
/// IDs are `Sendable` values: hand them between contexts and threads, and
/// turn them into a context's own objects with ``ObjectContext/object(with:)``.
/// Keys are assigned when an object is inserted and never reused, so an ID
/// is permanent from the start (Core Data's temporary IDs do not exist here).
///
/// The URI form `logstore://STORE-UUID/Entity/pKEY` round-trips through a string.
public struct ObjectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let storeID: UUID
    public let entityName: String
    public let key: UInt64
    /// `entityName.hashValue`, computed once: hashing an ID then costs two
    /// integers, not a string (bulk saves hash IDs millions of times).
    private let entityHash: Int
    /// The entity's position in the model of the store that made this ID,
    /// or -1 (an ID parsed from a URI); a shortcut that equality ignores.
    let entityIndex: Int

    init(storeID: UUID, entityName: String, key: UInt64, entityHash: Int? = nil, entityIndex: Int = -1) {
        self.storeID = storeID
        self.entityName = entityName
        self.key = key
        self.entityHash = entityHash ?? entityName.hashValue
        self.entityIndex = entityIndex
    }

    /// The ID of the record with `key` of `entity`, in the store `storeID`.
    init(storeID: UUID, entity: EntityDescription, key: UInt64) {
        self.init(storeID: storeID, entityName: entity.name, key: key, entityHash: entity.nameHash, entityIndex: entity.index)
    }

    /// The ID of the object with `key` of the entity `entityName` in the
    /// store `storeID`. Like an ID parsed from a URI, it may name an object
    /// that does not exist: ``ObjectContext/existingObject(with:)`` says.
    public init(storeID: UUID, entityName: String, key: UInt64) {
        self.init(storeID: storeID, entityName: entityName, key: key, entityHash: nil)
    }

    /// `logstore://STORE-UUID/Entity/pKEY`.
    public var uriRepresentation: URL { URL(string: uriString)! }

    /// ``uriRepresentation`` as a string, made without a `URL`: tools that
    /// print millions of IDs need it fast.
    public var uriString: String {
        // Entity names are identifier-like; percent-encode anything else.
        let plain = entityName.utf8.allSatisfy { $0 < 0x80 && ($0 == UInt8(ascii: "_") || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))) }
        let entity = plain ? entityName : entityName.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? entityName
        return "logstore://" + storeID.uuidString + "/" + entity + "/p" + String(key)
    }

    /// Parses a URI made by ``uriRepresentation``; nil for anything else.
    public init?(uriRepresentation uri: URL) {
        guard uri.scheme == "logstore", let host = uri.host, let storeID = UUID(uuidString: host) else { return nil }
        let parts = uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[1].first == "p", let key = UInt64(parts[1].dropFirst()),
              let entity = String(parts[0]).removingPercentEncoding, !entity.isEmpty else { return nil }
        self.init(storeID: storeID, entityName: entity, key: key)
    }

    /// Orders by store, then entity name, then key. Stores compare by
    /// their UUID bytes; IDs of one store, the usual case, never look at them.
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        if lhs.storeID != rhs.storeID {
            return withUnsafeBytes(of: lhs.storeID.uuid) { left in
                withUnsafeBytes(of: rhs.storeID.uuid) { right in left.lexicographicallyPrecedes(right) }
            }
        }
        if lhs.entityName != rhs.entityName { return lhs.entityName < rhs.entityName }
        return lhs.key < rhs.key
    }

    public var description: String { "\(entityName)/p\(key)" }

    /// Hashes the key and entity only: IDs in one table almost always share
    /// a store, and hashing its UUID on every lookup would cost more than
    /// the rare collision between stores.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(entityHash)
    }

    /// Where an ``IdentityMap`` places this ID: the entity and the key
    /// but its low 3 bits spread over the high bits (Fibonacci hashing),
    /// which pick a run of eight slots, and those 3 bits as they are, which
    /// pick the slot in the run. Keys are handed out in order, so a bulk
    /// insert fills a run at a time rather than a cache line per object.
    var runHash: UInt64 { Self.runHash(key: key, entityHash: entityHash) }

    /// ``runHash`` of an ID with `key` and `entityHash`, without making it.
    static func runHash(key: UInt64, entityHash: Int) -> UInt64 {
        ((key >> 3) ^ UInt64(bitPattern: Int64(entityHash))) &* 0x9E37_79B9_7F4A_7C15 & ~7 | key & 7
    }

    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.key == rhs.key && lhs.entityHash == rhs.entityHash && lhs.entityName == rhs.entityName && lhs.storeID == rhs.storeID
    }
}
