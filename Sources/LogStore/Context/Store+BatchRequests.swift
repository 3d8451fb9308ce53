// Carrying out batch requests: records chosen by a fetch and changed, or
// inserted from values, through the same commit as a context's save. In the
// object layer, since choosing records is a fetch.

import Foundation

extension Store {
    /// Deletes the records `request` selects, in one transaction, and
    /// applies the delete rules to every referrer.
    ///
    /// - Throws: `.unknownEntity`, `.unknownKey`, `.invalidPredicate` for a
    ///   request that does not fit the model; `.validationFailed` when a
    ///   `deny` rule refuses a delete (nothing is written); `.io` and the
    ///   journal's errors when the transaction cannot be written.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws(LogStoreError) -> BatchResult {
        let fetch = FetchRequest(entityName: request.entityName, predicate: request.predicate)
        let entity = try model.entity(named: request.entityName)
        return try executeBatch { () throws(LogStoreError) in
            let keys = try matchingKeys(fetch)
            return (keys.count, keys.map { SlotChange.delete(entity: entity, key: $0) })
        }
    }

    /// Sets the attributes `request` names on the records it selects, in
    /// one transaction.
    ///
    /// - Throws: `.unknownEntity`, `.unknownKey` (a name the entity lacks),
    ///   `.invalidArgument` (a relationship, transient, derived or fetched
    ///   property), `.wrongType`, `.validationFailed` (a required attribute
    ///   set to nil, a value breaking a rule), `.invalidPredicate`; nothing
    ///   is written then.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws(LogStoreError) -> BatchResult {
        let entity = try model.entity(named: request.entityName)
        guard !request.propertiesToUpdate.isEmpty else {
            throw LogStoreError(.invalidArgument, "a batch update of \(entity.name) names no attribute to set (propertiesToUpdate is empty); nothing was written", entity: entity.name)
        }
        var slots: [(Int, StoredValue)] = []
        for name in request.propertiesToUpdate.keys.sorted() {
            slots.append((try BatchValues.attributeSlot(name, of: entity, request: "batch update"), .null))
        }
        // The same rules as a context's save, for the attributes written;
        // the others keep what each record holds, and are not checked.
        var values = Array(repeating: StoredValue.null, count: entity.attributes.count)
        for (position, (slot, _)) in slots.enumerated() {
            let name = entity.attributes[slot].name
            let value = try BatchValues.stored(request.propertiesToUpdate[name] ?? nil, for: slot, of: entity)
            slots[position].1 = value
            values[slot] = value
        }
        let written = Set(slots.map(\.0))
        // The values are the same for every record: the problems name none.
        let problems = ObjectValidation.problems(of: entity, id: nil, stored: values, hasValue: { !written.contains($0) || values[$0] != .null }, linkCount: nil)
        guard problems.isEmpty else {
            throw LogStoreError(.validationFailed, "the batch update of \(entity.name) was refused, nothing was written:\n" + problems.map { "- \($0.message)" }.joined(separator: "\n"), entity: entity.name, attribute: problems.first?.attribute, details: problems)
        }
        let fetch = FetchRequest(entityName: request.entityName, predicate: request.predicate)
        let update = slots
        return try executeBatch { () throws(LogStoreError) in
            let keys = try matchingKeys(fetch)
            return (keys.count, keys.map { SlotChange.update(entity: entity, key: $0, slots: update) })
        }
    }

    /// Inserts a record for each dictionary of `request`, one transaction
    /// per `recordsPerTransaction` records, reading the values as it goes.
    ///
    /// - Throws: `.unknownEntity`, `.unknownKey`, `.invalidArgument`,
    ///   `.wrongType`, `.validationFailed` for values that do not fit the
    ///   model, naming the record by its position in the request. The
    ///   transactions before the failing one stay written; the error says
    ///   how many records they hold.
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws(LogStoreError) -> BatchResult {
        let entity = try model.entity(named: request.entityName)
        guard request.recordsPerTransaction > 0 else {
            throw LogStoreError(.invalidArgument, "a batch insert needs at least one record per transaction (recordsPerTransaction is \(request.recordsPerTransaction))", entity: entity.name)
        }
        // Names resolved once: each dictionary is then read slot by slot.
        let attributes = entity.attributes.enumerated().filter { !$0.element.isTransient }
        let storedNames = Set(attributes.map(\.element.name))
        let relationshipSlots = entity.relationships.map { _ in StoredValue.null }
        // What a record holds for an attribute its dictionary leaves out, as
        // a context's save would store it: the default, nil for a transient
        // attribute, a transformable default through its transformer.
        var defaults = entity.defaults
        for (slot, attribute) in entity.attributes.enumerated() {
            if attribute.isTransient { defaults[slot] = .null; continue }
            guard case .transformable = attribute.type, let fallback = attribute.defaultValue else { continue }
            defaults[slot] = try attribute.type.stored(fallback) ?? .null
        }
        var result = BatchResult(storeID: storeID, entities: model.entities)
        var position = 0
        var chunk: [SlotChange] = []
        var problems: [LogStoreError] = []
        func kept() -> String {
            result.count == 0 ? "nothing was written" : "the \(result.count) record\(result.count == 1 ? "" : "s") before it, in \(result.sequences.count) earlier transaction\(result.sequences.count == 1 ? "" : "s"), stay written"
        }
        func refused(_ problems: [LogStoreError]) -> LogStoreError {
            let list = problems.prefix(20).map { "- \($0.message)" }.joined(separator: "\n")
            return LogStoreError(problems[0].kind, "the batch insert of \(entity.name) stopped at record \(position) and its transaction was refused; \(kept()); \(problems.count) problem\(problems.count == 1 ? "" : "s"):\n\(list)", entity: entity.name, attribute: problems[0].attribute, details: problems)
        }
        /// `error` (a key reservation or a transaction that could not be
        /// written) saying what the request had written before it.
        func stopped(_ error: LogStoreError) -> LogStoreError {
            LogStoreError(error.kind, "the batch insert of \(entity.name) stopped at record \(position): \(error.message); \(kept())", path: error.path, entity: entity.name, errno: error.errno, details: [error])
        }
        while true {
            chunk.removeAll(keepingCapacity: true)
            let first = position
            while chunk.count < request.recordsPerTransaction, let object = request.objects.next() {
                var values = defaults
                var found = 0
                for (slot, attribute) in attributes {
                    guard let value = object[attribute.name] else { continue }
                    found += 1
                    do throws(LogStoreError) {
                        values[slot] = try BatchValues.stored(value, for: slot, of: entity)
                    } catch {
                        problems.append(LogStoreError(error.kind, "record \(position): \(error.message)", entity: entity.name, attribute: attribute.name))
                    }
                }
                // A name that is not a stored attribute is refused, not ignored.
                if found < object.count {
                    for name in object.keys where !storedNames.contains(name) {
                        do throws(LogStoreError) {
                            _ = try BatchValues.attributeSlot(name, of: entity, request: "batch insert")
                        } catch {
                            problems.append(LogStoreError(error.kind, "record \(position): \(error.message)", entity: entity.name, attribute: name))
                        }
                    }
                }
                let key: UInt64
                do throws(LogStoreError) { key = try allocateKey(for: entity) } catch { throw stopped(error) }
                problems += ObjectValidation.problems(of: entity, id: id(entity, key), stored: values, hasValue: { values[$0] != .null }, linkCount: { _ in 0 })
                if !problems.isEmpty { throw refused(problems) }
                chunk.append(.insert(entity: entity, key: key, values: relationshipSlots.isEmpty ? values : values + relationshipSlots))
                position += 1
            }
            guard !chunk.isEmpty else { return result }
            let changes = chunk
            do throws(LogStoreError) {
                result = try executeBatch(into: result, choosingUnderLock: false) { () throws(LogStoreError) in (changes.count, changes) }
            } catch {
                position = first
                throw stopped(error)
            }
        }
    }

    /// The keys of the records `request` selects in the committed state as
    /// it is now, read by a context of its own (no pending changes).
    private func matchingKeys(_ request: FetchRequest) throws(LogStoreError) -> [UInt64] {
        if request.predicate == nil {
            return try snapshot().state.keys(of: request.entityName)
        }
        var request = request
        request.includesPendingChanges = false
        let context = ObjectContext(store: self)
        let execution = try FetchExecution(request, in: context)
        // A derived attribute is computed by the app's code on an object,
        // which must not run under the store's write lock (it may save).
        guard !execution.testsDerivedAttributes else {
            throw LogStoreError(.invalidPredicate, "a batch request's predicate cannot use a derived attribute of \(request.entityName), which only an object computes; fetch the IDs in a context and change the objects there", entity: request.entityName)
        }
        return try execution.run().matches.map(\.key)
    }

    /// Commits the changes `prepare` makes under the write lock (with
    /// `choosingUnderLock`, while no other save waits to apply, so that
    /// records chosen from the committed state are exactly those the
    /// transaction changes) and adds the transaction to `result`.
    private func executeBatch(into result: BatchResult? = nil, choosingUnderLock: Bool = true, _ prepare: () throws(LogStoreError) -> (count: Int, changes: [SlotChange])) throws(LogStoreError) -> BatchResult {
        var result = result ?? BatchResult(storeID: storeID, entities: model.entities)
        var matched = 0
        do {
            let committed = try commit(checkingVersions: false, preparedAlone: choosingUnderLock) { () throws -> PendingSave in
                let (count, changes) = try prepare()
                matched = count
                return PendingSave(changes: changes, expectedVersions: [:])
            }
            // With no changes, the commit wrote nothing, and adds nothing here.
            result.count += matched
            result.add(committed.changes)
            return result
        } catch let error as LogStoreError {
            throw error
        } catch let conflict as SaveConflict {
            // Records are chosen under the write lock with no save in flight,
            // and a batch checks no versions: a conflict is a defect here.
            throw LogStoreError(.mergeConflict, "the batch request met \(conflict.conflicts.count) conflicting record(s) it chose under the write lock; nothing was written")
        } catch {
            throw LogStoreError(.io, "the batch request failed: \(error)")
        }
    }
}

