// A context's identity map: one object per ID, found without hashing a struct.

/// The objects a context holds, by ID.
///
/// An open-addressing table (linear probing, backward-shift deletion) of the
/// objects themselves, which carry their IDs, beside each ID's hash: one
/// multiplication of its key and entity hash, which keeps eight keys in a
/// row together (``ObjectID/runHash``). Probing and growing compare
/// and move hashes, and look at an object only when its hash matches. A
/// bulk insert registers every new object here, and a
/// `Dictionary<ObjectID, ManagedObject>` spent most of that time in SipHash,
/// growing, and copying 56-byte keys.
///
/// The map does not keep its objects alive, as Core Data's does not: an
/// object the app lets go of (and that has no unsaved changes, which the
/// context's lists of changes hold) is freed, and its deinit takes it out
/// of the map (``ObjectContext/unregister(_:)``), so that a context's
/// memory follows what the app holds. Entries are unretained references,
/// which growing moves as plain words.
struct IdentityMap: ~Copyable {
    /// A slot: an object and the hash of its ID, side by side so that a
    /// probe touches one cache line.
    private struct Entry {
        var hash: UInt64
        var object: Unmanaged<ManagedObject>?
    }

    private var entries: [Entry] = []
    private(set) var count = 0
    /// `entries.count - 1`; slot counts are powers of two.
    private var mask = -1
    /// 64 minus the number of bits that index a slot.
    private var shift: UInt64 = 64

    init() {}

    subscript(id: ObjectID) -> ManagedObject? {
        get {
            guard count > 0 else { return nil }
            let hash = id.runHash
            var index = home(hash)
            while let object = entries[index].object {
                if entries[index].hash == hash, object._withUnsafeGuaranteedRef({ $0.has(id) }) { return object.takeUnretainedValue() }
                index = (index &+ 1) & mask
            }
            return nil
        }
        set {
            if let newValue { insert(newValue, for: id) } else { remove(id) }
        }
    }

    /// Makes room for `extra` more objects at once, so that registering
    /// the results of a large fetch does not grow the table step by step.
    mutating func reserveCapacity(forAdding extra: Int) {
        while (count + extra) * 4 > entries.count * 3 { grow() }
    }

    /// Every object, in no particular order.
    var objects: [ManagedObject] { entries.compactMap { $0.object?.takeUnretainedValue() } }

    /// The slot where an ID with `hash` (``ObjectID/runHash``) belongs:
    /// its run's first slot, and as many after it as its key's low bits say.
    private func home(_ hash: UInt64) -> Int {
        (Int(truncatingIfNeeded: hash >> shift) &+ Int(truncatingIfNeeded: hash & 7)) & mask
    }

    private mutating func insert(_ object: ManagedObject, for id: ObjectID) {
        if (count + 1) * 4 > entries.count * 3 { grow() }
        let hash = id.runHash
        var index = home(hash)
        while let existing = entries[index].object {
            if entries[index].hash == hash, existing._withUnsafeGuaranteedRef({ $0.has(id) }) {
                entries[index].object = Unmanaged.passUnretained(object)
                return
            }
            index = (index &+ 1) & mask
        }
        entries[index] = Entry(hash: hash, object: Unmanaged.passUnretained(object))
        count += 1
    }

    private mutating func remove(_ id: ObjectID) {
        guard count > 0 else { return }
        let hash = id.runHash
        var slot = home(hash)
        while let object = entries[slot].object {
            if entries[slot].hash == hash, object._withUnsafeGuaranteedRef({ $0.has(id) }) { return removeEntry(at: slot) }
            slot = (slot &+ 1) & mask
        }
    }

    /// Takes `object` out of the map if it is there (not another instance
    /// for its ID): what a freed object's deinit does. Found by its hash and
    /// its address, without making its ID.
    mutating func remove(_ object: ManagedObject, hash: UInt64) {
        guard count > 0 else { return }
        let address = Unmanaged.passUnretained(object).toOpaque()
        var slot = home(hash)
        while let entry = entries[slot].object {
            if entry.toOpaque() == address { return removeEntry(at: slot) }
            slot = (slot &+ 1) & mask
        }
    }

    private mutating func removeEntry(at slot: Int) {
        var hole = slot
        // Pull later objects of the same run back over the hole, so that a
        // lookup never stops at an empty slot short of its object.
        var next = (hole &+ 1) & mask
        while entries[next].object != nil {
            let fromHome = (next &- home(entries[next].hash)) & mask
            let fromHole = (next &- hole) & mask
            if fromHome >= fromHole {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        entries[hole].object = nil
        count -= 1
    }

    private mutating func grow() {
        let old = entries
        let capacity = max(16, old.count * 2)
        entries = Array(repeating: Entry(hash: 0, object: nil), count: capacity)
        mask = capacity - 1
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        for entry in old where entry.object != nil {
            var index = home(entry.hash)
            while entries[index].object != nil { index = (index &+ 1) & mask }
            entries[index] = entry
        }
    }
}
