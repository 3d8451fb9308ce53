// A test hook: how a sort key orders two objects, taken straight from the
// one definition of value order (ValueOrder.swift) and nothing else, for
// the differential tests to check every fetch's sort against. Fetches sort
// through typed columns (SortColumn.swift); this is their reference.

import Foundation

extension SortKey {
    /// How the values of ``keyPath`` for `a` and `b` (with their unsaved
    /// changes) order by `StoredValue.sortOrder`, strings folded as
    /// ``options`` ask, related objects by key. Ascending: ``ascending``,
    /// and ties, are the caller's.
    ///
    /// - Throws: `.unknownKey` for a key path the objects' entity lacks,
    ///   `.wrongContext` when `a` has no context.
    @_spi(QueryPlans)
    public func valueOrder(_ a: ManagedObject, _ b: ManagedObject) throws(LogStoreError) -> ComparisonResult {
        guard let context = a.managedObjectContext else {
            throw LogStoreError(.wrongContext, "\(a.objectID) has no context to read \(keyPath) in", entity: a.entity.name)
        }
        let path = try PredicateBinder(model: context.store.model).path(KeyPathComponent.parse(keyPath), from: a.entity)
        func value(_ object: ManagedObject) -> Operand {
            let value = PredicateEvaluation.value(path, ObjectSubject(object: object, context: context))
            if case .value(.string(let text)) = value { return .value(.string(Comparing.fold(text, options))) }
            return value
        }
        switch (value(a), value(b)) {
        case (.value(let x), .value(let y)): return StoredValue.sortOrder(x, y)
        case (.object(_, let x), .object(_, let y)): return StoredValue.compare(x, y)
        // No related object sorts as nil does: first.
        case (.value(.null), _): return .orderedAscending
        case (_, .value(.null)): return .orderedDescending
        default: return .orderedSame
        }
    }
}
