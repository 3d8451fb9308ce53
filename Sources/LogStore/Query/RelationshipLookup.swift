// A fetch's candidates from the store's relationship pointers: the records
// linked to given objects (`project == %@`, `project IN %@`, `ANY tags ==
// %@`), to objects whose attribute matches (`project.name == "Home"`), or
// to none (`project == nil`), found without reading the fetched entity's
// other records.

/// The committed records of a fetched entity that one conjunct of the
/// predicate can match, found through the relationship pointers the
/// committed state keeps (``CommittedState/pointers``): a fetch's
/// candidates in place of a scan.
///
/// Related means what ``RecordSubject/related(_:)`` reads, so that testing
/// the candidates gives exactly a scan's answer: the live records a stored
/// side holds, and for a derived side the live records whose inverse holds
/// this one. Unsaved changes are not its business: the fetch skips the
/// committed records of objects the context changed and tests those objects
/// in memory, whatever found the candidates.
struct RelationshipLookup {
    /// The fetched entity's relationship the lookup starts from, for
    /// ``FetchPlan/Strategy/relationshipLookup(relationship:)``.
    let relationship: String
    /// The position of the conjunct it answers among the predicate's.
    var conjunct = 0
    /// Live keys of the fetched entity, in increasing order: every
    /// committed record that can match the conjunct.
    let keys: [UInt64]
    /// Whether every key matches the conjunct, so that it need not be tested.
    let isExact: Bool

    /// The lookup with the fewest candidates among `conjuncts`; nil when
    /// none has a form a lookup answers. `scanBudget` is the most records
    /// of a related entity a lookup may read to find those whose
    /// unindexed attribute matches (`project.color == "red"`): beyond it,
    /// a scan of the fetched entity or an index is expected to cost less.
    static func best(for conjuncts: [BoundPredicate], of entity: EntityDescription, in snapshot: StateSnapshot, scanBudget: Int) -> RelationshipLookup? {
        let links = CommittedLinks(snapshot: snapshot)
        return conjuncts.enumerated().compactMap { position, conjunct in
            var lookup = RelatedCondition(conjunct).flatMap { links.lookup($0, from: entity, scanBudget: scanBudget) }
            lookup?.conjunct = position
            return lookup
        }.min { $0.keys.count < $1.keys.count }
    }
}

/// A conjunct a relationship lookup answers: a comparison of a key path
/// through relationships with constants.
private struct RelatedCondition {
    enum Kind {
        /// The path's objects include one of these (`project == %@`,
        /// `project IN %@`, `ANY tags == %@`, `tags CONTAINS %@`,
        /// `%@ IN tags`).
        case objects([(entity: Int, key: UInt64)])
        /// The path's one to-one relationship reads nil (`project == nil`).
        case none
        /// The path's attribute passes `test`, the same comparison of the
        /// attribute of the path's last entity alone (`project.name ==
        /// "Home"` tests `name == "Home"` on projects).
        case attribute(test: BoundComparison)
    }

    let path: BoundPath
    let kind: Kind

    init?(_ predicate: BoundPredicate) {
        guard case .comparison(let comparison) = predicate else { return nil }
        let path: BoundPath, constant: Operand, pathIsLeft: Bool
        if case .path(let left) = comparison.left, let right = Self.constant(comparison.right) {
            (path, constant, pathIsLeft) = (left, right, true)
        } else if case .path(let right) = comparison.right, let left = Self.constant(comparison.left) {
            (path, constant, pathIsLeft) = (right, left, false)
        } else {
            return nil
        }
        guard !path.steps.isEmpty else { return nil }
        self.path = path
        let op = comparison.operator
        // A to-many path on the left compared directly means "any of its
        // objects", as ANY does, except with CONTAINS, which takes the
        // collection itself (PredicateEvaluation).
        let eachElement = path.isCollection && pathIsLeft && (comparison.modifier == .any || (comparison.modifier == .direct && op != .contains))
        let isPlain = !path.isCollection && comparison.modifier == .direct
        switch path.tail {
        case .objects:
            let one = Self.object(constant)
            if eachElement && op == .equal, let one {
                kind = .objects([one])
            } else if eachElement && op == .in, case .list(let items) = constant {
                kind = .objects(items.compactMap(Self.object))
            } else if path.isCollection && comparison.modifier == .direct && (pathIsLeft ? op == .contains : op == .in), let one {
                // `tags CONTAINS %@`, `%@ IN tags`.
                kind = .objects([one])
            } else if isPlain && op == .equal, let one {
                kind = .objects([one])
            } else if isPlain && op == .in && pathIsLeft, case .list(let items) = constant {
                // Nil is never in a collection, and other values never equal an object.
                kind = .objects(items.compactMap(Self.object))
            } else if isPlain && op == .equal && path.steps.count == 1, case .value(.null) = constant {
                kind = .none
            } else {
                return nil
            }
        case .attribute(let slot):
            guard eachElement || isPlain else { return nil }
            let attribute = BoundPath(steps: [], tail: .attribute(slot), entity: path.entity)
            var test = comparison
            test.modifier = .direct
            if pathIsLeft { test.left = .path(attribute) } else { test.right = .path(attribute) }
            // A to-one path that reaches no object reads nil: a comparison
            // that holds for nil holds for records no lookup of the related
            // records finds. Through a to-many, no object means no match.
            if isPlain {
                let null = Operand.value(.null)
                if Comparing.holds(test, pathIsLeft ? null : constant, pathIsLeft ? constant : null) { return nil }
            }
            kind = .attribute(test: test)
        default:
            return nil
        }
    }

    /// An expression's value when it is made of constants only.
    private static func constant(_ expression: BoundExpression) -> Operand? {
        switch expression {
        case .constant(let operand): return operand
        case .list(let items):
            var operands: [Operand] = []
            for item in items {
                guard let operand = constant(item) else { return nil }
                operands.append(operand)
            }
            return .list(operands)
        default: return nil
        }
    }

