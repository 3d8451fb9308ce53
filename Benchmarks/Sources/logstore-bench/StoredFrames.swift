// Reads a store file's frames as FORMAT.md lays them out, to see what the
// journal wrote: frame sizes, codecs and raw payloads.

import Foundation
@_spi(Benchmarks) import LogStore

/// One frame of a store file.
struct StoredFrame {
    /// Header plus stored payload: the frame's bytes in the file.
    var size: Int { Self.headerSize + stored.count }
    /// The payload as stored (LZ4 or raw).
    var stored: [UInt8]
    var rawSize: Int
    var isCompressed: Bool

    static let fileHeaderSize = 64
    static let headerSize = 40

    /// The raw (encoded, uncompressed) transaction payload.
    func rawPayload() throws -> [UInt8] {
        guard isCompressed else { return stored }
        var raw = [UInt8](repeating: 0, count: rawSize)
        try stored.withUnsafeBytes { source in
            try raw.withUnsafeMutableBytes { try LZ4.decompress(source, into: $0) }
        }
        return raw
    }

    /// Every frame of the store file at `path`. The file must be clean: it
    /// was just written and closed by the benchmark.
    static func read(path: String) throws -> [StoredFrame] {
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var frames: [StoredFrame] = []
        var offset = fileHeaderSize
        while offset < file.count {
            // FORMAT.md §3: storedSize at +8, rawSize at +12, codec at +33 (0 raw, 1 LZ4).
            let storedSize = Int(littleEndianUInt32(file, at: offset + 8))
            let rawSize = Int(littleEndianUInt32(file, at: offset + 12))
            let start = offset + headerSize
            guard start + storedSize <= file.count else { throw BenchmarkError("\(path): frame at \(offset) runs past the end") }
            frames.append(StoredFrame(stored: Array(file[start..<(start + storedSize)]), rawSize: rawSize, isCompressed: file[offset + 33] == 1))
            offset = start + storedSize
        }
        return frames
    }

    private static func littleEndianUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}
