// How a save resolves conflicts with saves made since its context loaded
// the objects: Core Data's merge policies.

/// How a save resolves a conflict: a record it writes that another save
/// changed or deleted since this context loaded it.
///
/// | LogStore | Core Data | a record changed elsewhere | a record deleted elsewhere |
/// |---|---|---|---|
/// | ``error`` | `NSErrorMergePolicy` | the save fails with `.mergeConflict` | the save fails |
/// | ``storeWins`` (``mergeByPropertyStoreTrump``) | `NSMergeByPropertyStoreTrumpMergePolicy` | properties changed on both sides take the store's values; the rest keep this context's changes | the deletion stands here too |
/// | ``objectWins`` (``mergeByPropertyObjectTrump``) | `NSMergeByPropertyObjectTrumpMergePolicy` | properties changed here are written; the others take the store's values | the save fails |
/// | ``overwrite`` | `NSOverwriteMergePolicy` | every property of the object as this context holds it is written | the save fails |
/// | ``rollback`` | `NSRollbackMergePolicy` | this context's changes to the object are dropped | the deletion stands here too |
///
/// A deletion is never undone by a policy: a save that updates, or links
/// to, a record another save deleted fails under the object-trump
/// policies, and under the store-trump ones the object is deleted in this
/// context too and this context's objects stop linking to it.
public enum MergePolicy: Sendable, Hashable {
    /// Refuse the save with `.mergeConflict`, naming every conflicting
    /// object (the default).
    case error
    /// Merge property by property; where both sides changed a property,
    /// the store's value wins.
    case storeWins
    /// Merge property by property; where both sides changed a property,
    /// this context's value wins.
    case objectWins
    /// Write the whole object as this context holds it over the store's.
    case overwrite
    /// Drop this context's changes to conflicting objects; save the rest.
    case rollback

    /// Core Data's name for ``storeWins``.
    public static let mergeByPropertyStoreTrump = MergePolicy.storeWins
    /// Core Data's name for ``objectWins``.
    public static let mergeByPropertyObjectTrump = MergePolicy.objectWins

    /// Whether a record deleted elsewhere is deleted here too (otherwise
    /// the save fails).
    var acceptsDeletions: Bool { self == .storeWins || self == .rollback }

    /// Whether a save checks the versions of the records it writes. The
    /// object-trump policies write without checking, and reload afterwards
    /// what other saves changed.
    var checksVersions: Bool { self != .objectWins && self != .overwrite }

    /// Whether the save resolves conflicts it finds and tries again.
    var resolvesChanges: Bool { self != .error }

    /// Whether an update writes every property, not only the changed ones.
    var writesWholeObjects: Bool { self == .overwrite }
}
