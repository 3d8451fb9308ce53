// Fetching: a context runs fetch requests against the store's committed
// state and its own unsaved changes.

import Foundation

extension ObjectContext {
    /// The objects `request` selects, in its order. Objects this context
    /// already holds come back as the same instances (the identity map);
    /// the others are loaded, the first `fetchBatchSize` of them at once
    /// (all when it is 0) and the rest when touched.
    ///
    /// - Throws: `.unknownEntity`, `.unknownKey` (a key path the entity
    ///   lacks, naming entity and key), `.invalidPredicate`.
    public func fetch(_ request: FetchRequest) throws(LogStoreError) -> [ManagedObject] {
        let execution = try FetchExecution(request, in: self)
        return objects(for: execution.run().matches, of: execution.entity, in: execution.snapshot, batchSize: request.fetchBatchSize)
    }

    /// The objects `request` selects, as instances of `type`.
    public func fetch<Object: ManagedObject>(_ request: FetchRequest, as type: Object.Type) throws(LogStoreError) -> [Object] {
        try fetch(request).compactMap { $0 as? Object }
    }

    /// The IDs of the objects `request` selects, without loading any
    /// object: fetch in the background, hand the IDs to another context.
    public func fetchIDs(_ request: FetchRequest) throws(LogStoreError) -> [ObjectID] {
        let execution = try FetchExecution(request, in: self)
        return execution.run().matches.map { store.id(execution.entity, $0.key) }
    }

    /// How many objects `request` selects (within its offset and limit).
    public func count(for request: FetchRequest) throws(LogStoreError) -> Int {
        try FetchExecution(request, in: self).count()
    }

    /// Runs `request` and reports how it found its results.
    public func explain(_ request: FetchRequest) throws(LogStoreError) -> FetchPlan {
        try FetchExecution(request, in: self).run().plan
    }

    /// The value of a fetched property of `source`.
    func fetch(_ property: FetchedProperty, for source: ManagedObject) throws(LogStoreError) -> [ManagedObject] {
        let request = FetchRequest(entityName: property.destination, predicate: property.predicate, sortDescriptors: property.sortDescriptors)
        let execution = try FetchExecution(request, in: self, source: source)
        return objects(for: execution.run().matches, of: execution.entity, in: execution.snapshot, batchSize: 0)
    }

    private func objects(for matches: [FetchExecution.Match], of entity: EntityDescription, in snapshot: StateSnapshot, batchSize: Int) -> [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(matches.count)
        reserveRegistrations(matches.count)
        let table = snapshot.state.table(entity)
        for (position, match) in matches.enumerated() {
            switch match {
            case .object(let subject):
                objects.append(subject.object)
            case .record(let key, _):
                guard let object = try? object(with: store.id(entity, key)) else { continue }
                if object.isFault && (batchSize == 0 || position < batchSize) {
                    // From the fetch's snapshot: the values the predicate saw.
                    fulfill(object, from: table.record(key))
                }
                objects.append(object)
            }
        }
        return objects
    }

    // MARK: - Dictionaries

