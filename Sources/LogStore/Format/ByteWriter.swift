// Appends little-endian integers, varints and byte strings to a growing buffer.

import Foundation

/// A growable byte buffer with the primitive encodings of FORMAT.md §1.
///
/// Fixed-width integers are little-endian; `varint` is unsigned LEB128 (seven
/// bits a byte, low bits first, high bit set on every byte but the last);
/// signed integers use zigzag before LEB128 so small negatives stay small.
struct ByteWriter {
    private(set) var bytes: [UInt8]

    init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    /// How many bytes it can hold before it grows.
    var capacity: Int { bytes.capacity }

    /// Makes room for at least `capacity` bytes in all.
    mutating func reserveCapacity(_ capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Empties the buffer, keeping its storage for reuse.
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    mutating func append(_ byte: UInt8) { bytes.append(byte) }

    mutating func append(contentsOf other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }

    mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    mutating func appendFixed<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func appendSignedVarint(_ value: Int64) {
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// A varint length followed by the bytes.
    mutating func appendLengthPrefixed(_ raw: UnsafeRawBufferPointer) {
        appendVarint(UInt64(raw.count))
        bytes.append(contentsOf: raw)
    }

    mutating func appendLengthPrefixed(_ string: String) {
        var string = string
        string.withUTF8 { appendLengthPrefixed(UnsafeRawBufferPointer($0)) }
    }

    /// Overwrites bytes already written, for headers filled in after their body.
    mutating func overwrite<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }

    /// Grows the buffer by `count` bytes and lets `body` fill them; `body`
    /// returns how many it used, and the rest are dropped again.
    mutating func appendUninitialized(
        count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        let used = try bytes.withUnsafeMutableBytes { all in
            try body(UnsafeMutableRawBufferPointer(rebasing: all[start..<(start + count)]))
        }
        bytes.removeLast(count - used)
    }
}

extension ByteWriter {
    /// Mutable access to the bytes written so far.
    mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) -> R) -> R {
        bytes.withUnsafeMutableBytes(body)
    }
}
