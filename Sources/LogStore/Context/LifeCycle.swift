// An object's life cycle: one state and the transitions between states, so
// that the rules of where an object stands live in one place.

/// Where a managed object stands in its context. One value rather than a
/// flag per fact, so that no two facts can disagree; each change goes
/// through a transition below.
///
/// ```
/// insert ──▶ inserted ──save──▶ loaded ◀──load (record found)── fault ──load (no record)──▶ gone
///               │                 │  ▲                            ▲
///               └────delete──▶ deleted ◀──another save deleted it─┘
///     loaded ──refault (refresh, rollback, merge)──▶ fault     any ──context reset──▶ invalidated
/// ```
enum LifeCycle: Equatable {
    /// Saved; its values are not loaded, or were dropped to be loaded again.
    case fault
    /// Saved; its values are loaded (changed or not: its changed slots say).
    case loaded
    /// Made by this context and not saved yet.
    case inserted
    /// Deleted by this context (saved or not), or by another save this
    /// context learned of; `wasInserted` when it was never saved.
    case deleted(wasInserted: Bool)
    /// Another save deleted its record before this object loaded it: reads
    /// and writes throw `.objectNotFound`.
    case gone
    /// Its context was reset: it belongs to no context any more, and reads
    /// and writes throw `.wrongContext`.
    case invalidated

    var isFault: Bool { self == .fault }
    var isInserted: Bool { self == .inserted || self == .deleted(wasInserted: true) }
    var isDeleted: Bool { if case .deleted = self { true } else { false } }

    /// A fault loaded its record, or found it deleted.
    mutating func load(found: Bool) {
        guard self == .fault else { return }
        self = found ? .loaded : .gone
    }

    /// Deleted, by this context or by another save it learned of.
    mutating func delete() {
        guard self != .invalidated, !isDeleted else { return }
        self = .deleted(wasInserted: self == .inserted)
    }

    /// Back to a fault, to load again; an unsaved object has nothing to load.
    mutating func refault() {
        switch self {
        case .loaded, .gone, .deleted(wasInserted: false): self = .fault
        case .fault, .inserted, .deleted(wasInserted: true), .invalidated: break
        }
    }

    /// A save wrote it.
    mutating func saved() {
        if self == .inserted { self = .loaded }
    }

    /// Its context was reset.
    mutating func invalidate() { self = .invalidated }
}
