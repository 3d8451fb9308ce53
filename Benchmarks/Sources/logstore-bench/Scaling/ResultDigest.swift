// What a query returned, boiled down so two stores' answers can be compared:
// a fast wrong answer must not win.

/// The count of a result and a hash of its contents (FNV-1a, 64 bits).
/// Equal digests from LogStore and SQLite mean the same rows came back.
struct ResultDigest: Hashable, Sendable, Codable, CustomStringConvertible {
    private(set) var count = 0
    private(set) var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    init() {}

    /// A digest of `keys` as a set: the order they came in does not matter.
    init<Keys: Sequence<Int64>>(keySet keys: Keys) {
        for key in keys.sorted() { add(key) }
    }

    /// A digest of one number: a count, when that is the whole answer.
    init(count: Int) {
        add(Int64(count))
    }

    /// Adds one value; the order of `add` calls matters.
    mutating func add(_ value: Int64) {
        count += 1
        withUnsafeBytes(of: value.littleEndian) { mix($0) }
    }

    mutating func add(_ text: String) {
        count += 1
        var text = text
        text.withUTF8 { mix(UnsafeRawBufferPointer($0)) }
        mix(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    mutating func add(_ value: Double) { add(Int64(bitPattern: value.bitPattern)) }

    /// Folds in another digest, as one more value.
    mutating func add(_ other: ResultDigest) {
        add(Int64(other.count))
        add(Int64(bitPattern: other.hash))
    }

    private mutating func mix(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        hash = (hash ^ 0xff) &* 0x100_0000_01b3
    }

    var description: String { "\(count) values, hash \(String(hash, radix: 16))" }
}
