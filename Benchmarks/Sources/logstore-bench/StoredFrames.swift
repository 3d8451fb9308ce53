// Reads a store file's frames as FORMAT.md lays them out, to see what the
// journal wrote: frame sizes, codecs and raw payloads.

import Foundation
@_spi(Benchmarks) import LogStore

/// One frame of a store file.
struct StoredFrame {
    /// Header plus stored payload: the frame's bytes in the file.
    var size: Int { Self.headerSize + stored.count }
    /// The payload as stored.
    var stored: [UInt8]
    /// The codec byte: 0 raw, 1 LZ4, 2 LZ4 against the store dictionary.
    var codec: UInt8
    /// The transaction's raw encoding, without a dictionary the frame carries.
    var transactionPayload: [UInt8]

    var isCompressed: Bool { codec != 0 }
    var usesDictionary: Bool { codec == 2 }

    static let headerSize = 40

    /// Where the first frame of the store file holding `bytes` starts: after
    /// its header, and from format version 5 after the anchor pages too.
    static func framesStart(of bytes: [UInt8], path: String) throws -> Int {
        Int(try bytes.withUnsafeBytes { try FileHeader.decode(UnsafeRawBufferPointer(rebasing: $0.prefix(64)), path: path) }.framesStart)
    }

    /// Every frame of the store file at `path`, decoded in order (a frame
    /// may carry the dictionary the frames after it need). The file must be
    /// clean: it was just written and closed by the benchmark.
    static func read(path: String) throws -> [StoredFrame] {
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var frames: [StoredFrame] = []
        var dictionary: LZ4.PresetDictionary?
        var offset = try framesStart(of: file, path: path)
        while offset < file.count {
            // FORMAT.md §3: storedSize at +8, rawSize at +12, codec at +33, flags at +34.
            let storedSize = Int(littleEndianUInt32(file, at: offset + 8))
            let rawSize = Int(littleEndianUInt32(file, at: offset + 12))
            let codec = file[offset + 33], carriesDictionary = file[offset + 34] & 1 != 0
            let start = offset + headerSize
            guard start + storedSize <= file.count else { throw BenchmarkError("\(path): frame at \(offset) runs past the end") }
            let stored = Array(file[start..<(start + storedSize)])
            var raw = stored
            if codec != 0 {
                raw = [UInt8](repeating: 0, count: rawSize)
                try stored.withUnsafeBytes { source in
                    try raw.withUnsafeMutableBytes { try LZ4.decompress(source, into: $0, dictionary: codec == 2 ? dictionary : nil) }
                }
            }
            var transaction = raw[...]
            if carriesDictionary {
                // FORMAT.md §5.3: a varint length, then the dictionary.
                var length = 0, shift = 0
                while let byte = transaction.popFirst() {
                    length |= Int(byte & 0x7F) << shift
                    shift += 7
                    if byte < 0x80 { break }
                }
                dictionary = LZ4.PresetDictionary(Array(transaction.prefix(length)))
                transaction = transaction.dropFirst(length)
            }
            frames.append(StoredFrame(stored: stored, codec: codec, transactionPayload: Array(transaction)))
            offset = start + storedSize
        }
        return frames
    }

    private static func littleEndianUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}
