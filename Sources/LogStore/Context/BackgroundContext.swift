// A context confined to its own serial queue.

import Dispatch

/// A context that runs on its own serial queue: Core Data's private-queue
/// context. Reach its ``ObjectContext`` only inside ``perform(_:)``, and
/// hand results out as ``ObjectID``s or other `Sendable` values.
///
/// ```swift
/// let background = store.newBackgroundContext()
/// let ids = try await background.perform { context in try context.fetchIDs("Person") }
/// let people = try ids.map { try store.mainContext.object(with: $0) }   // on the main actor
/// ```
///
/// `@unchecked Sendable`: the context inside is touched only on `queue`,
/// which `perform` and `performAndWait` guarantee.
public final class BackgroundContext: @unchecked Sendable {
    private let queue: DispatchQueue
    private let context: ObjectContext
    private let onQueue = DispatchSpecificKey<Bool>()

    init(store: Store) {
        queue = DispatchQueue(label: "LogStore.BackgroundContext")
        context = ObjectContext(store: store)
        queue.setSpecific(key: onQueue, value: true)
        context.confinement = .queue(onQueue)
    }

    /// Runs `body` with the context on its queue and returns its result.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body(self.context) })
            }
        }
    }

    /// Runs `body` with the context on its queue, blocking the caller until
    /// it returns. Calling it from the context's own queue runs `body` at once.
    ///
    /// `body` is `@Sendable` and its result `Sendable`, so the compiler
    /// refuses a closure that hands the context or its objects out (by
    /// returning them, or by storing them in a variable of the caller).
    public func performAndWait<T: Sendable>(_ body: @Sendable (ObjectContext) throws -> T) rethrows -> T {
        if DispatchQueue.getSpecific(key: onQueue) == true { return try body(context) }
        return try queue.sync { try body(context) }
    }

    /// Whether the caller runs on this context's queue.
    var isOnQueue: Bool { DispatchQueue.getSpecific(key: onQueue) == true }
}
