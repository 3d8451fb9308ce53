// A context meeting other saves: conflicts resolved by the merge policy,
// what a commit changed beyond this context's own changes, other
// contexts' saves merged in, and objects refreshed from the store.

extension ObjectContext {
    // MARK: - Conflicts

    /// Resolves the conflicts of a refused save by the merge policy
    /// (``MergePolicy``), so that the save can be computed again, or throws
    /// `.mergeConflict` with one detail per conflicting object.
    func resolve(_ conflicts: [CommitConflict], attempt: Int) throws(LogStoreError) {
        let deletions = conflicts.contains { if case .changed = $0.reason { false } else { true } }
        guard mergePolicy.resolvesChanges, attempt <= Self.mergeAttemptLimit, !deletions || mergePolicy.acceptsDeletions else {
            throw conflictError(conflicts, gaveUp: attempt > Self.mergeAttemptLimit)
        }
        for conflict in conflicts {
            let id = store.id(conflict.record)
            switch conflict.reason {
            case .changed:
                guard let object = registered[id] else { continue }
                let record: Record
                switch store.lookup(id) {
                case .found(let found): record = found
                // Deleted since: the next attempt sees the delete.
                case .absent: continue
                case .unreadable(let failure): throw failure
                }
                if mergePolicy == .rollback {
                    revert(object, slots: Array(object.changedSlots), to: record)
                    discardChanges(object)
                } else if object.isDeleted {
                    // Store trump merges properties; a delete is not one: it stands.
                    object.version = record.version
                } else {
                    // Store trump: where both sides changed a property, the store's value.
                    revert(object, slots: changedInStore(object, record).filter(object.changedSlots.contains), to: record)
                    rebase(object)
                }
            case .deleted:
                if let object = registered[id] { forgetDeleted(object) }
            case .linkTarget(let source):
                if let object = registered[id] { forgetDeleted(object) }
                // The source may link to it without this context holding it.
                if let linking = registered[store.id(source)] { unlink(linking, from: id) }
            }
        }
    }

    /// Removes `target`, which another save deleted, from every stored
    /// relationship of `object` that holds it.
    private func unlink(_ object: ManagedObject, from target: ObjectID) {
        let entity = object.entity
        for (index, relationship) in entity.relationships.enumerated() where relationship.destination == target.entityName {
            let slot = entity.attributes.count + index
            guard link(of: object, slot: slot).targets.contains(target) else { continue }
            if relationship.isToMany {
                _ = changeMany(object, index: index) { $0.remove(target) != nil }
            } else {
                object.links[index] = .one(nil)
            }
            markChanged(object, slot: slot)
        }
    }

    /// How many times a save resolves conflicts and tries again before it
    /// gives up with `.mergeConflict`. Every attempt after the first is
    /// resolved under the store's write lock, where no other save can
    /// intervene, so this bounds only a resolution that does not settle.
    static let mergeAttemptLimit = 10

    /// The `.mergeConflict` error for `conflicts`, with one detail each.
    private func conflictError(_ conflicts: [CommitConflict], gaveUp: Bool) -> LogStoreError {
        let details = conflicts.map { conflict -> LogStoreError in
            let id = store.id(conflict.record)
            let object = registered[id]
            let record = store.record(id)
            let message = switch conflict.reason {
            case .changed(let expected, let stored): "\(id) was changed by another save (this context loaded version \(expected), the store has \(stored))"
            case .deleted: "\(id) was deleted by another save"
            case .linkTarget(let source): "\(id), which \(store.id(source)) links to, was deleted by another save"
            }
            var error = LogStoreError(.mergeConflict, message, entity: id.entityName)
            error.objectID = id
            let changedHere = object.map { object in object.changedSlots.sorted().map(object.slotName) } ?? []
            var changedInStore: [String] = []
            if let object, let record { changedInStore = self.changedInStore(object, record).sorted().map(object.slotName) }
            let loaded: UInt64? = if case .changed(let expected, _) = conflict.reason { expected } else { object?.version }
            error.conflict = MergeConflict(objectID: id, loadedVersion: loaded, storedVersion: record?.version, changedHere: changedHere, changedInStore: changedInStore)
            return error
        }
        let list = details.map { "- \($0.message)" }.joined(separator: "\n")
        let count = Set(conflicts.map(\.record)).count
        let advice = gaveUp
            ? "the merge policy had not settled them after resolving them \(Self.mergeAttemptLimit) times; refresh the objects and apply the change again"
            : "refresh the objects and apply the change again, or choose a merge policy (mergePolicy) that resolves it"
        return LogStoreError(.mergeConflict, "another save changed or deleted \(count == 1 ? "an object" : "\(count) objects") after this context loaded \(count == 1 ? "it" : "them"); nothing was saved; \(advice):\n\(list)", entity: details.first?.entity, details: details)
    }

