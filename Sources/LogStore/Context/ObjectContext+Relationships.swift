// A context's relationships: loading links, and keeping both sides of
// each relationship consistent as the app changes one.

extension ObjectContext {
    /// The current link of relationship `slot`, loading it from the store
    /// (stored side from the record, the other side from the store's index).
    func link(of object: ManagedObject, slot: Int) -> Link {
        object.fulfill()
        let entity = object.entity
        let index = slot - entity.attributes.count
        if let link = object.links[index] { return link }
        let relationship = entity.relationships[index]
        let loaded = committedLink(of: object, relationship: relationship, slot: slot)
        object.links[index] = loaded
        return loaded
    }

    private func committedLink(of object: ManagedObject, relationship: ResolvedRelationship, slot: Int) -> Link {
        var ids: [ObjectID] = []
        if relationship.isStored {
            let targets: StoredValue? = switch store.lookup(object.objectID) {
            case .found(let record): record.values[slot]
            case .absent: nil
            // The record is there but cannot be read now: the link as the
            // object loaded it, never an empty one that a save would write
            // back over the stored targets.
            case .unreadable: slot < object.committedStored.count ? object.committedStored[slot] : nil
            }
            ids = targets.map { CommittedState.targets($0).map { store.id(relationship.destination, $0) } } ?? []
        } else if let destination = store.model.entitiesByName[relationship.destination] {
            let inverseSlot = destination.attributes.count + relationship.inverseIndex
            ids = store.pointers(from: destination.name, slot: inverseSlot, to: object.recordKey).sorted().map { store.id(destination.name, $0) }
        }
        // An object deleted in this context whose delete rule unlinks this
        // one (nullify, cascade) is gone from it, as it is from the objects
        // loaded before the delete; under deny and no action the link stays.
        if !deletedObjects.isEmpty, let destination = store.model.entitiesByName[relationship.destination] {
            let rule = destination.relationships[relationship.inverseIndex].definition.deleteRule
            if rule == .nullify || rule == .cascade { ids = ids.filter { deletedObjects[$0] == nil } }
        }
        return relationship.isToMany ? .many(Set(ids)) : .one(ids.first)
    }

    func setRelationship(of object: ManagedObject, index: Int, to value: Any?) throws(LogStoreError) {
        let relationship = object.entity.relationships[index]
        try checkNotDeleted(object, relationship)
        if relationship.isToMany {
            guard let value else {
                try setMany(of: object, index: index, to: [])
                return
            }
            guard let set = Self.objectSet(value) else {
                throw LogStoreError(.wrongType, "\(object.entity.name).\(relationship.name) is to-many: give it a Set of \(relationship.destination) objects, not a \(type(of: value))", entity: object.entity.name, attribute: relationship.name)
            }
            try setMany(of: object, index: index, to: set)
        } else {
            let target = try related(value, for: object, relationship)
            try setOne(of: object, index: index, to: target)
        }
    }

