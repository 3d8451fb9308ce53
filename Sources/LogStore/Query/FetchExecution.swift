// One fetch: plan, read candidates from a snapshot of the committed state,
// test them and the context's pending objects, order, window.

import Foundation

/// A fetch request resolved against its entity and run once.
struct FetchExecution {
    /// A result before it becomes an object, ID or dictionary: a committed
    /// record by key, with the values its sort keys read (if any), or an
    /// object of the context.
    enum Match {
        /// A saved record: its key, and the values its sort keys read
        /// (``sortDecoded`` says which), or none when nothing is sorted.
        case record(UInt64, [StoredValue])
        /// A saved record with every attribute decoded, read once for both
        /// the fetch and the object it becomes (``loadsRecords``).
        case loaded(UInt64, Record)
        case object(ObjectSubject)

        var key: UInt64 {
            switch self {
            case .record(let key, _), .loaded(let key, _): key
            case .object(let object): object.key
            }
        }
    }

    /// The value of `path` for `match`.
    func value(_ path: BoundPath, of match: Match) -> Operand {
        switch match {
        case .record(let key, _) where path.isDerived || (readsUnsavedLinks && path.directAttribute == nil),
             .loaded(let key, _) where path.isDerived || (readsUnsavedLinks && path.directAttribute == nil):
            // Derived attributes are computed by objects only, and related
            // objects with unsaved changes are seen through the context.
            guard let object = try? context.object(with: context.store.id(entity, key)) else { return .value(.null) }
            return PredicateEvaluation.value(path, ObjectSubject(object: object, context: context))
        case .record(let key, let values):
            let decoded = values.isEmpty ? [] : sortDecoded
            return values.withUnsafeBufferPointer { values in
                decoded.withUnsafeBufferPointer { decoded in
                    PredicateEvaluation.value(path, RecordSubject(snapshot: snapshot, entity: entity, key: key, values: values, decoded: decoded))
                }
            }
        case .loaded(let key, let record):
            return record.values.withUnsafeBufferPointer { values in
                attributeSlots.withUnsafeBufferPointer { decoded in
                    PredicateEvaluation.value(path, RecordSubject(snapshot: snapshot, entity: entity, key: key, values: values, decoded: decoded))
                }
            }
        case .object(let object):
            return PredicateEvaluation.value(path, object)
        }
    }

    private struct Sort {
        var path: BoundPath
        var key: SortKey
    }

    private struct Plan {
        var strategy: FetchPlan.Strategy
        var estimate: Int
        var lookup: (SecondaryIndex, SecondaryIndex.Range)?
        var order: SecondaryIndex?
        /// The candidates a relationship lookup found (RelationshipLookup.swift),
        /// in increasing order.
        var relatedKeys: [UInt64]?
        /// The lookup is the whole predicate: every key it finds matches.
        var covers = false
        /// What each candidate is still tested against, when a lookup
        /// answered one conjunct exactly: the others (nil: the predicate).
        var residual: BoundPredicate?
    }

    let context: ObjectContext
    let request: FetchRequest
    let entity: EntityDescription
    private let predicate: BoundPredicate?
    private let sorts: [Sort]
    let snapshot: StateSnapshot
    /// The slots of each record to decode: those the predicate and the sort
    /// keys read (every slot when a key path leaves the record).
    private let predicateSlots: [Bool]
    private let sortSlots: [Bool]
    /// Which values a matched record keeps for its sort keys were decoded.
    private var sortDecoded: [Bool] { sortSlots }
    /// Matches are ``Match/loaded(_:_:)``: each record's attributes are
    /// decoded as it is read, for a fetch that turns every match into a
    /// loaded object. Reading them again for the object would cost a
    /// second trip to each record, in sorted order, far apart in memory.
    let loadsRecords: Bool
    /// The predicate or a sort key reads related records while the context
    /// has unsaved changes, which the saved state does not show (a child
    /// deleted, a parent renamed, a link moved): records are then tested and
    /// sorted as the context's objects, and no relationship lookup, whose
    /// links are the saved ones, is planned. Filtering the objects in memory
    /// gives the same answer.
    let readsUnsavedLinks: Bool
    /// Every attribute slot, decoded in a loaded match.
    private let attributeSlots: [Bool]
    /// A test's forced plan and fast paths (FetchOverride.swift).
    private let override = FetchOverride.current

