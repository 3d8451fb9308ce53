// A context's save: life-cycle hooks, validation, the pending save, the
// commit, and what the context learns from it.

import Foundation

extension ObjectContext {
    // MARK: - Saving

    /// Validates every inserted and changed object, then writes all changes
    /// as one journal transaction. On any failure nothing is written and the
    /// context keeps its changes; every validation failure is in the error's
    /// ``LogStoreError/details``.
    ///
    /// A save is first prepared while other saves go on. When one of them
    /// changed its objects meanwhile and the ``mergePolicy`` resolves such
    /// conflicts, the save runs its hooks again, then is prepared, resolved
    /// and committed under the store's write lock once no other save is
    /// waiting to apply (Core Data resolves under its coordinator's lock),
    /// so it cannot lose the race again. Objects that the resolution
    /// changes then (the other sides of a relationship it sets back) are
    /// checked by the model's rules but not passed to `willSave` or
    /// `validateFor…` again; `awakeFromFetch` for objects fulfilled then
    /// runs after the lock is released, and value transformers run under
    /// it, so they must not use the store.
    public func save() throws(LogStoreError) {
        checkConfinement()
        guard hasChanges else { return }
        do {
            var hookProblems = try runSaveHooks()
            do {
                let save = try prepareSave(hookProblems: hookProblems)
                return try didSave(store.commit(save, checkingVersions: mergePolicy.checksVersions))
            } catch let conflict as SaveConflict {
                try resolve(conflict.conflicts, attempt: 1)
            }
            hookProblems = try runSaveHooks()
            var attempt = 1
            awakeningLater = []
            defer { awakeDeferred() }
            let result = try store.commit(checkingVersions: mergePolicy.checksVersions, preparedAlone: true) {
                try prepareSave(hookProblems: hookProblems)
            } resolve: { conflict in
                attempt += 1
                try self.resolve(conflict.conflicts, attempt: attempt)
            }
            didSave(result)
        } catch let error as LogStoreError {
            throw error
        } catch {
            throw LogStoreError(.io, "the save failed: \(error)")
        }
    }

    /// Calls `awakeFromFetch` on the objects fulfilled while the save was
    /// prepared under the store's write lock, now that it is released.
    private func awakeDeferred() {
        let objects = awakeningLater ?? []
        awakeningLater = nil
        for object in objects where !object.isFault && !object.isDeleted { object.awakeFromFetch() }
    }

    // MARK: - Life-cycle hooks

    /// How many passes of hooks a save runs, each over the objects the
    /// previous pass changed, before it gives up on hooks that never settle.
    static let hookPassLimit = 100

    /// Calls `willSave` and then `validateForInsert`, `validateForUpdate` or
    /// `validateForDelete` on every object the save writes, and again on
    /// every object those calls changed, inserted or deleted, until a pass
    /// changes nothing, so that what hooks do is saved with the rest.
    /// Returns the errors the validation hooks threw (each object's last).
    ///
    /// - Throws: `.validationFailed` when hooks still change objects after
    ///   ``hookPassLimit`` passes.
    private func runSaveHooks() throws(LogStoreError) -> [LogStoreError] {
        var errors: [ObjectIdentifier: LogStoreError] = [:]
        var order: [ObjectIdentifier] = []
        func callHooks(_ object: ManagedObject) {
            guard object.hasChanges else { return }
            object.willSave()
            do throws(LogStoreError) {
                if object.isDeleted {
                    try object.validateForDelete()
                } else if object.isInserted {
                    try object.validateForInsert()
                } else {
                    try object.validateForUpdate()
                }
                if !errors.isEmpty { errors[ObjectIdentifier(object)] = nil }
            } catch {
                if errors.updateValue(error, forKey: ObjectIdentifier(object)) == nil { order.append(ObjectIdentifier(object)) }
            }
        }
        var pending: [ManagedObject] = []
        var pass = 0
        repeat {
            pass += 1
            guard pass <= Self.hookPassLimit else {
                let names = Set(pending.map { $0.objectID.description }).sorted().prefix(10).joined(separator: ", ")
                throw LogStoreError(.validationFailed, "the save was refused, nothing was written: willSave or validation hooks still changed objects after \(Self.hookPassLimit) passes (\(names)); a hook that sets a value should set it only when it differs", entity: pending.first?.entity.name)
            }
            let insertedBefore = inserted.count
            changedByHooks = []
            isRunningSaveHooks = true
            if pass == 1 {
                // The lists themselves, not a copy: a bulk insert's million
                // objects are not gathered again.
                for object in inserted where !object.isDeleted { callHooks(object) }
                for object in changed where object.isUpdated { callHooks(object) }
                for object in deletedObjects.values { callHooks(object) }
            } else {
                for object in pending { callHooks(object) }
            }
            isRunningSaveHooks = false
            // The next pass: objects the hooks changed, inserted or deleted, once each.
            var seen = Set<ObjectIdentifier>()
            pending = (changedByHooks + inserted[insertedBefore...]).filter { seen.insert(ObjectIdentifier($0)).inserted }
            changedByHooks = []
        } while !pending.isEmpty
        return order.compactMap { errors[$0] }
    }

