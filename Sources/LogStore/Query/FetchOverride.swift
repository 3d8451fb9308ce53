// A test hook: force a fetch's plan and switch its fast paths off, so that
// the differential tests and the query-plans fuzz target can run one
// request every way LogStore can answer it and compare the answers. Not
// public API: apps reach it only through `@_spi(QueryPlans) import`.

/// How fetches run while ``run(_:)`` runs its body: with a chosen plan
/// instead of the planner's, and with the compiled predicate and the
/// raw-byte tests on or off.
///
/// A plan is honoured only where it can answer the request (see
/// ``ObjectContext/possiblePlans(for:)``); otherwise the planner chooses
/// as usual. ``ObjectContext/explain(_:)`` reports the plan a fetch used,
/// so a caller can tell which happened.
@_spi(QueryPlans)
public struct FetchOverride: Sendable, Hashable, CustomStringConvertible {
    /// The plan to use, or nil for the planner's choice.
    public var plan: FetchPlan.Strategy?
    /// Whether records are tested by the compiled predicate, with its
    /// direct paths for `attribute op constant` (otherwise by the general
    /// evaluator).
    public var compiledPredicates: Bool
    /// Whether comparisons of an attribute with a constant may be decided
    /// on a record's encoded bytes before it is decoded.
    public var rawTests: Bool

    /// An override of the plan and of each fast path; the defaults change nothing.
    public init(plan: FetchPlan.Strategy? = nil, compiledPredicates: Bool = true, rawTests: Bool = true) {
        self.plan = plan
        self.compiledPredicates = compiledPredicates
        self.rawTests = rawTests
    }

    /// Runs `body` with every fetch it makes on this thread (or task)
    /// following this override.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        try Self.$current.withValue(self, operation: body)
    }

    public var description: String {
        var parts = [plan.map { "\($0)" } ?? "planner's choice"]
        if !compiledPredicates { parts.append("no compiled predicate") }
        if !rawTests { parts.append("no raw-byte tests") }
        return parts.joined(separator: ", ")
    }

    /// The override in force; nil outside ``run(_:)``. A task-local, so
    /// that tests running at once do not see each other's.
    @TaskLocal static var current: FetchOverride?
}

extension ObjectContext {
    /// Every plan that can answer `request` now, the planner's choice
    /// first; each can be forced with ``FetchOverride``.
    @_spi(QueryPlans)
    public func possiblePlans(for request: FetchRequest) throws(LogStoreError) -> [FetchPlan.Strategy] {
        checkConfinement()
        return try FetchExecution(request, in: self).possibleStrategies()
    }
}