    /// Whether the predicate reads a derived attribute, which only an
    /// object computes (by the app's code).
    var testsDerivedAttributes: Bool { predicate?.usesDerivedAttributes == true }

    /// Resolves `request`; `source` is the object `$FETCH_SOURCE` names.
    /// `loadingRecords`: the caller makes a loaded object of every match
    /// (the matches are ``Match/loaded(_:_:)``).
    init(_ request: FetchRequest, in context: ObjectContext, source: ManagedObject? = nil, loadingRecords: Bool = false) throws(LogStoreError) {
        self.context = context
        self.request = request
        loadsRecords = loadingRecords
        let model = context.store.model
        entity = try model.entity(named: request.entityName)
        attributeSlots = Array(repeating: true, count: entity.attributes.count)
        var binder = PredicateBinder(model: model, storeID: context.store.storeID)
        binder.isStoreFetch = true
        if let source {
            binder.fetchSource = { _, path throws(LogStoreError) in
                let subject = ObjectSubject(object: source, context: context)
                guard !path.isEmpty else { return .object(entity: source.entity.index, key: source.recordKey) }
                let bound = try PredicateBinder(model: model).path(path, from: source.entity)
                return PredicateEvaluation.value(bound, subject)
            }
        }
        let entity = self.entity
        predicate = try request.predicate.map { [binder] predicate throws(LogStoreError) in try binder.bind(predicate, to: entity) }
        sorts = try request.sortDescriptors.map { [binder] key throws(LogStoreError) in
            let path = try binder.path(KeyPathComponent.parse(key.keyPath), from: entity)
            guard !path.isCollection else {
                throw LogStoreError(.invalidPredicate, "cannot sort \(entity.name) by \(key.keyPath): it passes a to-many relationship", entity: entity.name, attribute: key.keyPath)
            }
            return Sort(path: path, key: key)
        }
        guard request.fetchLimit >= 0, request.fetchOffset >= 0, request.fetchBatchSize >= 0 else {
            throw LogStoreError(.invalidArgument, "a fetch request's limit, offset and batch size cannot be negative", entity: entity.name)
        }
        snapshot = try context.store.snapshot()
        predicateSlots = Self.mask(predicate?.directSlots ?? [], of: entity)
        sortSlots = Self.mask(sorts.map { $0.path.directAttribute ?? Int.max }, of: entity)
        if request.includesPendingChanges, let linked = Self.linkedEntities(predicate, sorts.map(\.path), from: entity, model: model) {
            readsUnsavedLinks = linked.isEmpty ? context.hasChanges : linked.contains {
                context.hasPendingObjects(of: $0.entity, inserted: $0.holdsLinks, changed: $0.holdsLinks || $0.valuesRead)
            }
        } else {
            readsUnsavedLinks = false
        }
    }

    /// The entities whose unsaved objects can change what `predicate` and
    /// `paths` read from a saved record of `entity` through its
    /// relationships (the record's own changes make it a pending object):
    /// the destination of every step, and the holder of every link past
    /// the first step. A deleted object always matters; an inserted one
    /// only where its entity holds links (`holdsLinks`), as a new object
    /// reaches a saved record only through a link it holds; a changed one
    /// where it holds links or its values are read (`valuesRead`: not
    /// where only the object itself is compared, as in `project == %@`).
    /// Nil when nothing is read through a relationship; empty when it
    /// cannot be told (a subquery), and every entity counts.
    private static func linkedEntities(_ predicate: BoundPredicate?, _ paths: [BoundPath], from entity: EntityDescription, model: Model) -> [(entity: EntityDescription, holdsLinks: Bool, valuesRead: Bool)]? {
        var all = paths
        var unknown = false
        func collect(_ expression: BoundExpression) {
            switch expression {
            case .path(let path): all.append(path)
            case .list(let items): items.forEach(collect)
            case .arithmetic(_, let left, let right): collect(left); collect(right)
            case .subquery, .variable: unknown = true
            case .constant, .evaluatedObject: break
            }
        }
        func collect(_ predicate: BoundPredicate) {
            switch predicate {
            case .constant: break
            case .not(let inner): collect(inner)
            case .and(let parts), .or(let parts): parts.forEach(collect)
            case .comparison(let comparison): collect(comparison.left); collect(comparison.right)
            }
        }
        predicate.map(collect)
        if unknown { return [] }
        var linked: [(entity: EntityDescription, holdsLinks: Bool, valuesRead: Bool)] = []
        func add(_ entity: EntityDescription, holdsLinks: Bool, valuesRead: Bool) {
            if let position = linked.firstIndex(where: { $0.entity === entity }) {
                linked[position].holdsLinks = linked[position].holdsLinks || holdsLinks
                linked[position].valuesRead = linked[position].valuesRead || valuesRead
            } else {
                linked.append((entity, holdsLinks, valuesRead))
            }
        }
        for path in all {
            var current = entity
            for (depth, step) in path.steps.enumerated() {
                let relationship = current.relationships[step.index]
                guard let destination = model.entitiesByName[relationship.destination] else { return [] }
                if depth > 0 && relationship.isStored { add(current, holdsLinks: true, valuesRead: true) }
                let isLast = depth == path.steps.count - 1
                let onlyCompared: Bool
                switch path.tail {
                case .objects, .count: onlyCompared = isLast
                default: onlyCompared = false
                }
                add(destination, holdsLinks: !relationship.isStored, valuesRead: !onlyCompared)
                current = destination
            }
        }
        return linked.isEmpty && all.allSatisfy({ $0.steps.isEmpty }) ? nil : linked
    }

