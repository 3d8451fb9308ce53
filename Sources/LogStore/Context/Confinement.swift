// Where a context may be used, checked on every use in debug builds:
// Core Data's concurrency debugging, on by default where it costs nothing
// in release.

import Foundation

/// The isolation domain a context is confined to.
enum Confinement {
    /// Wherever the app keeps it (``Store/newContext()``): Swift 6's
    /// isolation checking confines it, and an actor may run it on any thread.
    case caller
    /// The main actor (``Store/mainContext``): the main thread, or the main queue.
    case mainThread
    /// A ``BackgroundContext``'s queue, recognised by its specific key.
    case queue(DispatchSpecificKey<Bool>)
}

extension ObjectContext {
    /// In debug builds, traps with a message naming the context and the
    /// thread when the caller is outside the context's isolation domain: a
    /// misuse is loud, not a data race. Does nothing in release builds.
    @inline(__always)
    func checkConfinement() {
        #if DEBUG
        switch confinement {
        case .caller:
            break
        case .mainThread:
            if !Self.isOnMainActor {
                confinementViolated("the main context, confined to the main actor")
            }
        case .queue(let key):
            if DispatchQueue.getSpecific(key: key) != true { confinementViolated("background context \(ObjectIdentifier(self)), confined to its queue") }
        }
        #endif
    }

    /// Whether the caller runs on the main thread or the main queue, where
    /// the main actor's work runs.
    static var isOnMainActor: Bool { Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true }

    /// Marks the main queue: on Linux it may be drained by a thread other
    /// than the main one.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    private func confinementViolated(_ context: String) -> Never {
        preconditionFailure("LogStore: \(context), or one of its objects, was used on thread \(Thread.current) (\(Thread.isMainThread ? "main" : "not main")); pass ObjectIDs between contexts and use the context only inside perform or performAndWait, or on the main actor")
    }
}