    private static func object(_ operand: Operand) -> (entity: Int, key: UInt64)? {
        if case .object(let entity, let key) = operand { return (entity, key) }
        return nil
    }
}

/// The committed state's links, read in both directions as
/// ``RecordSubject/related(_:)`` reads them forwards.
private struct CommittedLinks {
    let snapshot: StateSnapshot
    var state: CommittedState { snapshot.state }

    func lookup(_ condition: RelatedCondition, from entity: EntityDescription, scanBudget: Int) -> RelationshipLookup? {
        let path = condition.path
        // The entity each step leaves from, and the one the path ends at.
        var entities = [entity]
        for step in path.steps {
            entities.append(snapshot.model.entities[entities[entities.count - 1].relationships[step.index].destinationIndex])
        }
        let end = entities[entities.count - 1]
        let first = entity.relationships[path.steps[0].index]
        var keys: Set<UInt64>
        switch condition.kind {
        case .none:
            return RelationshipLookup(relationship: first.name, keys: unlinked(entity, through: path.steps[0].index), isExact: true)
        case .objects(let objects):
            let table = state.table(end)
            keys = Set(objects.lazy.filter { $0.entity == end.index && table.contains($0.key) }.map(\.key))
        case .attribute(let test):
            guard let found = records(of: end, passing: test, budget: scanBudget) else { return nil }
            keys = found
        }
        for (position, step) in path.steps.enumerated().reversed() {
            keys = referrers(of: keys, from: entities[position], through: step.index)
        }
        // A to-one path reads its first object only; through a derived
        // to-one, a record may have more (links left inconsistent), so a
        // candidate found through any of them is tested again.
        let isExact = path.isCollection || zip(entities, path.steps).allSatisfy { $0.relationships[$1.index].isStored }
        return RelationshipLookup(relationship: first.name, keys: keys.sorted(), isExact: isExact)
    }

    /// The live records of `source` whose relationship `index` holds one of
    /// `targets` (live records of its destination).
    private func referrers(of targets: Set<UInt64>, from source: EntityDescription, through index: Int) -> Set<UInt64> {
        let relationship = source.relationships[index]
        var found = Set<UInt64>()
        if relationship.isStored {
            // The pointers are the stored side read backwards, kept for live records only.
            let slot = source.attributes.count + index
            for target in targets { found.formUnion(state.pointers(from: source.name, slot: slot, to: target)) }
            return found
        }
        // A derived side is its inverse read backwards: the inverse's
        // stored values in each target, which may name deleted records.
        let destination = snapshot.model.entities[relationship.destinationIndex]
        let inverseSlot = destination.attributes.count + relationship.inverseIndex
        let targetTable = state.table(destination), sourceTable = state.table(source)
        var wanted = Array(repeating: false, count: inverseSlot + 1)
        wanted[inverseSlot] = true
        var values: [StoredValue] = []
        for target in targets {
            guard targetTable.withValueBytes(target, { EntityTable.decode($0, wanted: wanted, into: &values) }) != nil,
                  inverseSlot < values.count else { continue }
            for key in CommittedState.targets(values[inverseSlot]) where sourceTable.contains(key) { found.insert(key) }
        }
        return found
    }

    /// The live records of `entity` whose attribute passes `test`: from the
    /// attribute's index when it has one, else by reading every record,
    /// when there are at most `budget`.
    private func records(of entity: EntityDescription, passing test: BoundComparison, budget: Int) -> Set<UInt64>? {
        if let (slot, range) = FetchExecution.indexRange(.comparison(test), in: entity), let index = state.index(entity, slot: slot) {
            return Set(index.keys(in: range))
        }
        let table = state.table(entity)
        let slots = BoundPredicate.comparison(test).directSlots
        guard table.count <= budget, let last = slots.max(), last != Int.max else { return nil }
        var wanted = Array(repeating: false, count: last + 1)
        for slot in slots { wanted[slot] = true }
        let passes: (RecordSubject) -> Bool = CompiledPredicate.compile(.comparison(test))
        var values: [StoredValue] = []
        var found = Set<UInt64>()
        table.forEachRecord { key, bytes in
            EntityTable.decode(bytes, wanted: wanted, into: &values)
            let passed = values.withUnsafeBufferPointer { values in
                wanted.withUnsafeBufferPointer { decoded in
                    passes(RecordSubject(snapshot: snapshot, entity: entity, key: key, values: values, decoded: decoded))
                }
            }
            if passed { found.insert(key) }
        }
        return found
    }

    /// The live records of `source` whose to-one relationship `index` reads
    /// nil, in increasing order: no live record at the other end.
    private func unlinked(_ source: EntityDescription, through index: Int) -> [UInt64] {
        let relationship = source.relationships[index]
        let destination = snapshot.model.entities[relationship.destinationIndex]
        // A key-directory leaf that fails to read is kept by the snapshot,
        // and the fetch this serves throws it (FetchExecution.checkingReads).
        var keys: [UInt64] = []
        state.table(source).forEachKey { keys.append($0) }
        if relationship.isStored {
            // Links to a deleted record (left by `noAction`) read nil too.
            let slot = source.attributes.count + index
            let targets = state.table(destination)
            var linked = Set<UInt64>()
            for (target, sources) in state.pointers[source.name]?[slot] ?? [:] where targets.contains(target) {
                linked.formUnion(sources)
            }
            return keys.filter { !linked.contains($0) }
        }
        let inverseSlot = destination.attributes.count + relationship.inverseIndex
        return keys.filter { state.pointers(from: destination.name, slot: inverseSlot, to: $0).isEmpty }
    }
}
