// Reads the encodings of ByteWriter back, never past the end of its buffer.

import Foundation

/// Why bytes could not be decoded. Callers wrap it in a ``LogStoreError``
/// with the path and offset they know and this reader does not.
@_spi(Benchmarks)
public struct DecodeFailure: Error, Sendable {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// A cursor over borrowed bytes.
///
/// The buffer must outlive the reader: create it inside `withUnsafeBytes`.
/// Every read checks the remaining length first, so hostile input can make
/// a read fail but never read outside the buffer or allocate more than the
/// buffer holds.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var remaining: Int { buffer.count - position }
    var isAtEnd: Bool { position == buffer.count }

    // The reads of single bytes and fixed-width numbers are inlined, and
    // their failure is made out of line: building its message in place kept
    // them from inlining, and decoding a record calls them for every value.
    @inline(__always)
    func peekByte() throws(DecodeFailure) -> UInt8 {
        guard position < buffer.count else { throw endOfData() }
        return buffer[position]
    }

    @inline(__always)
    mutating func readByte() throws(DecodeFailure) -> UInt8 {
        let byte = try peekByte()
        position += 1
        return byte
    }

    @inline(__always)
    mutating func readFixed<T: FixedWidthInteger>(_: T.Type) throws(DecodeFailure) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw endOfData() }
        defer { position += size }
        return T(littleEndian: buffer.loadUnaligned(fromByteOffset: position, as: T.self))
    }

    @inline(never)
    private func endOfData() -> DecodeFailure {
        DecodeFailure("unexpected end of data at byte \(position)")
    }

    /// A varint; one of one or two bytes, the most common (counts, lengths,
    /// symbols, numbers below 16,384), is read inline.
    @inline(__always)
    mutating func readVarint() throws(DecodeFailure) -> UInt64 {
        if position < buffer.count {
            let first = buffer[position]
            if first < 0x80 {
                position += 1
                return UInt64(first)
            }
            if position + 1 < buffer.count, buffer[position + 1] < 0x80 {
                defer { position += 2 }
                return UInt64(first & 0x7F) | UInt64(buffer[position + 1]) << 7
            }
        }
        return try readLongVarint()
    }

    private mutating func readLongVarint() throws(DecodeFailure) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            // The tenth byte may only carry the top bit of a UInt64.
            if shift == 63 && byte > 1 { throw DecodeFailure("varint overflows 64 bits at byte \(position - 1)") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    @inline(__always)
    mutating func readSignedVarint() throws(DecodeFailure) -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A varint that counts items of at least `minimumItemSize` bytes each, so
    /// a count larger than the rest of the buffer could hold is rejected
    /// before anything is allocated for it.
    @inline(__always)
    mutating func readCount(minimumItemSize: Int = 1) throws(DecodeFailure) -> Int {
        let value = try readVarint()
        guard value <= UInt64(remaining / max(minimumItemSize, 1)) else { throw tooMany(value) }
        return Int(value)
    }

    @inline(never)
    private func tooMany(_ count: UInt64) -> DecodeFailure {
        DecodeFailure("count \(count) at byte \(position) exceeds the \(remaining) bytes left")
    }

    /// Moves past `count` bytes.
    @inline(__always)
    mutating func skip(_ count: Int) throws(DecodeFailure) {
        guard count >= 0, remaining >= count else { throw pastTheEnd(count) }
        position += count
    }

    /// Moves past the bytes equal to `byte` from here on, at most `limit`
    /// of them, and returns how many.
    @inline(__always)
    mutating func skipRepeating(_ byte: UInt8, limit: Int) -> Int {
        let end = position + min(limit, remaining)
        var next = position
        while next < end, buffer[next] == byte { next += 1 }
        defer { position = next }
        return next - position
    }

    @inline(__always)
    mutating func readBytes(count: Int) throws(DecodeFailure) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw pastTheEnd(count) }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: buffer[position..<(position + count)])
    }

    @inline(never)
    private func pastTheEnd(_ count: Int) -> DecodeFailure {
        DecodeFailure("length \(count) at byte \(position) exceeds the \(remaining) bytes left")
    }

    @inline(__always)
    mutating func readLengthPrefixed() throws(DecodeFailure) -> UnsafeRawBufferPointer {
        try readBytes(count: try readCount())
    }

    /// A store dictionary: a varint length of 1 to 64 KiB, then the bytes.
    mutating func readDictionary() throws(DecodeFailure) -> [UInt8] {
        let bytes = try readLengthPrefixed()
        guard (1...FrameLayout.maxDictionarySize).contains(bytes.count) else {
            throw DecodeFailure("a store dictionary of \(bytes.count) bytes, outside 1 to \(FrameLayout.maxDictionarySize)")
        }
        return Array(bytes)
    }

    mutating func readString() throws(DecodeFailure) -> String {
        let raw = try readLengthPrefixed()
        guard let string = Self.decodedIfValid(raw) else { throw notUTF8() }
        return string
    }

    /// The bytes of a length-prefixed string, checked to be valid UTF-8 as
    /// ``readString()`` checks them, without building the string.
    mutating func readUTF8() throws(DecodeFailure) -> UnsafeRawBufferPointer {
        let raw = try readLengthPrefixed()
        guard Self.isValidUTF8(raw) else { throw notUTF8() }
        return raw
    }

    @inline(never)
    private func notUTF8() -> DecodeFailure {
        DecodeFailure("string ending at byte \(position) is not valid UTF-8")
    }

    /// Whether `raw` is valid UTF-8: the one rule for every string read
    /// from a file.
    static func isValidUTF8(_ raw: UnsafeRawBufferPointer) -> Bool {
        isASCII(raw) || decodedIfValid(raw) != nil
    }

    /// `raw` as a string when it is valid UTF-8 (``isValidUTF8(_:)``), built
    /// once.
    static func decodedIfValid(_ raw: UnsafeRawBufferPointer) -> String? {
        guard let base = raw.baseAddress, !raw.isEmpty else { return "" }
        // Decoding replaces invalid UTF-8 with U+FFFD, so the bytes come out
        // the same exactly when they were valid. This is twice as fast as
        // `String(validating:as:)`.
        var string = String(decoding: raw, as: UTF8.self)
        let isValid = string.withUTF8 { utf8 in utf8.count == raw.count && memcmp(utf8.baseAddress!, base, raw.count) == 0 }
        return isValid ? string : nil
    }

    /// Whether every byte of `raw` is below 0x80: most strings are, and
    /// telling so eight bytes at a time needs no string (a block's check
    /// reads every string in it).
    private static func isASCII(_ raw: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset + 8 <= raw.count {
            if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            offset += 8
        }
        return raw[offset...].allSatisfy { $0 < 0x80 }
    }
}
