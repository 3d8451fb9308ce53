// Where one entity's records lie in the store's snapshot, by key: located
// in memory when the whole key directory was read, or found through a key
// directory read a leaf at a time.

/// The keys of one entity's records in a snapshot, and the block and slot
/// that hold each.
///
/// A snapshot a compaction wrote, an index frame's, or one a salvage
/// checked are ``located(_:)``: every key placed when it was read, a few
/// bytes per block. A paged snapshot a store opens is ``paged(_:)``: its
/// key directory's leaves are read through the block cache as lookups need
/// them, so open reads no leaf but those where an entity ends.
enum SnapshotKeys: Sendable, Equatable {
    case located(LocatedKeys)
    case paged(PagedEntityKeys)

    /// Where a key is.
    enum Placement: Equatable {
        case at(block: Int, slot: Int)
        case absent
        /// In a key-directory leaf that cannot be read, whose failure the
        /// snapshot keeps (``SnapshotFile/checkReadable()``): not known to be
        /// absent, so never treated as absent.
        case unreadable
    }

    /// No records.
    static let none = SnapshotKeys.located(LocatedKeys())

    /// How many keys it holds.
    var count: Int {
        switch self {
        case .located(let keys): keys.count
        case .paged(let keys): keys.count
        }
    }

    /// Where `key` is in `snapshot`, whose keys these are.
    @inline(__always)
    func locate(_ key: UInt64, in snapshot: SnapshotFile?) -> Placement {
        switch self {
        case .located(let keys):
            guard let (block, slot) = keys.locate(key) else { return .absent }
            return .at(block: block, slot: slot)
        case .paged(let keys):
            guard let snapshot else { return .absent }
            return keys.locate(key, in: snapshot)
        }
    }

    /// Calls `body` with each run of keys that lie in consecutive slots of
    /// one block of `snapshot`, in key order. A leaf that cannot be read is
    /// skipped and its failure kept, as a block's is: a reader checks
    /// ``SnapshotFile/checkNoReadFailed(since:)`` after.
    func forEachRun(in snapshot: SnapshotFile?, _ body: (_ block: Int, _ firstSlot: Int, _ keys: LocatedKeys.Run) -> Void) {
        switch self {
        case .located(let keys): keys.forEachRun(body)
        case .paged(let keys):
            guard let snapshot else { return }
            keys.forEachRun(in: snapshot, body)
        }
    }

    /// The bytes it holds in memory, for tests and statistics: a paged
    /// entity's leaves are in the block cache, which counts them.
    var byteCount: Int {
        switch self {
        case .located(let keys): keys.byteCount
        case .paged: MemoryLayout<PagedEntityKeys>.size
        }
    }
}
