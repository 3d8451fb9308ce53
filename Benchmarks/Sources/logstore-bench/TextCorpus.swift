// Text-like payload bytes: JSON lines of inventory records.

import Foundation

/// Several MiB of JSON-ish inventory records, one a line, from which payloads
/// are cut at random offsets.
///
/// Such text is what an app stores in a `.data` field more often than random
/// bytes: every line repeats the same keys, names come from a small
/// vocabulary, numbers are random. LZ4 shrinks it, but not to nothing (the
/// reports state the ratio it got).
struct TextCorpus: Sendable {
    let bytes: [UInt8]

    init(size: Int, seed: UInt64 = 0x10c5_704e) {
        var random = SeededRandom(seed: seed)
        var text = ""
        text.reserveCapacity(size + 512)
        while text.utf8.count < size {
            text += Self.record(&random)
        }
        bytes = Array(text.utf8.prefix(size))
    }

    /// One record: `{"sku":"WX-48213","name":"walnut desk lamp",...}` and a newline.
    private static func record(_ random: inout SeededRandom) -> String {
        let cents = Int.random(in: 100...250_000, using: &random)
        let stock = Int.random(in: 0...900, using: &random)
        let day = Int.random(in: 1...28, using: &random), hour = Int.random(in: 0...23, using: &random)
        let minute = Int.random(in: 0...59, using: &random), second = Int.random(in: 0...59, using: &random)
        let updated = String(format: "2025-%02d-%02dT%02d:%02d:%02dZ", Int.random(in: 1...12, using: &random), day, hour, minute, second)
        return #"{"sku":"\#(random.code(2))-\#(Int.random(in: 10_000...99_999, using: &random))","#
            + #""name":"\#(random.phrase(Int.random(in: 2...4, using: &random), from: inventoryWords))","#
            + #""price":\#(cents / 100).\#(String(format: "%02d", cents % 100)),"stock":\#(stock),"#
            + #""bin":"\#(random.pick(["north", "south", "east", "west"]))-\#(Int.random(in: 1...40, using: &random))","#
            + #""updated":"\#(updated)","notes":"\#(random.phrase(Int.random(in: 0...12, using: &random), from: inventoryWords))"}"#
            + "\n"
    }

    /// `count` bytes from a random offset.
    func slice(_ count: Int, using random: inout SeededRandom) -> Data {
        precondition(count <= bytes.count, "a slice cannot be longer than the corpus")
        let start = Int.random(in: 0...(bytes.count - count), using: &random)
        return Data(bytes[start..<(start + count)])
    }

    /// `number` slices of `size` bytes each.
    func slices(_ number: Int, of size: Int, seed: UInt64) -> [Data] {
        var random = SeededRandom(seed: seed)
        return (0..<number).map { _ in slice(size, using: &random) }
    }
}
