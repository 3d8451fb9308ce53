// One request answered every way LogStore can answer it, held against a
// reference computed from the definitions alone: the objects filtered in
// memory by `Sequence.filter(_:)`, sorted by `StoredValue.sortOrder` (via
// `SortKey.valueOrder`), ties by key, then windowed.

import Foundation
@_spi(QueryPlans) import LogStore

/// What a check of one request found.
public struct QueryPlanCheck {
    /// What one way of answering gave: the IDs in order, or that it threw.
    enum Answer: Equatable, CustomStringConvertible {
        case ids([ObjectID])
        case threw(String)

        static func == (lhs: Answer, rhs: Answer) -> Bool {
            switch (lhs, rhs) {
            case (.ids(let a), .ids(let b)): a == b
            // Whether a request is refused cannot depend on the plan; the
            // words may.
            case (.threw, .threw): true
            default: false
            }
        }

        var description: String {
            switch self {
            case .ids(let ids): "[" + ids.map { "\($0.key)" }.joined(separator: ", ") + "]"
            case .threw(let message): "threw: \(message)"
            }
        }

        var ids: [ObjectID] {
            if case .ids(let ids) = self { return ids }
            return []
        }
    }

    /// The plans run (forced one by one), e.g. "index lookup on int64".
    public private(set) var plans: [FetchPlan.Strategy] = []
    /// How many fetches and counts ran.
    public private(set) var fetches = 0
    /// Each way that disagreed with the reference, and what it returned.
    public private(set) var disagreements: [String] = []
    /// The reference's answer, and the objects that some way answered
    /// differently about, described value by value.
    public private(set) var reference = ""
    public private(set) var involved: [String] = []

    public var agrees: Bool { disagreements.isEmpty }

    /// Runs `request` in `context` with every possible plan, each fast path
    /// on and off, as objects, as IDs and as a count, and compares each
    /// with the reference over `objects` (every live object of the entity).
    public init(_ request: FetchRequest, in context: ObjectContext, objects: [ManagedObject]) {
        let expected = Self.reference(request, objects)
        reference = expected.description
        var differing = Set<ObjectID>()
        func compare(_ answer: Answer, _ way: String) {
            fetches += 1
            guard answer != expected else { return }
            disagreements.append("\(way): \(answer)")
            differing.formUnion(Set(answer.ids).symmetricDifference(expected.ids))
            if Set(answer.ids) == Set(expected.ids) { differing.formUnion(answer.ids) }
        }
        let plans: [FetchPlan.Strategy]
        do { plans = try context.possiblePlans(for: request) } catch {
            compare(.threw("\(error)"), "planning")
            return
        }
        self.plans = plans
        for plan in plans {
            for (compiled, raw) in [(true, true), (false, true), (true, false), (false, false)] {
                let override = FetchOverride(plan: plan, compiledPredicates: compiled, rawTests: raw)
                override.run {
                    if let used = try? context.explain(request).strategy, used != plan {
                        disagreements.append("\(override): the plan could not be forced; the fetch used \(used)")
                    }
                    compare(Self.answer { try context.fetchIDs(request) }, "fetchIDs, \(override)")
                    guard compiled && raw else { return }
                    compare(Self.answer { try context.fetch(request).map(\.objectID) }, "fetch, \(override)")
                    fetches += 1
                    switch (Result { try context.count(for: request) }, expected) {
                    case (.success(let count), .ids(let ids)) where count == ids.count: break
                    case (.failure, .threw): break
                    case (let counted, _): disagreements.append("count(for:), \(override): \(counted)")
                    }
                }
            }
        }
        involved = objects.filter { differing.contains($0.objectID) }.prefix(8).map(Self.describe)
    }

    /// A multi-line account of a disagreement: the request, the reference,
    /// each way that differed, and the objects involved.
    public func report(_ request: FetchRequest) -> String {
        var lines = ["predicate: \(request.predicate?.description ?? "none")"]
        let sorts = request.sortDescriptors.map { "\($0.keyPath)\($0.options)\($0.ascending ? "" : " descending")" }
        lines.append("sort: \(sorts.isEmpty ? "none" : sorts.joined(separator: ", ")); limit \(request.fetchLimit), offset \(request.fetchOffset)")
        lines.append("reference (filter in memory, sort by sortOrder): \(reference)")
        lines += disagreements.map { "  " + $0 }
        if !involved.isEmpty { lines.append("objects involved:") }
        lines += involved.map { "  " + $0 }
        return lines.joined(separator: "\n")
    }

    private static func answer(_ body: () throws -> [ObjectID]) -> Answer {
        do { return .ids(try body()) } catch { return .threw("\(error)") }
    }

    /// The definition of the answer: the objects the predicate selects in
    /// memory, sorted by each key's value order (`StoredValue.sortOrder`),
    /// ties by key as a fetch breaks them, then the window.
    static func reference(_ request: FetchRequest, _ objects: [ManagedObject]) -> Answer {
        do {
            var matched = try request.predicate.map { predicate throws(LogStoreError) in try objects.filter(predicate) } ?? objects
            var failure: (any Error)?
            matched.sort { a, b in
                for key in request.sortDescriptors {
                    let order: ComparisonResult
                    do { order = try key.valueOrder(a, b) } catch {
                        failure = error
                        return false
                    }
                    if order != .orderedSame { return (order == .orderedAscending) == key.ascending }
                }
                return a.objectID.key < b.objectID.key
            }
            if let failure { throw failure }
            let start = min(request.fetchOffset, matched.count)
            let end = request.fetchLimit > 0 ? min(matched.count, start + request.fetchLimit) : matched.count
            return .ids(matched[start..<end].map(\.objectID))
        } catch {
            return .threw("\(error)")
        }
    }

    /// An object's key, state and non-nil values, as a failure prints it.
    static func describe(_ object: ManagedObject) -> String {
        var parts = ["\(object.objectID.key)\(object.isInserted ? " (unsaved insert)" : object.hasChanges ? " (unsaved changes)" : "")"]
        for kind in ValueKind.allCases {
            for name in [kind.indexed, kind.plain] {
                guard let value = object[name] else { continue }
                let text = switch value {
                case let text as String: text.debugDescription
                // Foundation cannot describe the far ends of time.
                case let date as Date: "date(\(date.timeIntervalSinceReferenceDate))"
                default: "\(value)"
                }
                parts.append("\(name)=\(text)")
            }
        }
        if let parent = object["parent"] as? ManagedObject { parts.append("parent=\(parent.objectID.key)") }
        if let children = try? object.objectIDs(forRelationshipNamed: "children"), !children.isEmpty {
            parts.append("children=\(children.map(\.key))")
        }
        return parts.joined(separator: " ")
    }
}
