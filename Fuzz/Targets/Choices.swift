// Where the query-plan generators' decisions come from: a seeded generator
// in the differential tests, the fuzzer's input bytes in the query-plans
// target. The same generator code runs on either.

/// A stream of choices: each a number below a bound.
///
/// Seeded, it is SplitMix64, so a seed names a case for good. From bytes,
/// each choice takes one byte (two for bounds over 256); past the end every
/// choice is 0, which the generators treat as the simplest answer (nothing
/// more, no option, the first value), so a short input makes a small case.
public struct Choices: Sendable {
    private enum Source: Sendable {
        case seeded(UInt64)
        case bytes([UInt8], position: Int)
    }

    private var source: Source

    /// Choices from a 64-bit seed.
    public init(seed: UInt64) { source = .seeded(seed) }

    /// Choices read from `bytes`.
    public init(bytes: UnsafeRawBufferPointer) { source = .bytes(Array(bytes), position: 0) }

    /// A number in `0..<bound`.
    public mutating func next(_ bound: Int) -> Int {
        precondition(bound > 0, "a choice needs at least one option")
        switch source {
        case .seeded(var state):
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            mixed ^= mixed >> 31
            source = .seeded(state)
            return Int(mixed % UInt64(bound))
        case .bytes(let bytes, var position):
            guard position < bytes.count else { return 0 }
            var value = Int(bytes[position])
            position += 1
            if bound > 256, position < bytes.count {
                value = value << 8 | Int(bytes[position])
                position += 1
            }
            source = .bytes(bytes, position: position)
            return value % bound
        }
    }

    /// True `percent` times in a hundred; false when the bytes have run out.
    public mutating func chance(_ percent: Int) -> Bool { next(100) >= 100 - percent }

    /// One of `items` (which must not be empty).
    public mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
}