    // MARK: - Validation and the pending save

    /// Checks every inserted, changed and deleted object and turns the
    /// changes into slot changes, converting each value once. Throws one
    /// `.validationFailed` with every problem (`hookProblems`, those the
    /// validation hooks threw, among them), and then nothing is saved.
    private func prepareSave(hookProblems: [LogStoreError]) throws(LogStoreError) -> PendingSave {
        var problems = misuse.map(\.error) + hookProblems
        var changes: [SlotChange] = []
        // At most one change per object: a bulk insert's million changes
        // are then not copied again at every doubling.
        changes.reserveCapacity(inserted.count + changed.count + deletedObjects.count)
        var versions: [RecordKey: UInt64] = [:]
        var deletedLinks: [RecordKey: [(Int, StoredValue)]] = [:]
        for object in inserted where !object.isDeleted {
            let values = storedAttributes(of: object, problems: &problems)
            problems += ObjectValidation.problems(of: object, stored: values, context: self)
            let relationships = object.entity.relationships.indices.map { storedLink(of: object, index: $0) }
            let record = relationships.isEmpty ? values : values + relationships
            object.savingStored = record
            changes.append(.insert(entity: object.entity, key: object.recordKey, values: record))
        }
        // Set again below for each object this save writes, and only for those.
        for object in changed { object.savingStored = nil }
        for object in changed where object.isUpdated {
            let entity = object.entity
            let values = storedAttributes(of: object, problems: &problems)
            problems += ObjectValidation.problems(of: object, stored: values, context: self)
            // Under .overwrite every property is written, as this context holds it.
            let written = mergePolicy.writesWholeObjects ? Array(0..<(entity.attributes.count + entity.relationships.count)) : Array(object.changedSlots)
            let slots = written.compactMap { slot -> (Int, StoredValue)? in
                if slot < entity.attributes.count {
                    return entity.attributes[slot].isTransient ? nil : (slot, values[slot])
                }
                let index = slot - entity.attributes.count
                return entity.relationships[index].isStored ? (slot, storedLink(of: object, index: index)) : nil
            }
            // Only a derived side of a relationship changed: nothing to write,
            // and the record keeps its version.
            guard !slots.isEmpty else { continue }
            object.savingStored = Self.record(object, afterWriting: values, slots)
            changes.append(.update(entity: entity, key: object.recordKey, slots: slots))
            if let version = object.version { versions[RecordKey(entity: entity.index, key: object.recordKey)] = version }
        }
        // In entity and key order, so that the journal's order does not depend
        // on hashing; compared as numbers, since making two IDs for each of
        // the comparisons was a third of a large delete's save.
        for object in deletedObjects.values.sorted(by: { ($0.entity.index, $0.recordKey) < ($1.entity.index, $1.recordKey) }) {
            guard !object.isInserted else {
                // Never saved, so the commit never sees it: its deny rules are
                // checked here, against this context's links to it.
                problems += deniedDeletion(of: object)
                continue
            }
            let record = RecordKey(entity: object.entity.index, key: object.recordKey)
            changes.append(.delete(entity: object.entity, key: object.recordKey))
            if let version = object.version { versions[record] = version }
            let links = object.entity.relationships.indices.compactMap { index -> (Int, StoredValue)? in
                guard object.entity.relationships[index].isStored, index < object.links.count, object.links[index] != nil else { return nil }
                return (object.entity.attributes.count + index, storedLink(of: object, index: index))
            }
            if !links.isEmpty { deletedLinks[record] = links }
        }
        guard problems.isEmpty else { throw LogStoreError.saveRefused(problems) }
        return PendingSave(changes: changes, expectedVersions: versions, deletedLinks: deletedLinks)
    }