    /// Which of `entity`'s slots to decode for `slots` (`Int.max`: all of them).
    private static func mask(_ slots: [Int], of entity: EntityDescription) -> [Bool] {
        if slots.contains(Int.max) { return Array(repeating: true, count: entity.attributes.count + entity.relationships.count) }
        guard let last = slots.max() else { return [] }
        var mask = Array(repeating: false, count: last + 1)
        for slot in slots { mask[slot] = true }
        return mask
    }

    /// The matches, ordered and windowed, and how they were found.
    ///
    /// - Throws: the failure of a snapshot block that could not be read
    ///   (`.io`, `.corruptSnapshot`): its records would be missing from the
    ///   answer, which is never given without them.
    func run() throws(LogStoreError) -> (matches: [Match], plan: FetchPlan) {
        try checkingReads { matches() }
    }

    /// What `body` gives, when no snapshot block failed to read meanwhile
    /// (scans skip a block that fails, lookups find no record in it, values
    /// read from it are null); the first failure otherwise. Everything a
    /// fetch reads goes through here: its matches, its count, and the
    /// values of a dictionary fetch's rows.
    func checkingReads<Result>(_ body: () throws(LogStoreError) -> Result) throws(LogStoreError) -> Result {
        let blocks = snapshot.state.tables.first?.snapshot
        let failedBefore = blocks?.failedReadCount ?? 0
        let result = try body()
        try blocks?.checkNoReadFailed(since: failedBefore)
        return result
    }

