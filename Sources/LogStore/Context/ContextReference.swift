// What an object holds of its context.

import Foundation

/// An object's way back to its context, shared by every object of one
/// context: the store's ID, and the context until it is released.
///
/// Objects hold their context weakly, as Core Data's do, but a `weak`
/// reference in every object gave the context a side table: each object
/// made paid to form a weak reference, each access to load one, and every
/// retain of the context went the slow way. One strong reference to this
/// instead, which the context clears as it goes, costs a plain retain.
final class ContextReference {
    /// The context, until its deinit clears it. Unowned and unchecked:
    /// the context and its objects are confined to one isolation domain,
    /// so nothing reads this while the context is being released, and the
    /// context sets it to nil before its memory goes.
    unowned(unsafe) var context: ObjectContext?
    /// The ID of the context's store, which its objects' IDs carry.
    let storeID: UUID

    init(storeID: UUID) { self.storeID = storeID }
}
