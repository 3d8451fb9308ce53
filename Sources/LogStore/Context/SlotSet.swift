// The set of an object's changed slots, without hashing.

/// Slot numbers (attributes, then relationships), as a bit set: the first
/// 64 slots in one word, any beyond in a set. Every write to an object
/// records its slot here, so this must cost less than hashing an `Int`.
struct SlotSet: Sequence, ExpressibleByArrayLiteral {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    init() {}

    init(arrayLiteral slots: Int...) {
        for slot in slots { insert(slot) }
    }

    init(_ slots: some Sequence<Int>) {
        for slot in slots { insert(slot) }
    }

    var isEmpty: Bool { low == 0 && high.isEmpty }

    mutating func insert(_ slot: Int) {
        if slot < 64 { low |= 1 << UInt64(slot) } else { high.insert(slot) }
    }

    mutating func remove(_ slot: Int) {
        if slot < 64 { low &= ~(1 << UInt64(slot)) } else { high.remove(slot) }
    }

    func contains(_ slot: Int) -> Bool {
        slot < 64 ? low & (1 << UInt64(slot)) != 0 : high.contains(slot)
    }

    /// The slots in increasing order.
    func makeIterator() -> IndexingIterator<[Int]> {
        var slots: [Int] = []
        var bits = low
        while bits != 0 {
            slots.append(bits.trailingZeroBitCount)
            bits &= bits - 1
        }
        return (slots + high.sorted()).makeIterator()
    }
}
