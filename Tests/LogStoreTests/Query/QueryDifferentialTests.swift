// Differential tests of every query path (issue 21 point 4): random stores
// and requests, each answered by every plan that can answer it (forced one
// by one), with the compiled and raw-byte fast paths on and off, as
// objects, IDs and a count, all held against the objects filtered and
// sorted in memory by the one order of values. The generators and the
// check are shared with the query-plans fuzz target (Fuzz/Targets).
//
// Replay or explore:
//   LOGSTORE_DIFF_SEED=N swift test --filter QueryDifferentialTests       # the case a failure names
//   LOGSTORE_DIFF_SECONDS=1800 swift test --filter QueryDifferentialTests # a long run from a random seed

import Foundation
import LogStoreFuzzTargets
import Testing
@_spi(QueryPlans) @testable import LogStore

@Suite("Query plans agree with in-memory evaluation")
struct QueryDifferentialTests {
    /// Seeds and duration from the environment. Without them, a fixed
    /// number of stores from a fixed seed (a few seconds), so the suite
    /// stays quick and every run checks the same cases.
    struct Settings {
        var firstSeed: UInt64
        /// Cases run at least, and at most (unless `seconds` asks for more).
        var minimumCases: Int
        var maximumCases: Int
        var seconds: Double

        static func fromEnvironment() -> Settings {
            let environment = ProcessInfo.processInfo.environment
            let seed = environment["LOGSTORE_DIFF_SEED"].flatMap { UInt64($0) }
            let seconds = environment["LOGSTORE_DIFF_SECONDS"].flatMap(Double.init)
            if let seed, seconds == nil {
                // Replaying the case a failure named.
                return Settings(firstSeed: seed, minimumCases: 1, maximumCases: 1, seconds: 0)
            }
            if let seconds {
                return Settings(firstSeed: seed ?? UInt64.random(in: 0...UInt64(UInt32.max)), minimumCases: 1, maximumCases: .max, seconds: seconds)
            }
            return Settings(firstSeed: 1, minimumCases: 80, maximumCases: 80, seconds: 0)
        }
    }

    static let size = QueryDifferential.Size(items: 24, requests: 12, largeStores: true)

    @Test("Every plan, fast path and fetch form returns what filtering and sorting in memory returns")
    func everyPlanAgrees() throws {
        let settings = Settings.fromEnvironment()
        var differential = QueryDifferential()
        let started = Date()
        try withTemporaryDirectory { directory in
            var seed = settings.firstSeed
            while differential.cases < settings.maximumCases
                && (differential.cases < settings.minimumCases || Date().timeIntervalSince(started) < settings.seconds) {
                let path = directory + "/case-\(seed).logstore"
                try differential.run(Choices(seed: seed), size: Self.size, at: path, label: "LOGSTORE_DIFF_SEED=\(seed)")
                try? FileManager.default.removeItem(atPath: path)
                seed &+= 1
            }
        }
        print("query plans: \(differential.summary) (seeds \(settings.firstSeed)…)")
        for failure in differential.failures.prefix(5) { Issue.record(Comment(rawValue: failure)) }
        #expect(differential.failures.count == 0, "requests disagreed; replay one with the seed it names")
        // A run that forced no plan of some kind, or never had unsaved
        // changes, would pass without testing what it claims to.
        if settings.minimumCases > 1 {
            for kind in ["full scan", "index lookup", "index order", "relationship lookup"] {
                #expect(differential.plansForced[kind, default: 0] > 0, "no request could use \(kind)")
            }
            #expect(differential.requestsWithPendingChanges > 0)
            #expect(differential.unparsable * 4 < differential.requests, "most generated predicates should parse back")
        }
    }

