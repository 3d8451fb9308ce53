// Random items for the query-plan checks: saved over several commits (so
// that indexes hold stale generations), sometimes compacted and reopened
// (so that an index is read from a snapshot and later saves sit in its
// unsorted tail), and sometimes left with unsaved inserts, updates and
// deletes in the context that fetches.

import Foundation
import LogStore

/// The store a case queries, and the objects a fetch of every item should
/// find: the saved ones and the context's unsaved inserts, less its
/// unsaved deletes.
public struct QueryData {
    public let store: Store
    /// The context holding the unsaved changes; fetches run in it.
    public let context: ObjectContext
    /// Every live item, in the context.
    public let objects: [ManagedObject]
    /// Whether the context has unsaved changes.
    public let hasPendingChanges: Bool
    /// The saved items: what a fetch that leaves out unsaved changes
    /// should find.
    public let savedIDs: [ObjectID]
    /// What was done, for failure messages: saves, compaction, pending changes.
    public let history: [String]
}

/// Makes a ``QueryData`` from choices.
struct QueryDataGenerator {
    var choices: Choices
    /// At most this many items are saved before any unsaved change.
    let maximumItems: Int
    /// Whether a store may now and then hold over a thousand items.
    let largeStores: Bool

    mutating func make(at path: String) throws -> QueryData {
        let options = JournalOptions(durability: .deferredToOS, compaction: .manual)
        var store = try Store(path: path, model: QueryPlanModel.model, options: options)
        var context = store.newContext()
        var live: [ManagedObject] = []
        var history: [String] = []
        let total = choices.next(maximumItems + 1)
        let saves = 1 + choices.next(3)
        for save in 0..<saves {
            let batch = save == saves - 1 ? total - live.count : choices.next(total - live.count + 1)
            for _ in 0..<batch { live.append(try insert(context, among: live)) }
            if save > 0 { try change(context, &live, updates: choices.next(4), deletes: choices.next(2)) }
            try context.save()
            history.append("saved \(live.count) items")
        }
        if choices.chance(50) {
            // Indexes come back from the snapshot as sorted runs; later
            // saves go to their unsorted tail.
            _ = try store.compact()
            let ids = live.map(\.objectID)
            store.close()
            store = try Store(path: path, model: QueryPlanModel.model, options: options)
            context = store.newContext()
            live = try ids.map { id throws(LogStoreError) in try context.object(with: id) }
            history.append("compacted and reopened")
            if choices.chance(50) {
                for _ in 0..<choices.next(4) { live.append(try insert(context, among: live)) }
                try change(context, &live, updates: choices.next(4), deletes: choices.next(2))
                try context.save()
                history.append("saved \(live.count) items after compaction")
            }
        }
        if largeStores && choices.chance(3) {
            // Enough saved at once that each index merges its unsorted
            // tail into the sorted entries.
            for _ in 0..<1100 { live.append(try insert(context, among: live)) }
            try context.save()
            history.append("saved \(live.count) items at once")
        }
        let savedIDs = live.map(\.objectID)
        let pending = choices.chance(60)
        if pending {
            let inserts = choices.next(4)
            for _ in 0..<inserts { live.append(try insert(context, among: live)) }
            let (updates, deletes) = (choices.next(5), choices.next(3))
            try change(context, &live, updates: updates, deletes: deletes)
            history.append("unsaved: \(inserts) inserts, \(updates) updates, \(deletes) deletes")
        }
        return QueryData(store: store, context: context, objects: live, hasPendingChanges: pending && context.hasChanges, savedIDs: savedIDs, history: history)
    }

    /// A new item with random values and, often, a parent among `others`.
    private mutating func insert(_ context: ObjectContext, among others: [ManagedObject]) throws -> ManagedObject {
        let item = try context.insert(QueryPlanModel.entity)
        for kind in ValueKind.allCases {
            let value = randomValue(kind)
            try item.setValue(value, forKey: kind.indexed)
            // Twins often hold the same value, so that comparing them, or
            // the same predicate on either, finds equals.
            try item.setValue(choices.chance(50) ? value : randomValue(kind), forKey: kind.plain)
        }
        if !others.isEmpty, choices.chance(60) { try item.setValue(choices.pick(others), forKey: "parent") }
        return item
    }

    /// Changes a few values (or parents) of random items, and deletes a few.
    private mutating func change(_ context: ObjectContext, _ live: inout [ManagedObject], updates: Int, deletes: Int) throws {
        guard !live.isEmpty else { return }
        for _ in 0..<updates {
            let item = choices.pick(live)
            if choices.chance(25) {
                try item.setValue(choices.chance(70) ? choices.pick(live) : nil, forKey: "parent")
            } else {
                let kind = choices.pick(ValueKind.allCases)
                try item.setValue(randomValue(kind), forKey: choices.chance(50) ? kind.indexed : kind.plain)
            }
        }
        for _ in 0..<deletes where !live.isEmpty {
            try context.delete(live.remove(at: choices.next(live.count)))
        }
    }

    private mutating func randomValue(_ kind: ValueKind) -> (any Sendable)? {
        choices.chance(80) ? kind.value(choices.next(kind.count)) : nil
    }
}
