// How one frame names another (FORMAT.md §13.3): where it is, and what it
// must be, so that a frame read through a handle is the frame written.

/// A frame's offset and the header fields that identify it.
///
/// A reader checks the frame it finds at ``offset`` against ``storedSize``,
/// ``rawSize`` and ``checksum`` before trusting it: a handle that names a
/// stale or foreign frame is damage, not a record.
struct FrameHandle: Hashable, Sendable {
    var offset: UInt64
    var storedSize: UInt32
    var rawSize: UInt32
    var checksum: UInt32

    /// The most bytes a handle takes: varints of 10, 5 and 5 bytes and a `u32`.
    static let maximumEncodedSize = 24
    /// The fewest: three one-byte varints and a `u32`.
    static let minimumEncodedSize = 7

    /// The frame's size in the file, header included.
    var frameSize: UInt64 { UInt64(FrameLayout.headerSize) + UInt64(storedSize) }

    /// Its encoded size.
    var encodedSize: Int {
        ByteWriter.varintSize(offset) + ByteWriter.varintSize(UInt64(storedSize)) + ByteWriter.varintSize(UInt64(rawSize)) + 4
    }
}

extension ByteWriter {
    mutating func append(_ handle: FrameHandle) {
        appendVarint(handle.offset)
        appendVarint(UInt64(handle.storedSize))
        appendVarint(UInt64(handle.rawSize))
        appendFixed(handle.checksum)
    }

    /// How many bytes ``appendVarint(_:)`` writes for `value`.
    static func varintSize(_ value: UInt64) -> Int {
        (64 - value.leadingZeroBitCount + 6) / 7 + (value == 0 ? 1 : 0)
    }
}

extension ByteReader {
    /// Reads a handle, refusing sizes over the frame limit (FORMAT.md §3).
    mutating func readHandle() throws(DecodeFailure) -> FrameHandle {
        let offset = try readVarint()
        let storedSize = try readVarint()
        let rawSize = try readVarint()
        guard storedSize <= UInt64(FrameLayout.maxPayloadSize), rawSize <= UInt64(FrameLayout.maxPayloadSize) else {
            throw DecodeFailure("a frame handle before byte \(position) declares \(max(storedSize, rawSize)) bytes, over the frame limit")
        }
        return FrameHandle(offset: offset, storedSize: UInt32(storedSize), rawSize: UInt32(rawSize), checksum: try readFixed(UInt32.self))
    }
}