    @Test("The hooks offer each plan that can answer a request, force it, and refuse one that cannot")
    func hooksForcePossiblePlansOnly() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/items.logstore", model: QueryPlanModel.model, options: JournalOptions(durability: .deferredToOS))
            defer { store.close() }
            let context = store.newContext()
            for value in [Int64(3), 42, 3] {
                let item = try context.insert(QueryPlanModel.entity)
                item["int64"] = value
                item["string"] = "s\(value)"
            }
            try context.save()
            let request = FetchRequest(entityName: QueryPlanModel.entity, predicate: try ObjectPredicate("int64 == 3 AND string BEGINSWITH 's'"), sortDescriptors: [SortKey("string")], fetchLimit: 1)
            let plans = try context.possiblePlans(for: request)
            #expect(plans == [.indexLookup(attribute: "int64"), .indexOrder(attribute: "string"), .fullScan])
            for plan in plans {
                #expect(try FetchOverride(plan: plan).run { try context.explain(request) }.strategy == plan)
            }
            // No conjunct on plainInt64 that an index answers: the planner's choice.
            let impossible = FetchOverride(plan: .indexLookup(attribute: "plainInt64"), compiledPredicates: false, rawTests: false)
            #expect(try impossible.run { try context.explain(request) }.strategy == plans[0])
            #expect(try context.explain(request).strategy == plans[0])
        }
    }

    // MARK: - Regressions: the smallest cases of each disagreement found

    /// Checks `format` with `sort` and `limit` every way on the items
    /// `build` makes (returning the live ones) in a fresh store, and
    /// records the report when some way disagrees.
    static func expectAgreement(
        _ format: String, sort: [SortKey] = [], limit: Int = 0,
        _ build: (ObjectContext) throws -> [ManagedObject], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/items.logstore", model: QueryPlanModel.model, options: JournalOptions(durability: .deferredToOS))
            defer { store.close() }
            let context = store.newContext()
            let objects = try build(context)
            let request = FetchRequest(entityName: QueryPlanModel.entity, predicate: try ObjectPredicate(format: format, argumentArray: []), sortDescriptors: sort, fetchLimit: limit)
            let check = QueryPlanCheck(request, in: context, objects: objects)
            #expect(check.agrees, Comment(rawValue: check.report(request)), sourceLocation: sourceLocation)
        }
    }

    /// A saved parent and its saved child.
    static func family(_ context: ObjectContext, parentInt64: Int64? = nil, childInt64: Int64? = nil) throws -> (parent: ManagedObject, child: ManagedObject) {
        let parent = try context.insert(QueryPlanModel.entity)
        let child = try context.insert(QueryPlanModel.entity)
        parent["int64"] = parentInt64
        child["int64"] = childInt64
        child["parent"] = parent
        try context.save()
        return (parent, child)
    }

    @Test("A saved object whose child was deleted, unsaved, has lost that child in a fetch")
    func deletedChildIsGoneFromItsParent() throws {
        try Self.expectAgreement("children.@count == 0") { context in
            let (parent, child) = try Self.family(context)
            try context.delete(child)
            return [parent]
        }
    }

    @Test("A saved object not loaded, given a new child, unsaved, has that child in a fetch")
    func insertedChildCountsInItsSavedParent() throws {
        try Self.expectAgreement("children.@count == 1") { context in
            // Saved by another context: this one has the parent as a fault.
            let writer = context.store.newContext()
            let saved = try writer.insert(QueryPlanModel.entity)
            try writer.save()
            let parent = try context.object(with: saved.objectID)
            let child = try context.insert(QueryPlanModel.entity)
            child["parent"] = parent
            return [parent, child]
        }
    }

    @Test("A loaded object whose parent was deleted, unsaved, has no parent in a fetch")
    func deletedParentIsGoneFromItsLoadedChildren() throws {
        try Self.expectAgreement("parent == nil") { context in
            let (parent, child) = try Self.family(context)
            try context.delete(parent)
            return [child]
        }
    }

    @Test("An object not loaded whose parent was deleted, unsaved, has no parent in a fetch")
    func deletedParentIsGoneFromChildrenNotLoaded() throws {
        try Self.expectAgreement("parent == nil") { context in
            // Saved by another context: this one has not loaded the child.
            let (parent, child) = try Self.family(context.store.newContext())
            try context.delete(try context.object(with: parent.objectID))
            return [try context.object(with: child.objectID)]
        }
    }

    @Test("An unsaved change to a child counts in its saved parent's ANY children")
    func unsavedChildValueCountsThroughTheParent() throws {
        try Self.expectAgreement("ANY children.int64 == 2") { context in
            let (parent, child) = try Self.family(context, childInt64: 1)
            child["int64"] = Int64(2)
            return [parent, child]
        }
    }

    @Test("An unsaved change to a parent counts in its saved child's parent.x")
    func unsavedParentValueCountsThroughTheChild() throws {
        try Self.expectAgreement("parent.int64 == 2") { context in
            let (parent, child) = try Self.family(context, parentInt64: 1)
            parent["int64"] = Int64(2)
            return [parent, child]
        }
    }

    @Test("A sort by parent.x uses the parent's unsaved value")
    func sortThroughAChangedParent() throws {
        try Self.expectAgreement("TRUEPREDICATE", sort: [SortKey("parent.int64")]) { context in
            let (first, firstChild) = try Self.family(context, parentInt64: 1)
            let (second, secondChild) = try Self.family(context, parentInt64: 2)
            first["int64"] = Int64(3)
            return [first, firstChild, second, secondChild]
        }
    }
}
