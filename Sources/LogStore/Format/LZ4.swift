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

    /// Decompresses one block into exactly `destination.count` bytes.
    public static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) throws(DecodeFailure) {
        guard let src = source.baseAddress, let dst = destination.baseAddress else {
            if source.isEmpty && destination.isEmpty { return }
            throw DecodeFailure("LZ4 block of \(source.count) bytes cannot produce \(destination.count) bytes")
        }
        let produced = LZ4_decompress_safe(
            src.assumingMemoryBound(to: CChar.self), dst.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        guard produced == Int32(destination.count) else {
            throw DecodeFailure(produced < 0
                ? "LZ4 block is malformed (liblz4 status \(produced))"
                : "LZ4 block decompresses to \(produced) bytes, not the declared \(destination.count)")
        }
    }
}