    private func matches() -> (matches: [Match], plan: FetchPlan) {
        let (pending, excluded) = request.includesPendingChanges ? context.pendingObjects(of: entity) : ([], [])
        let table = snapshot.state.table(entity)
        let plan = choosePlan(tableCount: table.count)
        let tested = plan.residual ?? predicate
        let test = plan.covers ? nil : compiledTest(tested)
        let testSlots = test == nil ? [] : plan.residual.map { Self.mask($0.directSlots, of: entity) } ?? predicateSlots
        var wanted = testSlots
        for slots in [sortSlots, loadsRecords ? attributeSlots : []] {
            for (slot, isWanted) in slots.enumerated() where isWanted {
                if slot >= wanted.count { wanted += Array(repeating: false, count: slot + 1 - wanted.count) }
                wanted[slot] = true
            }
        }
        // A test that reads no attribute needs no bytes.
        let testsBytes = !testSlots.isEmpty && tested?.usesDerivedAttributes == false && override?.rawTests != false
        let rawTest = testsBytes ? tested.flatMap(RawTest.compile) : nil
        let collector = MatchCollector(excluded: excluded, rawTest: rawTest, test: test, testSlots: testSlots, wanted: wanted,
                                       keepsValues: !sorts.isEmpty || loadsRecords, loadsRecords: loadsRecords,
                                       table: table, snapshot: snapshot, entity: entity)
        var collected = MatchCollector.Collected()
        if let keys = plan.lookup.map({ index, range in index.keys(in: range).sorted() }) ?? plan.relatedKeys {
            if test == nil && wanted.isEmpty {
                // The lookup answers the whole predicate and nothing is sorted:
                // the keys are the matches. (A rest of the predicate that
                // reads no attribute, `SELF != %@`, still has to be tested.)
                for key in keys { collector.keep(key, into: &collected) }
                collected.examined = keys.count
            } else {
                table.forEachRecord(of: keys) { key, version, bytes in
                    _ = collector.consider(key, version: version, bytes, into: &collected)
                    return true
                }
            }
        } else if let index = plan.order {
            // Read in the first sort key's order until the window is full.
            // Within one value, keys come in increasing order, the order of
            // ties; with more sort keys, the last value read is read whole.
            let needed = request.fetchOffset + request.fetchLimit
            index.forEachGroup(ascending: sorts[0].key.ascending) { _, keys in
                table.forEachRecord(of: keys) { key, version, bytes in
                    _ = collector.consider(key, version: version, bytes, into: &collected)
                    return sorts.count > 1 || collected.matches.count < needed
                }
                return collected.matches.count < needed
            }
        } else if wanted.isEmpty && rawTest == nil {
            // Every record matches and nothing is sorted by value: the keys
            // are enough, and no snapshot block need be read.
            table.forEachKey { key in _ = collector.consider(key, version: nil, UnsafeRawBufferPointer(start: nil, count: 0), into: &collected) }
        } else {
            table.forEachRecord { key, version, bytes in _ = collector.consider(key, version: version, bytes, into: &collected) }
        }
        var matches = collected.matches
        // Taken, so that `matches` alone holds the array: ordering it in
        // place then copies no match (and retains no record's values).
        collected.matches = []
        let examined = collected.examined
        for object in pending {
            let subject = ObjectSubject(object: object, context: context)
            if predicate.map({ PredicateEvaluation.evaluate($0, subject) }) ?? true { matches.append(.object(subject)) }
        }
        let matched = matches.count
        order(&matches)
        let window = self.window(matches)
        let fetchPlan = FetchPlan(strategy: plan.strategy, estimatedRows: plan.estimate, examinedRows: examined, pendingObjects: pending.count, matchedRows: matched)
        return (window, fetchPlan)
    }

    /// How many objects match, within the window: without reading a record
    /// when there is no predicate or an index answers the whole of it, and
    /// no unsaved object of the entity could change the answer.
    ///
    /// - Throws: as ``run()``.
    func count() throws(LogStoreError) -> Int {
        try checkingReads { () throws(LogStoreError) in try counted() }
    }

    private func counted() throws(LogStoreError) -> Int {
        let table = snapshot.state.table(entity)
        let plan = choosePlan(tableCount: table.count)
        let pendingMatter = readsUnsavedLinks || (request.includesPendingChanges && context.hasPendingObjects(of: entity))
        func windowed(_ matched: Int) -> Int {
            let start = min(request.fetchOffset, matched)
            return request.fetchLimit > 0 ? min(matched - start, request.fetchLimit) : matched - start
        }
        if predicate == nil && !pendingMatter { return windowed(table.count) }
        if plan.covers, let (index, range) = plan.lookup, !pendingMatter { return windowed(index.count(in: range)) }
        if plan.covers, let keys = plan.relatedKeys, !pendingMatter { return windowed(keys.count) }
        return try run().matches.count
    }

    /// `predicate` as a test of one record; nil when every record matches.
    private func compiledTest(_ predicate: BoundPredicate?) -> ((RecordSubject) -> Bool)? {
        guard let predicate else { return nil }
        if predicate.usesDerivedAttributes || readsUnsavedLinks {
            // Derived attributes are computed by objects only; see also
            // readsUnsavedLinks.
            return { [context, entity] record in
                guard let object = try? context.object(with: context.store.id(entity, record.key)) else { return false }
                return PredicateEvaluation.evaluate(predicate, ObjectSubject(object: object, context: context))
            }
        }
        if override?.compiledPredicates == false { return { PredicateEvaluation.evaluate(predicate, $0) } }
        return CompiledPredicate.compile(predicate)
    }

    private func window(_ matches: [Match]) -> [Match] {
        let start = min(request.fetchOffset, matches.count)
        let end = request.fetchLimit > 0 ? min(matches.count, start + request.fetchLimit) : matches.count
        guard start > 0 || end < matches.count else { return matches }
        return Array(matches[start..<end])
    }