    /// The slots of `object` whose stored values in `record` differ from
    /// the values this context loaded: what another save changed.
    private func changedInStore(_ object: ManagedObject, _ record: Record) -> [Int] {
        let entity = object.entity
        var slots: [Int] = []
        for slot in entity.attributes.indices where slot < object.committedStored.count && slot < record.values.count {
            if object.committedStored[slot] != record.values[slot] { slots.append(slot) }
        }
        for (index, relationship) in entity.relationships.enumerated() where relationship.isStored {
            let slot = entity.attributes.count + index
            guard slot < record.values.count, slot < object.committedStored.count else { continue }
            if Set(CommittedState.targets(object.committedStored[slot])) != Set(CommittedState.targets(record.values[slot])) { slots.append(slot) }
        }
        return slots
    }

    /// Gives up this context's changes of `slots` of `object` for the
    /// values in `record`: attributes reload with the object, stored
    /// relationships are set back through the relationship upkeep, so that
    /// the other sides this context holds follow.
    private func revert(_ object: ManagedObject, slots: [Int], to record: Record) {
        let entity = object.entity
        for slot in slots {
            if slot >= entity.attributes.count {
                let index = slot - entity.attributes.count
                let relationship = entity.relationships[index]
                if relationship.isStored, slot < record.values.count {
                    var targets: [ManagedObject] = []
                    for key in CommittedState.targets(record.values[slot]) {
                        if let target = try? self.object(with: store.id(relationship.destination, key)) { targets.append(target) }
                    }
                    let value: Any? = relationship.isToMany ? Set(targets) : targets.first
                    try? setRelationship(of: object, index: index, to: value)
                }
            } else {
                object.transformed[slot] = nil
            }
            object.changedSlots.remove(slot)
        }
    }

    /// Takes in that `object`'s record was deleted by another save: it is
    /// deleted here, and this context's objects stop linking to it.
    private func forgetDeleted(_ object: ManagedObject) {
        guard !object.isInserted else { return }
        for (index, relationship) in object.entity.relationships.enumerated() where index < object.links.count {
            for target in object.links[index]?.targets ?? [] {
                try? detach(object, fromInverseOf: relationship, target: target)
            }
        }
        object.changedSlots = SlotSet()
        object.life.delete()
        deletedObjects[object.objectID] = nil
        registered[object.objectID] = nil
    }

    /// Reloads objects whose records the commit changed beyond what this
    /// context wrote (delete rules reaching referrers it had not loaded,
    /// properties another save changed that this one did not write): those
    /// deleted go, the others become faults.
    func reload(_ records: [RecordKey]) {
        for record in records {
            let id = store.id(record)
            guard let object = registered[id] else { continue }
            // A record whose block failed to read is not deleted: the object
            // becomes a fault, which says why when it is read.
            if case .absent = store.lookup(id) {
                object.life.delete()
                registered[id] = nil
            } else {
                discardChanges(object)
            }
        }
    }

    // MARK: - Refreshing and merging

    /// Turns `object` back into a fault, dropping its unsaved changes when
    /// `mergeChanges` is false, so its next access reads the store.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        checkConfinement()
        guard !object.isInserted else { return }
        guard mergeChanges && object.hasChanges else { return discardChanges(object) }
        rebase(object)
    }

    /// Makes `object` a fault that keeps its unsaved changes: its next
    /// access loads every other property, and the record's version, from
    /// the store (Core Data's `refresh(_:mergeChanges: true)`).
    func rebase(_ object: ManagedObject) {
        guard !object.isInserted, !object.isDeleted else { return }
        // Loading keeps the changed slots' values and links (fulfill(_:from:)).
        object.life.refault()
    }

    /// Applies what another context saved: objects it deleted go away here,
    /// objects it changed are refreshed (unless they have unsaved changes
    /// here), and so are the objects whose derived side of a relationship
    /// it changed. Costs time in proportion to what the save changed, not
    /// to what this context holds.
    public func mergeChanges(from changes: StoreChanges) {
        merge(deleted: changes.deleted, changed: changes.updated + changes.inserted, relinked: changes.relinked)
    }

    /// Applies what a batch request did, as ``mergeChanges(from:)-(StoreChanges)``
    /// applies a save: objects of deleted records go away here, objects of
    /// changed records are refreshed unless they have unsaved changes. The
    /// records are read from the result's runs of keys one by one: no
    /// list of every ID is made. (The inserted records are new: no context
    /// holds an object of them.)
    public func mergeChanges(from result: BatchResult) {
        merge(deleted: result.ids(result.deleted), changed: result.ids(result.updated), relinked: result.relinked.records)
    }

    private func merge(deleted: some Sequence<ObjectID>, changed: some Sequence<ObjectID>, relinked: some Sequence<RecordKey>) {
        checkConfinement()
        for id in deleted {
            guard let object = registered[id], !object.isInserted else { continue }
            registered[id] = nil
            deletedObjects[id] = nil
            object.life.delete()
        }
        for id in changed {
            guard let object = registered[id], !object.hasChanges else { continue }
            discardChanges(object)
        }
        for record in relinked {
            guard let object = registered[store.id(record)], !object.isInserted else { continue }
            if !object.hasChanges { discardChanges(object); continue }
            // Keep what this context changed; load the other links again.
            let entity = object.entity
            for index in object.links.indices where !entity.relationships[index].isStored && !object.changedSlots.contains(entity.attributes.count + index) {
                object.links[index] = nil
            }
        }
    }

}