    /// One dictionary per result (or per group), holding the values of
    /// `request.propertiesToFetch`: attributes by name, and aggregates
    /// (`count`, `sum`, `avg`, `min`, `max`) over each group's rows, grouped
    /// by `request.propertiesToGroupBy` (one group of all rows when there is
    /// none and an aggregate is asked for). Nil values are left out, as in
    /// Core Data.
    public func fetchDictionaries(_ request: FetchRequest) throws(LogStoreError) -> [[String: Any]] {
        let execution = try FetchExecution(request, in: self)
        let binder = PredicateBinder(model: store.model)
        let entity = execution.entity
        func path(_ keyPath: String) throws(LogStoreError) -> BoundPath {
            let path = try binder.path(KeyPathComponent.parse(keyPath), from: entity)
            guard !path.isCollection else {
                throw LogStoreError(.invalidArgument, "\(keyPath) passes a to-many relationship; fetch it with an aggregate instead", entity: entity.name, attribute: keyPath)
            }
            return path
        }
        let fetched = request.propertiesToFetch.isEmpty ? entity.attributes.filter { !$0.isTransient }.map { FetchedValue.attribute($0.name) } : request.propertiesToFetch
        let values = try fetched.map { value throws(LogStoreError) in (value, try value.keyPath.map { keyPath throws(LogStoreError) in try path(keyPath) }) }
        let groups = try request.propertiesToGroupBy.map { key throws(LogStoreError) in (key, try path(key)) }
        let aggregates = fetched.contains { $0.function != nil }
        for (value, _) in values where value.function == nil && aggregates && !request.propertiesToGroupBy.contains(value.keyPath ?? "") {
            throw LogStoreError(.invalidArgument, "\(value.name) is neither grouped by nor an aggregate; add it to propertiesToGroupBy", entity: entity.name, attribute: value.name)
        }
        let matches = execution.run().matches
        func swiftValue(_ operand: Operand, _ path: BoundPath?) -> Any? {
            switch operand {
            case .value(.null): return nil
            case .value(let stored):
                if let path, case .attribute(let slot) = path.tail {
                    return (try? path.entity.attributes[slot].type.value(stored)) ?? nil
                }
                return Self.plainValue(stored)
            case .object(let entityIndex, let key):
                return store.id(store.model.entities[entityIndex], key)
            case .list(let items):
                return items.compactMap { swiftValue($0, path) }
            }
        }
        guard aggregates || !groups.isEmpty else {
            return matches.map { match in
                var row: [String: Any] = [:]
                for (value, path) in values {
                    if let path, let converted = swiftValue(execution.value(path, of: match), path) { row[value.name] = converted }
                }
                return row
            }
        }
        // Groups in the order of their first row, which follows the sort.
        var order: [[StoredValue]] = []
        var rows: [[StoredValue]: [FetchExecution.Match]] = [:]
        for match in matches {
            let key = groups.map { group -> StoredValue in
                if case .value(let stored) = execution.value(group.1, of: match) { return stored }
                return .null
            }
            if rows[key] == nil { order.append(key) }
            rows[key, default: []].append(match)
        }
        if groups.isEmpty && order.isEmpty { order = [[]]; rows[[]] = [] }
        return order.map { key in
            let members = rows[key] ?? []
            var row: [String: Any] = [:]
            for (index, group) in groups.enumerated() {
                if let converted = swiftValue(.value(key[index]), group.1) { row[group.0] = converted }
            }
            for (value, path) in values {
                guard let function = value.function else { continue }
                let stored: StoredValue
                if function == .count {
                    stored = .int64(Int64(members.count))
                } else {
                    let items = path.map { path in members.map { match -> StoredValue in
                        if case .value(let stored) = execution.value(path, of: match) { return stored }
                        return .null
                    } } ?? []
                    let kind: KeyPathComponent = switch function {
                    case .count: .count
                    case .sum: .sum
                    case .average: .average
                    case .minimum: .minimum
                    case .maximum: .maximum
                    }
                    stored = Aggregation.aggregate(kind, items)
                }
                let converted: Any? = switch function {
                case .minimum, .maximum: swiftValue(.value(stored), path)
                default: Self.plainValue(stored)
                }
                if let converted { row[value.name] = converted }
            }
            return row
        }
    }

    private static func plainValue(_ stored: StoredValue) -> Any? {
        switch stored {
        case .null: nil
        case .bool(let value): value
        case .int16(let value): value
        case .int32(let value): value
        case .int64(let value): value
        case .float(let value): value
        case .double(let value): value
        case .string(let value): value
        case .date(let value): value
        case .data(let value): value
        case .uuid(let value): value
        case .reference, .references: nil
        }
    }
}

extension ObjectPredicate {
    /// Whether `object` matches, with its unsaved values, exactly as a fetch
    /// in its context would decide.
    ///
    /// - Throws: `.unknownKey` for a key path its entity lacks,
    ///   `.wrongContext` when its context is gone.
    public func evaluate(with object: ManagedObject, substitutions: [String: Any?] = [:]) throws(LogStoreError) -> Bool {
        guard let context = object.managedObjectContext else {
            throw LogStoreError(.wrongContext, "\(object.objectID) has no context to evaluate a predicate in", entity: object.entity.name)
        }
        let predicate = substitutions.isEmpty ? self : substituting(substitutions)
        let bound = try PredicateBinder(model: context.store.model).bind(predicate, to: object.entity)
        return PredicateEvaluation.evaluate(bound, ObjectSubject(object: object, context: context))
    }
}

extension Sequence where Element: ManagedObject {
    /// The objects that match `predicate` (filtering in memory gives the
    /// same answer as a fetch with that predicate).
    public func filter(_ predicate: ObjectPredicate) throws(LogStoreError) -> [Element] {
        var result: [Element] = []
        for object in self where try predicate.evaluate(with: object) { result.append(object) }
        return result
    }
}
