// Relationships: to-one and to-many links with inverses and delete rules.

/// What deleting an object does to the objects it points to.
public enum DeleteRule: String, Sendable, Hashable, Codable {
    /// Remove the deleted object from each target's inverse (the default).
    case nullify
    /// Delete the targets too.
    case cascade
    /// Refuse the save while any target remains.
    case deny
    /// Do nothing: targets keep pointing at the deleted object. The app
    /// must fix the inverse itself, as in Core Data.
    case noAction
}

/// A relationship from one entity to another, with the inverse on the other
/// side that LogStore keeps consistent.
///
/// ```swift
/// Relationship("assetType", to: "AssetType", inverse: "items")
/// Relationship("powers", to: "Power", inverse: "hero", toMany: true, deleteRule: .cascade)
/// ```
public struct Relationship: Sendable, Hashable {
    public var name: String
    public var destination: String
    public var inverse: String
    public var isToMany: Bool
    public var deleteRule: DeleteRule
    /// For to-one: whether nil is valid at save time.
    public var isOptional: Bool
    /// For to-many: the fewest and most objects valid at save time.
    public var minimumCount: Int?
    public var maximumCount: Int?

    public init(
        _ name: String, to destination: String, inverse: String, toMany: Bool = false,
        deleteRule: DeleteRule = .nullify, optional: Bool = true, minimumCount: Int? = nil, maximumCount: Int? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = toMany
        self.deleteRule = deleteRule
        self.isOptional = optional
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
    }
}
