// LZ4 block compression through liblz4's safe entry points.

import CLZ4

/// LZ4 block compression of frame payloads.
///
/// Decompression uses only `LZ4_decompress_safe` with the declared raw size
/// as the output capacity, and checks that exactly that many bytes came out:
/// a hostile payload can fail to decode but cannot write outside the buffer.
/// Exposed to the benchmarks as SPI; not part of the public API.
@_spi(Benchmarks)
public enum LZ4 {
    /// The worst-case compressed size of `count` bytes.
    public static func compressBound(_ count: Int) -> Int { Int(LZ4_compressBound(Int32(count))) }

    /// Compresses `source` into `destination`; returns the compressed size, or
    /// 0 when it does not fit (the caller then stores the payload raw).
    public static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int {
        guard let src = source.baseAddress, let dst = destination.baseAddress, !source.isEmpty else { return 0 }
        let written = LZ4_compress_default(
            src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        return Int(written)
    }

    /// Compresses block after block with one reusable state.
    ///
    /// `LZ4_compress_default` clears a 16 KiB hash table on every call, which
    /// for a 1 KiB frame costs a large share of the compression itself. A
    /// kept state needs only `LZ4_resetStream_fast`; each block still starts
    /// with no dictionary, so it decompresses on its own like any other.
    /// Not thread-safe: one per writer.
    public final class Compressor {
        private let stream: UnsafeMutablePointer<LZ4_stream_t>
        private let size = MemoryLayout<LZ4_stream_t>.size

        public init() {
            guard let stream = LZ4_createStream() else { fatalError("liblz4 could not allocate a \(MemoryLayout<LZ4_stream_t>.size)-byte compression state") }
            self.stream = stream
        }

        deinit { LZ4_freeStream(stream) }

        /// Compresses `source` into `destination`; returns the compressed
        /// size, or 0 when it does not fit.
        public func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int {
            guard let src = source.baseAddress, let dst = destination.baseAddress, !source.isEmpty else { return 0 }
            LZ4_resetStream_fast(stream)
            return Int(LZ4_compress_fast_continue(
                stream, src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(destination.count), 1))
        }

        /// Compresses `source` against `dictionary`: the block decompresses
        /// only with ``LZ4/decompress(_:into:dictionary:)`` and the same bytes.
        public func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, dictionary: PresetDictionary) -> Int {
            guard let src = source.baseAddress, let dst = destination.baseAddress, !source.isEmpty else { return 0 }
            // Copying a state that loaded the dictionary is liblz4's documented
            // alternative to loading it again (its LZ4_attach_dictionary notes),
            // and costs a 16 KiB copy instead of hashing the whole dictionary.
            UnsafeMutableRawPointer(stream).copyMemory(from: dictionary.loadedState, byteCount: size)
            return Int(LZ4_compress_fast_continue(
                stream, src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(destination.count), 1))
        }
    }

    /// A store dictionary: bytes that small payloads are compressed against,
    /// so the words and structure they share with earlier saves cost nothing.
    /// Immutable once made; the bytes live as long as the dictionary.
    public final class PresetDictionary: @unchecked Sendable {
        /// The dictionary's bytes.
        public let bytes: [UInt8]
        private let storage: UnsafeMutableRawBufferPointer
        /// A compression state that has loaded `storage`, copied for each block.
        fileprivate let loadedState: UnsafeMutablePointer<LZ4_stream_t>

        public init(_ bytes: [UInt8]) {
            precondition(!bytes.isEmpty && bytes.count <= FrameLayout.maxDictionarySize)
            self.bytes = bytes
            storage = .allocate(byteCount: bytes.count, alignment: 16)
            storage.copyBytes(from: bytes)
            guard let state = LZ4_createStream() else { fatalError("liblz4 could not allocate a compression state") }
            loadedState = state
            _ = LZ4_loadDict(state, storage.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        }

        deinit {
            LZ4_freeStream(loadedState)
            storage.deallocate()
        }

        fileprivate var pointer: UnsafePointer<CChar> { UnsafePointer(storage.baseAddress!.assumingMemoryBound(to: CChar.self)) }
    }

    /// Decompresses one block into exactly `destination.count` bytes; pass the
    /// dictionary a block was compressed against.
    public static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, dictionary: PresetDictionary? = nil) throws(DecodeFailure) {
        guard let src = source.baseAddress, let dst = destination.baseAddress else {
            if source.isEmpty && destination.isEmpty { return }
            throw DecodeFailure("LZ4 block of \(source.count) bytes cannot produce \(destination.count) bytes")
        }
        let produced = if let dictionary {
            LZ4_decompress_safe_usingDict(
                src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(destination.count), dictionary.pointer, Int32(dictionary.bytes.count))
        } else {
            LZ4_decompress_safe(
                src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(destination.count))
        }
        guard produced == Int32(destination.count) else {
            throw DecodeFailure(produced < 0
                ? "LZ4 block is malformed (liblz4 status \(produced))"
                : "LZ4 block decompresses to \(produced) bytes, not the declared \(destination.count)")
        }
    }
}
