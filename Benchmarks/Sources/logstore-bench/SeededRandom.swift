// A seeded random number generator, so every run writes the same bytes.

import Foundation

/// Random numbers from a seed, through libc's `jrand48`, which keeps its
/// 48-bit state in this value rather than in a global.
struct SeededRandom: RandomNumberGenerator {
    private var state: [UInt16]

    init(seed: UInt64) {
        state = [0, 16, 32].map { UInt16(truncatingIfNeeded: seed >> $0) }
    }

    mutating func next() -> UInt64 {
        let high = UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: jrand48(&state))))
        let low = UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: jrand48(&state))))
        return high << 32 | low
    }

    /// A word from `words`.
    mutating func pick(_ words: [String]) -> String { words[Int.random(in: 0..<words.count, using: &self)] }

    /// `count` words from `words`, separated by spaces.
    mutating func phrase(_ count: Int, from words: [String]) -> String {
        (0..<count).map { _ in pick(words) }.joined(separator: " ")
    }

    /// `count` characters of upper-case letters and digits, like a serial number.
    mutating func code(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &self)] })
    }
}

/// Words for names and notes: an inventory's vocabulary.
let inventoryWords = [
    "walnut", "desk", "lamp", "oak", "chair", "steel", "shelf", "linen", "blue", "green", "large", "small",
    "vintage", "modern", "glass", "brass", "cotton", "wool", "ceramic", "bowl", "mug", "table", "rug", "frame",
    "mirror", "clock", "vase", "basket", "crate", "bench", "stool", "cabinet", "drawer", "hook", "panel",
    "cushion", "blanket", "candle", "tray", "board", "plate", "jar", "bottle", "kettle", "pan", "lid", "ships",
    "fragile", "boxed", "assembled", "returned", "restocked", "scratched", "discounted", "display", "model",
    "customer", "order", "pending", "north", "south", "warehouse", "aisle", "the", "with", "and", "in", "for",
]
