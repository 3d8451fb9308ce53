// Batch requests: inserts, updates and deletes that the store carries out
// on records directly, without loading objects into a context.

import Foundation

/// Deletes every record of an entity that matches a predicate, without
/// loading objects: Core Data's `NSBatchDeleteRequest`, SwiftData's
/// `delete(model:where:)`, GRDB's `deleteAll`.
///
/// The records are chosen and deleted in one transaction, under the
/// store's write lock, so no save lands between the choice and the delete.
/// Unlike Core Data's batch delete, the relationships' delete rules apply
/// as they do to a context's save (`cascade` deletes further records,
/// `nullify` unlinks referrers, `deny` refuses the request with nothing
/// written): a batch request never leaves a reference to a record that is
/// gone.
///
/// ```swift
/// let result = try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("valueInDollars < 10")))
/// context.mergeChanges(from: result)
/// ```
public struct BatchDeleteRequest: Sendable {
    /// The entity whose records are deleted.
    public var entityName: String
    /// Which records; nil deletes every record of the entity.
    public var predicate: ObjectPredicate?

    public init(entityName: String, predicate: ObjectPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }
}

/// Sets attributes of every record of an entity that matches a predicate,
/// without loading objects: Core Data's `NSBatchUpdateRequest` with
/// `propertiesToUpdate`, GRDB's `updateAll`.
///
/// The records are chosen and changed in one transaction, under the
/// store's write lock. Values are checked as a context's save checks them:
/// a value of the wrong type is `.wrongType`, a value that breaks the
/// model's rules is `.validationFailed`, and then nothing is written.
/// Only attributes can be set; relationships change through a context.
public struct BatchUpdateRequest: Sendable {
    /// The entity whose records change.
    public var entityName: String
    /// Which records; nil changes every record of the entity.
    public var predicate: ObjectPredicate?
    /// The new value of each attribute named, nil for none.
    public var propertiesToUpdate: [String: (any Sendable)?]

    public init(entityName: String, predicate: ObjectPredicate? = nil, propertiesToUpdate: [String: (any Sendable)?]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }
}

/// Inserts records from values, without making objects: Core Data's
/// `NSBatchInsertRequest`, GRDB's prepared inserts in one transaction.
///
/// The values are read from `objects` as they are needed, so an import of
/// any size holds only one transaction's records at a time: each
/// `recordsPerTransaction` records become one journal transaction, checked
/// and written before the next are read. A request that fails part way
/// (a value of the wrong type, a broken rule, a full disk) keeps the
/// transactions written before it; its error says how many records they
/// hold. Attributes missing from a dictionary take their default value.
/// Only attributes can be set; relationships change through a context.
public struct BatchInsertRequest {
    /// The entity of the new records.
    public var entityName: String
    /// How many records each journal transaction holds.
    public var recordsPerTransaction: Int
    /// The values of each new record by attribute name, read once.
    var objects: AnyIterator<[String: Any?]>

    /// A request inserting one record per dictionary of `objects`, read
    /// in order and once: running the request again inserts nothing more.
    public init(entityName: String, objects: some Sequence<[String: Any?]>, recordsPerTransaction: Int = 10_000) {
        self.entityName = entityName
        self.objects = AnyIterator(objects.makeIterator())
        self.recordsPerTransaction = recordsPerTransaction
    }
}

/// What a batch request did: the records it inserted, updated and deleted,
/// including what the delete rules changed, and the journal transactions it
/// wrote. Hand it to ``ObjectContext/mergeChanges(from:)-(BatchResult)`` so
/// a context drops and refreshes its objects; every store observer also
/// receives each transaction's ``StoreChanges`` as for any save.
///
/// It holds runs of consecutive keys, so that the result of a batch over
/// millions of records costs memory per run, not per record; the IDs are
/// made when asked for.
public struct BatchResult: Sendable {
    /// How many records the request itself matched or inserted (the delete
    /// rules' changes beside it are in the IDs).
    public internal(set) var count = 0
    /// The journal sequence number of each transaction written, in order;
    /// empty when the request changed nothing.
    public internal(set) var sequences: [UInt64] = []
    private let storeID: UUID
    private let entities: [EntityDescription]
    private(set) var inserted = KeyRuns()
    private(set) var updated = KeyRuns()
    private(set) var deleted = KeyRuns()
    /// Records whose derived side of a relationship changed.
    private(set) var relinked = KeyRuns()

    init(storeID: UUID, entities: [EntityDescription]) {
        self.storeID = storeID
        self.entities = entities
    }

    /// The IDs of the records inserted.
    public var insertedIDs: [ObjectID] { Array(ids(inserted)) }
    /// The IDs of the records updated: by the request, and by `nullify`
    /// delete rules.
    public var updatedIDs: [ObjectID] { Array(ids(updated)) }
    /// The IDs of the records deleted: by the request, and by `cascade`
    /// delete rules.
    public var deletedIDs: [ObjectID] { Array(ids(deleted)) }

    /// The IDs of `runs`, made one at a time as they are read.
    func ids(_ runs: KeyRuns) -> some Sequence<ObjectID> {
        runs.runs.lazy.flatMap { [storeID, entities] run in run.keys.lazy.map { ObjectID(storeID: storeID, entity: entities[run.entity], key: $0) } }
    }

    /// Takes in one transaction the request wrote.
    mutating func add(_ changes: StoreChanges) {
        // A commit with nothing to write wrote no transaction.
        guard !changes.changes.isEmpty else { return }
        sequences.append(changes.sequence)
        for change in changes.changes {
            let record = RecordKey(entity: change.entity.index, key: change.key)
            switch change {
            case .insert: inserted.append(record)
            case .update: updated.append(record)
            case .delete: deleted.append(record)
            }
        }
        for record in changes.relinked { relinked.append(record) }
    }
}

/// Records as runs of consecutive keys of one entity, in the order added.
struct KeyRuns: Sendable {
    struct Run: Sendable {
        var entity: Int
        var keys: ClosedRange<UInt64>
    }

    private(set) var runs: [Run] = []

    /// Adds `record`, extending the last run when it is the next key.
    mutating func append(_ record: RecordKey) {
        if let last = runs.last, last.entity == record.entity, last.keys.upperBound < UInt64.max, last.keys.upperBound + 1 == record.key {
            runs[runs.count - 1].keys = last.keys.lowerBound...record.key
        } else {
            runs.append(Run(entity: record.entity, keys: record.key...record.key))
        }
    }

    /// Every record, in the order added, made as it is read.
    var records: some Sequence<RecordKey> {
        runs.lazy.flatMap { run in run.keys.lazy.map { RecordKey(entity: run.entity, key: $0) } }
    }
}