    /// Sorts by the sort keys, then by key (insertion order), so equal
    /// values keep a stable order. Each key's values are read once into a
    /// typed column, and an array of positions is sorted.
    private func order(_ matches: inout [Match]) {
        guard !sorts.isEmpty else {
            matches.sort { $0.key < $1.key }
            return
        }
        let columns = sorts.map { sort in SortColumn(matches.map { value(sort.path, of: $0) }, options: sort.key.options) }
        let ascending = sorts.map(\.key.ascending)
        let keys = matches.map(\.key)
        // The first key's ASCII prefixes decide most comparisons of text
        // without touching the strings, and say when two are equal.
        let prefixes = columns[0].asciiPrefixes ?? []
        var positions = Array(matches.indices)
        // Borrowed for the whole sort, so that a comparison retains nothing.
        keys.withUnsafeBufferPointer { keys in
            prefixes.withUnsafeBufferPointer { prefixes in
                columns.withUnsafeBufferPointer { columns in
                    ascending.withUnsafeBufferPointer { ascending in
                        positions.sort { a, b in
                            var first = 0
                            if !prefixes.isEmpty {
                                let x = prefixes[a], y = prefixes[b]
                                if x != y { return (x < y) == ascending[0] }
                                if SortColumn.prefixDecides(x) { first = 1 }
                            }
                            for index in first..<columns.count {
                                let order = columns[index].compare(a, b)
                                if order != 0 { return (order < 0) == ascending[index] }
                            }
                            return keys[a] < keys[b]
                        }
                    }
                }
            }
        }
        matches = positions.map { matches[$0] }
    }

    // MARK: - Planning

    private func choosePlan(tableCount: Int) -> Plan {
        let plans = possiblePlans(tableCount: tableCount)
        // A forced plan (a test's FetchOverride) only where it is possible.
        if let forced = override?.plan, let plan = plans.first(where: { $0.strategy == forced }) { return plan }
        return plans[0]
    }

    /// The strategies of ``possiblePlans(tableCount:)``, for FetchOverride's callers.
    func possibleStrategies() -> [FetchPlan.Strategy] {
        possiblePlans(tableCount: snapshot.state.table(entity).count).map(\.strategy)
    }

    /// Every plan that can answer the request, the best first: lookups in
    /// the indexes of the conjuncts they can answer, fewest records first;
    /// an index walk in sort order to fill a limit; the full scan, always
    /// possible, last. A new kind of plan is one more candidate here.
    private func possiblePlans(tableCount: Int) -> [Plan] {
        var ranges: [Int: SecondaryIndex.Range] = [:]
        var planned: [Int: Int] = [:]
        let conjuncts = predicate.map(Self.conjuncts) ?? []
        for conjunct in conjuncts {
            guard let (slot, range) = Self.indexRange(conjunct, in: entity), snapshot.state.index(entity, slot: slot) != nil else { continue }
            ranges[slot] = ranges[slot].map { $0.intersected(with: range) } ?? range
            planned[slot, default: 0] += 1
        }
        let candidates = ranges.compactMap { slot, range in
            snapshot.state.index(entity, slot: slot).map { (index: $0, range: range, estimate: $0.estimate(range)) }
        }
        var plans: [Plan] = []
        for candidate in candidates.sorted(by: { ($0.estimate, $0.index.slot) < ($1.estimate, $1.index.slot) }) {
            let covers = planned[candidate.index.slot] == conjuncts.count && !(predicate?.usesDerivedAttributes ?? false)
            plans.append(Plan(strategy: .indexLookup(attribute: entity.attributes[candidate.index.slot].name), estimate: candidate.estimate, lookup: (candidate.index, candidate.range), covers: covers))
        }
        // The relationship's links come first when they give no more
        // candidates than the best index (or the table): both are then read
        // by key alike.
        let bound = plans.first?.estimate ?? tableCount
        if !readsUnsavedLinks, let related = RelationshipLookup.best(for: conjuncts, of: entity, in: snapshot, scanBudget: bound) {
            // The other conjuncts are tested on each candidate; the one the
            // lookup answered too, unless every candidate passes it.
            let others = conjuncts.indices.filter { $0 != related.conjunct }.map { conjuncts[$0] }
            let plan = Plan(strategy: .relationshipLookup(relationship: related.relationship), estimate: related.keys.count, relatedKeys: related.keys,
                            covers: related.isExact && others.isEmpty, residual: related.isExact ? .and(others) : nil)
            plans.insert(plan, at: related.keys.count <= bound ? 0 : plans.count)
        }
        if request.fetchLimit > 0, let first = sorts.first, first.key.options.isEmpty, let slot = first.path.directAttribute,
           let index = snapshot.state.index(entity, slot: slot) {
            plans.append(Plan(strategy: .indexOrder(attribute: entity.attributes[slot].name), estimate: min(tableCount, request.fetchOffset + request.fetchLimit), order: index))
        }
        plans.append(Plan(strategy: .fullScan, estimate: tableCount))
        return plans
    }

