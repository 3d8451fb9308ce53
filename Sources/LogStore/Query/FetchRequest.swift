// What to fetch: Core Data's NSFetchRequest as a value.

import Foundation

/// A description of objects to fetch: an entity, a predicate, an order, a
/// window of the results, and how many to load at once. Run it with an
/// ``ObjectContext``: ``ObjectContext/fetch(_:)`` for objects,
/// ``ObjectContext/fetchIDs(_:)`` for IDs (to hand to another context),
/// ``ObjectContext/count(for:)``, or ``ObjectContext/fetchDictionaries(_:)``
/// for chosen values and aggregates.
///
/// ```swift
/// var request = FetchRequest(entityName: "Person")
/// request.predicate = try ObjectPredicate("(age >= 100) AND (age <= 200)")
/// request.sortDescriptors = [SortKey("lastName")]
/// request.fetchBatchSize = 20
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The entity to fetch.
    public var entityName: String
    /// Which objects; nil fetches every object of the entity.
    public var predicate: ObjectPredicate?
    /// The order, by the first key, then the next for ties. Without sort
    /// keys, results come in key order (saved objects by age, then those
    /// inserted in the context).
    public var sortDescriptors: [SortKey]
    /// At most this many results; 0 means no limit (Core Data's convention).
    public var fetchLimit: Int
    /// Skips this many results first.
    public var fetchOffset: Int
    /// Loads values for this many objects at once; objects past the first
    /// batch stay faults until touched. 0 loads every object's values.
    public var fetchBatchSize: Int
    /// Whether objects inserted, changed and deleted in the fetching context
    /// count as they are now (the default, as in Core Data), or as saved.
    public var includesPendingChanges: Bool
    /// For ``ObjectContext/fetchDictionaries(_:)``: the values of each
    /// result row, attributes and aggregates.
    public var propertiesToFetch: [FetchedValue]
    /// For ``ObjectContext/fetchDictionaries(_:)``: one row per distinct
    /// combination of these attributes' values.
    public var propertiesToGroupBy: [String]

    /// A request for objects of `entityName`; every other setting can also
    /// be changed afterwards.
    public init(
        entityName: String, predicate: ObjectPredicate? = nil, sortDescriptors: [SortKey] = [],
        fetchLimit: Int = 0, fetchOffset: Int = 0, fetchBatchSize: Int = 0
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.fetchBatchSize = fetchBatchSize
        includesPendingChanges = true
        propertiesToFetch = []
        propertiesToGroupBy = []
    }
}

/// One key of a fetch's order: Core Data's `NSSortDescriptor`.
///
/// Nil sorts before every value when ascending, as in Core Data. Strings
/// compare by their Unicode characters unless `options` fold case
/// (`.caseInsensitive`) or diacritics (`.diacriticInsensitive`).
public struct SortKey: Sendable, Hashable {
    /// An attribute, or a key path through to-one relationships (`assetType.label`).
    public var keyPath: String
    /// Smallest first (nil before everything) when true.
    public var ascending: Bool
    /// For strings: fold case and/or diacritics before comparing.
    public var options: ComparisonOptions

    /// Orders by `keyPath`, ascending unless told otherwise.
    public init(_ keyPath: String, ascending: Bool = true, options: ComparisonOptions = []) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.options = options
    }
}

/// A value in a dictionary result: an attribute, or an aggregate over the
/// rows of a group (Core Data's `NSExpressionDescription`).
public struct FetchedValue: Sendable, Hashable {
    /// The aggregates Core Data's fetch expressions offer.
    public enum Function: String, Sendable, Hashable {
        case count, sum, average = "avg", minimum = "min", maximum = "max"
    }

    /// The key of the value in each dictionary.
    public var name: String
    /// The attribute (or key path) the value is read from; nil for `count`.
    public var keyPath: String?
    /// The aggregate; nil for a plain attribute value.
    public var function: Function?

    /// An attribute's value, under its own name.
    public static func attribute(_ keyPath: String) -> FetchedValue {
        FetchedValue(name: keyPath, keyPath: keyPath, function: nil)
    }

    /// How many rows the group holds (`@count`).
    public static func count(as name: String = "count") -> FetchedValue {
        FetchedValue(name: name, keyPath: nil, function: .count)
    }

    /// An aggregate of `keyPath` over the rows of the group.
    public static func aggregate(_ function: Function, of keyPath: String, as name: String) -> FetchedValue {
        FetchedValue(name: name, keyPath: keyPath, function: function)
    }
}

/// How a fetch found its results, for tests and tuning
/// (``ObjectContext/explain(_:)``).
public struct FetchPlan: Sendable, Hashable, CustomStringConvertible {
    /// How the candidates were found.
    public enum Strategy: Sendable, Hashable {
        /// Every record of the entity was read.
        case fullScan
        /// The index of `attribute` gave the candidates (`==`, `IN`, a range).
        case indexLookup(attribute: String)
        /// The index of `attribute` was read in order until the limit was filled.
        case indexOrder(attribute: String)
        /// The store's links of `relationship` gave the candidates: the
        /// objects related to the given objects (`project == %@`,
        /// `project IN %@`, `ANY tags == %@`), or to the objects whose
        /// attribute matches (`project.name == "Home"`).
        case relationshipLookup(relationship: String)
    }

    /// How the candidates were found.
    public var strategy: Strategy
    /// Records the plan expected to read.
    public var estimatedRows: Int
    /// Records actually read from the committed state.
    public var examinedRows: Int
    /// Objects of the context with unsaved changes that were tested in memory.
    public var pendingObjects: Int
    /// Matching objects before the offset and limit.
    public var matchedRows: Int

    public var description: String {
        let how = switch strategy {
        case .fullScan: "full scan"
        case .indexLookup(let attribute): "index lookup on \(attribute)"
        case .indexOrder(let attribute): "index order on \(attribute)"
        case .relationshipLookup(let relationship): "relationship lookup on \(relationship)"
        }
        return "\(how): estimated \(estimatedRows) rows, examined \(examinedRows), \(pendingObjects) pending objects, \(matchedRows) matched"
    }
}