/// How a batch request's values become stored values: the rules of
/// ``ManagedObject/setValue(_:forKey:)``, for dictionaries.
enum BatchValues {
    /// The slot of the stored attribute `name`, or the error saying why a
    /// batch `request` cannot set it.
    static func attributeSlot(_ name: String, of entity: EntityDescription, request: String) throws(LogStoreError) -> Int {
        switch entity.property(named: name) {
        case .attribute(let slot):
            guard !entity.attributes[slot].isTransient else {
                throw LogStoreError(.invalidArgument, "\(entity.name).\(name) is transient, never stored, so a \(request) cannot set it", entity: entity.name, attribute: name)
            }
            return slot
        case .relationship:
            throw LogStoreError(.invalidArgument, "\(entity.name).\(name) is a relationship; a \(request) sets attributes only: link objects in a context", entity: entity.name, attribute: name)
        case .derived, .fetched:
            throw LogStoreError(.invalidArgument, "\(entity.name).\(name) is read-only (derived or fetched), so a \(request) cannot set it", entity: entity.name, attribute: name)
        case nil:
            throw LogStoreError(.unknownKey, "\(entity.name).\(name) does not exist: \(entity.name) has no property of that name; its attributes are \(entity.attributes.filter { !$0.isTransient }.map(\.name).joined(separator: ", "))", entity: entity.name, attribute: name)
        }
    }

    /// `value` as attribute `slot` stores it, or `.wrongType`.
    static func stored(_ value: Any?, for slot: Int, of entity: EntityDescription) throws(LogStoreError) -> StoredValue {
        let attribute = entity.attributes[slot]
        guard let value, !(value is NSNull) else { return .null }
        // A transformer may turn a value into nothing, as in a context's save.
        if case .transformable = attribute.type { return try attribute.type.stored(value) ?? .null }
        guard let converted = try attribute.type.stored(value) else {
            throw LogStoreError(.wrongType, "\(entity.name).\(attribute.name) is a \(attribute.type) attribute; it cannot hold a \(type(of: value))", entity: entity.name, attribute: attribute.name)
        }
        return converted
    }
}
