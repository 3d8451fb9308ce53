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
        checkConfinement()
        // Every match becomes a loaded object: read each record once.
        let loadsAll = request.fetchBatchSize == 0 && request.fetchLimit == 0 && request.fetchOffset == 0
        let execution = try FetchExecution(request, in: self, loadingRecords: loadsAll)
        return objects(for: try execution.run().matches, of: execution.entity, in: execution.snapshot, batchSize: request.fetchBatchSize)
    }

    /// The objects `request` selects, as instances of `type`.
    // Inlinable so that the app's module specializes the downcast: the
    // generic version looked up `Object`'s metadata for every object.
    @inlinable
    public func fetch<Object: ManagedObject>(_ request: FetchRequest, as type: Object.Type) throws(LogStoreError) -> [Object] {
        try fetch(request).compactMap { $0 as? Object }
    }

    /// The IDs of the objects `request` selects, without loading any
    /// object: fetch in the background, hand the IDs to another context.
    public func fetchIDs(_ request: FetchRequest) throws(LogStoreError) -> [ObjectID] {
        checkConfinement()
        let execution = try FetchExecution(request, in: self)
        return try execution.run().matches.map { store.id(execution.entity, $0.key) }
    }

    /// How many objects `request` selects (within its offset and limit).
    public func count(for request: FetchRequest) throws(LogStoreError) -> Int {
        checkConfinement()
        return try FetchExecution(request, in: self).count()
    }

    /// Runs `request` and reports how it found its results.
    public func explain(_ request: FetchRequest) throws(LogStoreError) -> FetchPlan {
        try FetchExecution(request, in: self).run().plan
    }

    /// The value of a fetched property of `source`.
    func fetch(_ property: FetchedProperty, for source: ManagedObject) throws(LogStoreError) -> [ManagedObject] {
        let request = FetchRequest(entityName: property.destination, predicate: property.predicate, sortDescriptors: property.sortDescriptors)
        let execution = try FetchExecution(request, in: self, source: source, loadingRecords: true)
        return objects(for: try execution.run().matches, of: execution.entity, in: execution.snapshot, batchSize: 0)
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
                guard let object = try? object(with: store.id(entity, key), touchedSoon: false) else { continue }
                if object.isFault && (batchSize == 0 || position < batchSize) {
                    // From the fetch's snapshot: the values the predicate saw.
                    fulfill(object, from: table.record(key))
                }
                objects.append(object)
            case .loaded(let key, let record):
                guard let object = try? object(with: store.id(entity, key), touchedSoon: false) else { continue }
                fulfill(object, from: record)
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
    /// Core Data. As in Core Data, the rows come from the saved state (the
    /// context's unsaved changes do not count), and the limit and offset
    /// apply to the rows returned, after grouping.
    public func fetchDictionaries(_ request: FetchRequest) throws(LogStoreError) -> [[String: Any]] {
        checkConfinement()
        // As in Core Data, dictionary results (and their aggregates) are
        // computed from the saved state; and a window applies to the rows
        // returned, so grouping sees every object.
        var saved = request
        saved.includesPendingChanges = false
        saved.fetchLimit = 0
        saved.fetchOffset = 0
        let execution = try FetchExecution(saved, in: self)
        var binder = PredicateBinder(model: store.model, storeID: store.storeID)
        binder.isStoreFetch = true
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
        for (value, _) in values where value.function == nil && (aggregates || !groups.isEmpty) && !request.propertiesToGroupBy.contains(value.keyPath ?? "") {
            throw LogStoreError(.invalidArgument, "\(value.name) is neither grouped by nor an aggregate; add it to propertiesToGroupBy", entity: entity.name, attribute: value.name)
        }
        return try execution.checkingReads { () throws(LogStoreError) in
            try rows(of: request, execution: execution, values: values, groups: groups, aggregates: aggregates)
        }
    }

    /// The rows of a dictionary fetch, windowed: the values of `values` for
    /// each match, or per group with aggregates.
    private func rows(of request: FetchRequest, execution: FetchExecution, values: [(FetchedValue, BoundPath?)], groups: [(String, BoundPath)], aggregates: Bool) throws(LogStoreError) -> [[String: Any]] {
        let matches = try execution.run().matches
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
        let rows: [[String: Any]]
        if !aggregates && groups.isEmpty {
            rows = matches.map { match in
                var row: [String: Any] = [:]
                for (value, path) in values {
                    if let path, let converted = swiftValue(execution.value(path, of: match), path) { row[value.name] = converted }
                }
                return row
            }
        } else {
            rows = Self.groupRows(matches, execution: execution, groups: groups, values: values, swiftValue: swiftValue)
        }
        let start = min(request.fetchOffset, rows.count)
        let end = request.fetchLimit > 0 ? min(rows.count, start + request.fetchLimit) : rows.count
        return Array(rows[start..<end])
    }

    /// A group's key: attribute values, or related objects.
    private enum GroupValue: Hashable {
        /// Grouped by the one order of values (NaN with NaN).
        case value(SortedValue)
        case object(Int, UInt64)

        var operand: Operand {
            switch self {
            case .value(let value): .value(value.value)
            case .object(let entity, let key): .object(entity: entity, key: key)
            }
        }
    }

    /// One row per group of `matches` (all of them in one group when there
    /// is nothing to group by), in the order of each group's first match.
    private static func groupRows(
        _ matches: [FetchExecution.Match], execution: FetchExecution, groups: [(String, BoundPath)],
        values: [(FetchedValue, BoundPath?)], swiftValue: (Operand, BoundPath?) -> Any?
    ) -> [[String: Any]] {
        var order: [[GroupValue]] = []
        var members: [[GroupValue]: [FetchExecution.Match]] = [:]
        for match in matches {
            let key = groups.map { group -> GroupValue in
                switch execution.value(group.1, of: match) {
                case .value(let stored): .value(SortedValue(value: stored))
                case .object(let entity, let key): .object(entity, key)
                case .list: .value(SortedValue(value: .null))
                }
            }
            if members[key] == nil { order.append(key) }
            members[key, default: []].append(match)
        }
        if groups.isEmpty && order.isEmpty { order = [[]] }
        return order.map { key in
            let rows = members[key] ?? []
            var row: [String: Any] = [:]
            for (index, group) in groups.enumerated() {
                if let converted = swiftValue(key[index].operand, group.1) { row[group.0] = converted }
            }
            for (value, path) in values {
                guard let function = value.function else { continue }
                let stored: StoredValue
                if function == .count {
                    stored = .int64(Int64(rows.count))
                } else {
                    let items = path.map { path in rows.map { match -> StoredValue in
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
        case .reference, .references: nil
        default: stored.value
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
        let bound = try PredicateBinder(model: context.store.model, storeID: context.store.storeID).bind(predicate, to: object.entity)
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
