// One case of the query-plan differential test: a store filled from the
// choices, then requests from the same choices, each checked every way
// (QueryPlanCheck). The differential tests run it on seeds, the
// query-plans fuzz target on its input bytes.

import Foundation
import LogStore

/// Runs cases and tallies what they covered.
public struct QueryDifferential {
    /// How big a case is.
    public struct Size: Sendable {
        /// Items saved at most (unsaved inserts come on top).
        public var items: Int
        /// Requests checked per store.
        public var requests: Int
        /// Whether a store may now and then hold over a thousand items, so
        /// that indexes merge their tails (slow: not for fuzzing).
        public var largeStores: Bool

        public init(items: Int, requests: Int, largeStores: Bool = false) {
            self.items = items
            self.requests = requests
            self.largeStores = largeStores
        }
    }

    /// Stores filled.
    public private(set) var cases = 0
    /// Requests checked, and those with unsaved changes in the context.
    public private(set) var requests = 0
    public private(set) var requestsWithPendingChanges = 0
    /// Requests whose predicate did not print and parse back (skipped).
    public private(set) var unparsable = 0
    /// Fetches and counts run.
    public private(set) var fetches = 0
    /// How many requests each kind of plan was forced for: "full scan",
    /// "index lookup", "index order", "relationship lookup".
    public private(set) var plansForced: [String: Int] = [:]
    /// A report of each request on which the ways disagreed.
    public private(set) var failures: [String] = []

    public init() {}

    /// Fills a store at `path` from `choices` and checks requests on it;
    /// `label` heads each failure report (the seed that replays it).
    public mutating func run(_ choices: Choices, size: Size, at path: String, label: String) throws {
        var data = QueryDataGenerator(choices: choices, maximumItems: size.items, largeStores: size.largeStores)
        let contents = try data.make(at: path)
        defer { contents.store.close() }
        cases += 1
        var generator = QueryRequestGenerator(choices: data.choices)
        generator.items = contents.objects.map(\.objectID) + [ObjectID(storeID: UUID(), entityName: QueryPlanModel.entity, key: 1)]
        for _ in 0..<size.requests {
            guard let request = generator.request() else {
                unparsable += 1
                continue
            }
            requests += 1
            if contents.hasPendingChanges { requestsWithPendingChanges += 1 }
            check(request, in: contents.context, objects: contents.objects, label: label, contents: contents)
            if contents.hasPendingChanges {
                // Leaving the unsaved changes out must find what a context
                // without any finds.
                var saved = request
                saved.includesPendingChanges = false
                let clean = contents.store.newContext()
                let objects = try contents.savedIDs.map { id throws(LogStoreError) in try clean.object(with: id) }
                check(saved, in: contents.context, objects: objects, label: label + " (includesPendingChanges = false)", contents: contents)
            }
        }
    }

    private mutating func check(_ request: FetchRequest, in context: ObjectContext, objects: [ManagedObject], label: String, contents: QueryData) {
        let check = QueryPlanCheck(request, in: context, objects: objects)
        fetches += check.fetches
        for plan in check.plans { plansForced[Self.kind(plan), default: 0] += 1 }
        if !check.agrees {
            failures.append("\(label)\nstore: \(contents.history.joined(separator: "; "))\n\(check.report(request))")
        }
    }

    private static func kind(_ plan: FetchPlan.Strategy) -> String {
        switch plan {
        case .fullScan: "full scan"
        case .indexLookup: "index lookup"
        case .indexOrder: "index order"
        case .relationshipLookup: "relationship lookup"
        }
    }

    public var summary: String {
        let plans = plansForced.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(cases) stores, \(requests) requests (\(requestsWithPendingChanges) with unsaved changes, \(unparsable) skipped as unparsable), \(fetches) fetches; plans forced: \(plans); \(failures.count) disagreements"
    }
}