    private static func conjuncts(_ predicate: BoundPredicate) -> [BoundPredicate] {
        if case .and(let parts) = predicate { return parts.flatMap(conjuncts) }
        return [predicate]
    }

    /// The index range a comparison of a plain attribute of `entity` with
    /// constants selects, when an index can answer it.
    static func indexRange(_ predicate: BoundPredicate, in entity: EntityDescription) -> (Int, SecondaryIndex.Range)? {
        guard case .comparison(let comparison) = predicate, comparison.modifier == .direct, comparison.options.isEmpty else { return nil }
        var op = comparison.operator
        let slot: Int, constant: BoundExpression
        if case .path(let path) = comparison.left, let direct = path.directAttribute {
            slot = direct
            constant = comparison.right
        } else if case .path(let path) = comparison.right, let direct = path.directAttribute {
            slot = direct
            constant = comparison.left
            switch op {
            case .less: op = .greater
            case .lessOrEqual: op = .greaterOrEqual
            case .greater: op = .less
            case .greaterOrEqual: op = .lessOrEqual
            case .equal: break
            default: return nil
            }
        } else {
            return nil
        }
        guard let values = Self.constants(constant) else { return nil }
        // A single value only where one was written: `age == {5}` compares
        // a number with a list, which never matches.
        let isSingle: Bool
        if case .constant(.value) = constant { isSingle = true } else { isSingle = false }
        // The index is in the sort order of the attribute's kind; it
        // answers for constants of that kind only. A constant of another
        // kind is left to the scan, which applies the predicate order
        // (where, for one, a UUID equals a string that spells it).
        let type = entity.attributes[slot].type
        guard values.allSatisfy({ $0 == .null || Self.indexOrders(type, $0) }) else { return nil }
        switch op {
        case .equal:
            guard isSingle else { return nil }
            return (slot, .equal(to: values))
        case .in:
            guard case .list = Self.listForm(constant) else { return nil }
            // Nil is never in a collection.
            return (slot, .equal(to: values.filter { $0 != .null }))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard isSingle, values[0] != .null else { return nil }
            let bound = (value: values[0], inclusive: op == .lessOrEqual || op == .greaterOrEqual)
            let below = op == .less || op == .lessOrEqual
            return (slot, .between(lower: below ? nil : bound, upper: below ? bound : nil))
        case .between:
            guard values.count == 2, !values.contains(.null) else { return nil }
            return (slot, .between(lower: (values[0], true), upper: (values[1], true)))
        default:
            return nil
        }
    }

    /// Whether an index of `type` holds `value`'s kind, so that its order
    /// is the predicate order for it.
    private static func indexOrders(_ type: AttributeType, _ value: StoredValue) -> Bool {
        switch (type, value) {
        case (.bool, _), (.int16, _), (.int32, _), (.int64, _), (.double, _), (.float, _), (.date, _), (.decimal, _):
            value.numeric != nil
        case (.string, .string), (.url, .string), (.uuid, .uuid), (.data, .data), (.transformable, .data): true
        default: false
        }
    }

    private static func listForm(_ expression: BoundExpression) -> Operand? {
        switch expression {
        case .constant(let operand): operand
        case .list: .list([])
        default: nil
        }
    }

    /// The stored values of a constant or a list of constants.
    private static func constants(_ expression: BoundExpression) -> [StoredValue]? {
        func values(_ operand: Operand) -> [StoredValue]? {
            switch operand {
            case .value(let value): return [value]
            case .list(let items):
                var result: [StoredValue] = []
                for item in items {
                    guard case .value(let value) = item else { return nil }
                    result.append(value)
                }
                return result
            case .object: return nil
            }
        }
        switch expression {
        case .constant(let operand): return values(operand)
        case .list(let items):
            var result: [StoredValue] = []
            for item in items {
                guard case .constant(.value(let value)) = item else { return nil }
                result.append(value)
            }
            return result
        default: return nil
        }
    }
}
