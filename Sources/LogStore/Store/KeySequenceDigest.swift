// A digest of keys in order, to compare two walks without holding either.

/// A digest of a sequence of keys in order, and how many: what a
/// compaction compares between the keys it wrote and those its read-back
/// found, without holding either list.
struct KeySequenceDigest: Equatable {
    private(set) var count = 0
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ key: UInt64) {
        count += 1
        // FNV-1a over the key's value, then mixed: a key out of place, left
        // out or added changes it.
        hash = (hash ^ key) &* 0x0000_0100_0000_01b3
        hash ^= hash >> 29
    }
}