    /// The problems of deleting `object`, which was never saved, while its
    /// relationships under `deny` hold objects this save does not delete.
    /// (Saved records are checked by the commit, against the store.)
    private func deniedDeletion(of object: ManagedObject) -> [LogStoreError] {
        object.entity.relationships.enumerated().compactMap { index, relationship in
            guard relationship.definition.deleteRule == .deny else { return nil }
            let remaining = link(of: object, slot: object.entity.attributes.count + index).targets.filter { deletedObjects[$0] == nil }
            return remaining.isEmpty ? nil : .deleteDenied(object.objectID, relationship: relationship.name, referrers: remaining.sorted())
        }
    }

    /// The object's attribute values as saved: `.null` for a transient
    /// attribute, transformable values run through their transformer (one
    /// that fails goes into `problems`, and its slot is `.null`).
    private func storedAttributes(of object: ManagedObject, problems: inout [LogStoreError]) -> [StoredValue] {
        object.fulfill()
        let entity = object.entity
        guard !entity.savesStoredValuesAsTheyAre else { return object.stored }
        var values = object.stored
        for (index, attribute) in entity.attributes.enumerated() where index < values.count {
            if attribute.isTransient { values[index] = .null; continue }
            // A transformable value never read or written is still the stored one.
            guard case .transformable = attribute.type, let value = object.transformed[index] else { continue }
            guard let value else { values[index] = .null; continue }
            do throws(LogStoreError) {
                values[index] = try attribute.type.stored(value) ?? .null
            } catch {
                problems.append(LogStoreError(error.kind, "\(entity.name).\(attribute.name): \(error.message) (\(object.objectID))", entity: entity.name, attribute: attribute.name))
                values[index] = .null
            }
        }
        return values
    }

    /// A stored relationship's value (`.null` for a derived side).
    private func storedLink(of object: ManagedObject, index: Int) -> StoredValue {
        let relationship = object.entity.relationships[index]
        guard relationship.isStored else { return .null }
        let slot = object.entity.attributes.count + index
        // A reference names its destination entity (FORMAT.md §12.2): the
        // snapshot stores these bytes as they are.
        let destination = store.entitySymbols[object.entity.index].destinations[slot]!
        let targets = link(of: object, slot: slot).targets.map { RecordID(entity: destination, key: $0.key) }
        if relationship.isToMany { return .references(targets.sorted()) }
        return targets.first.map(StoredValue.reference) ?? .null
    }

    /// Takes in a committed save: the objects it wrote hold what it wrote,
    /// records the commit changed beyond them reload, and hooks run.
    private func didSave(_ result: CommitResult) {
        let changes = result.changes
        for object in deletedObjects.values {
            registered[object.objectID] = nil
        }
        for object in inserted where !object.isDeleted {
            object.life.saved()
            Self.markSaved(object, version: changes.sequence)
        }
        var updated: [ManagedObject] = []
        for object in changed where !object.isDeleted {
            if object.hasChanges { updated.append(object) }
            object.isTracked = false
            // An object whose changes were dropped (a refresh), or that wrote
            // nothing, keeps the version it has.
            Self.markSaved(object, version: object.savingStored == nil ? object.version : changes.sequence)
        }
        // What the commit changed beyond this context's own changes, before
        // the hooks run: what they change must not be reloaded away.
        reload(result.adjusted)
        // The lists move out before the hooks run: a hook that changes
        // objects starts the context's next save.
        let saved = (inserted: inserted, deleted: deletedObjects)
        inserted = []
        deletedObjects = [:]
        changed = []
        misuse = []
        for object in saved.deleted.values { object.didSave() }
        for object in saved.inserted where !object.isDeleted { object.didSave() }
        for object in updated { object.didSave() }
    }

    /// The record of `object` as a save that writes `attributes` and
    /// `slots` leaves it: its attributes, then its relationships as loaded
    /// with the written ones replaced.
    private static func record(_ object: ManagedObject, afterWriting attributes: [StoredValue], _ slots: [(Int, StoredValue)]) -> [StoredValue] {
        let count = object.entity.attributes.count
        guard object.committedStored.count > count else { return attributes }
        var relationships = Array(object.committedStored[count...])
        for (slot, value) in slots where slot >= count { relationships[slot - count] = value }
        return attributes + relationships
    }

    /// Makes what a save wrote the object's committed state.
    private static func markSaved(_ object: ManagedObject, version: UInt64?) {
        object.committedStored = object.savingStored ?? object.committedStored
        object.savingStored = nil
        // Derived sides load again from the store, which now holds this
        // save and any other that changed them since they were loaded.
        let entity = object.entity
        for index in object.links.indices where !entity.relationships[index].isStored { object.links[index] = nil }
        object.changedSlots = SlotSet()
        object.version = version
    }
}