    func addToMany(of object: ManagedObject, key: String, _ target: ManagedObject) throws(LogStoreError) {
        guard case .relationship(let index) = try object.property(key), object.entity.relationships[index].isToMany else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(key) is not a to-many relationship", entity: object.entity.name, attribute: key)
        }
        let relationship = object.entity.relationships[index]
        try checkNotDeleted(object, relationship)
        guard let checked = try related(target, for: object, relationship) else { return }
        let slot = object.entity.attributes.count + index
        _ = link(of: object, slot: slot)
        guard changeMany(object, index: index, { $0.insert(checked.objectID).inserted }) else { return }
        markChanged(object, slot: slot)
        try attach(object, toInverseOf: relationship, target: checked)
    }

    func removeFromMany(of object: ManagedObject, key: String, _ target: ManagedObject) throws(LogStoreError) {
        guard case .relationship(let index) = try object.property(key), object.entity.relationships[index].isToMany else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(key) is not a to-many relationship", entity: object.entity.name, attribute: key)
        }
        let slot = object.entity.attributes.count + index
        _ = link(of: object, slot: slot)
        guard changeMany(object, index: index, { $0.remove(target.objectID) != nil }) else { return }
        markChanged(object, slot: slot)
        try detach(object, fromInverseOf: object.entity.relationships[index], target: target.objectID)
    }

    /// Changes the loaded to-many link `index` of `object` in place and
    /// returns what `body` returns. The set is taken out of the object
    /// while `body` changes it, so that it is not copied for each change:
    /// linking N objects one at a time would cost N².
    func changeMany(_ object: ManagedObject, index: Int, _ body: (inout Set<ObjectID>) -> Bool) -> Bool {
        guard case .many(var ids)? = object.links[index] else { return false }
        object.links[index] = nil
        let changed = body(&ids)
        object.links[index] = .many(ids)
        return changed
    }

    // MARK: - Relationship maintenance

    private static func objectSet(_ value: Any) -> Set<ManagedObject>? {
        if let set = value as? Set<ManagedObject> { return set }
        if let array = value as? [ManagedObject] { return Set(array) }
        if let set = value as? any Collection, let objects = set.map({ $0 as? ManagedObject }) as [ManagedObject?]?, !objects.contains(where: { $0 == nil }) {
            return Set(objects.compactMap { $0 })
        }
        return nil
    }

    /// `value` as an object that may be the target of `relationship`.
    private func related(_ value: Any?, for object: ManagedObject, _ relationship: ResolvedRelationship) throws(LogStoreError) -> ManagedObject? {
        guard let value else { return nil }
        guard let target = value as? ManagedObject else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(relationship.name) holds a \(relationship.destination), not a \(type(of: value))", entity: object.entity.name, attribute: relationship.name)
        }
        guard target.entity.name == relationship.destination else {
            throw LogStoreError(.wrongType, "\(object.entity.name).\(relationship.name) holds a \(relationship.destination), not a \(target.entity.name)", entity: object.entity.name, attribute: relationship.name)
        }
        try checkOwned(target)
        guard !target.isDeleted else {
            throw LogStoreError(.objectNotFound, "\(target.objectID) was deleted; it cannot be the \(relationship.name) of \(object.objectID)", entity: object.entity.name, attribute: relationship.name)
        }
        return target
    }

    /// Refuses to link a deleted object: the other side cannot be set to it
    /// either (``related(_:for:_:)``), and the delete would undo the link.
    private func checkNotDeleted(_ object: ManagedObject, _ relationship: ResolvedRelationship) throws(LogStoreError) {
        guard object.isDeleted else { return }
        throw LogStoreError(.objectNotFound, "\(object.objectID) was deleted; its \(relationship.name) cannot be changed", entity: object.entity.name, attribute: relationship.name)
    }

    func checkOwned(_ object: ManagedObject) throws(LogStoreError) {
        guard object.managedObjectContext === self, registered[object.objectID] === object || object.isDeleted else {
            throw LogStoreError(.wrongContext, "\(object.objectID) belongs to another context; pass its objectID and use object(with:) in this one", entity: object.entity.name)
        }
    }

    private func setOne(of object: ManagedObject, index: Int, to target: ManagedObject?) throws(LogStoreError) {
        let slot = object.entity.attributes.count + index
        let old = link(of: object, slot: slot)
        guard old != .one(target?.objectID) else { return }
        let relationship = object.entity.relationships[index]
        if case .one(let previous?) = old { try detach(object, fromInverseOf: relationship, target: previous) }
        object.links[index] = .one(target?.objectID)
        markChanged(object, slot: slot)
        if let target { try attach(object, toInverseOf: relationship, target: target) }
    }

    private func setMany(of object: ManagedObject, index: Int, to targets: Set<ManagedObject>) throws(LogStoreError) {
        let relationship = object.entity.relationships[index]
        var checked: Set<ObjectID> = []
        for target in targets { if let target = try related(target, for: object, relationship) { checked.insert(target.objectID) } }
        let slot = object.entity.attributes.count + index
        let old = link(of: object, slot: slot).targets
        guard old != checked else { return }
        for removed in old.subtracting(checked) { try detach(object, fromInverseOf: relationship, target: removed) }
        object.links[index] = .many(checked)
        markChanged(object, slot: slot)
        for added in checked.subtracting(old) { try attach(object, toInverseOf: relationship, target: try self.object(with: added)) }
    }

    /// Makes `target`'s inverse of `relationship` include `object`.
    private func attach(_ object: ManagedObject, toInverseOf relationship: ResolvedRelationship, target: ManagedObject) throws(LogStoreError) {
        let inverseIndex = relationship.inverseIndex
        let inverse = target.entity.relationships[inverseIndex]
        let slot = target.entity.attributes.count + inverseIndex
        if inverse.isToMany {
            _ = link(of: target, slot: slot)
            guard changeMany(target, index: inverseIndex, { $0.insert(object.objectID).inserted }) else { return }
        } else {
            let current = link(of: target, slot: slot)
            guard current != .one(object.objectID) else { return }
            // The target's previous partner loses it (one-to-one, or moving a child).
            if case .one(let previous?) = current, previous != object.objectID {
                let previousObject = try deletedOrRegistered(previous)
                let back = target.entity.relationships[inverseIndex]
                let backSlot = previousObject.entity.attributes.count + back.inverseIndex
                _ = link(of: previousObject, slot: backSlot)
                if relationship.isToMany {
                    _ = changeMany(previousObject, index: back.inverseIndex) { $0.remove(target.objectID) != nil }
                } else {
                    previousObject.links[back.inverseIndex] = .one(nil)
                }
                markChanged(previousObject, slot: backSlot)
            }
            target.links[inverseIndex] = .one(object.objectID)
        }
        markChanged(target, slot: slot)
    }

    /// The object for `id`: one deleted here (which has left the identity
    /// map if it was never saved), or ``object(with:)``.
    private func deletedOrRegistered(_ id: ObjectID) throws(LogStoreError) -> ManagedObject {
        if let deleted = deletedObjects[id] { return deleted }
        return try object(with: id)
    }

    /// Removes `object` from the inverse of `relationship` on the object `target`.
    func detach(_ object: ManagedObject, fromInverseOf relationship: ResolvedRelationship, target id: ObjectID) throws(LogStoreError) {
        // An object inserted and deleted here has left the identity map but
        // still holds its links, which its delete rules are checked against.
        let target = try deletedOrRegistered(id)
        guard !target.isDeleted || deletedObjects[id] != nil else { return }
        let inverseIndex = relationship.inverseIndex
        let slot = target.entity.attributes.count + inverseIndex
        if target.entity.relationships[inverseIndex].isToMany {
            _ = link(of: target, slot: slot)
            guard changeMany(target, index: inverseIndex, { $0.remove(object.objectID) != nil }) else { return }
        } else {
            guard link(of: target, slot: slot) == .one(object.objectID) else { return }
            target.links[inverseIndex] = .one(nil)
        }
        markChanged(target, slot: slot)
    }
}
