// LZ4 with a dictionary of any size, for benchmark 4's comparison of options.

import CBenchSystem

/// Compresses each block on its own against a fixed dictionary, the way a
/// store-level dictionary (kept once in the file) would work: every frame
/// still decompresses alone, given the dictionary.
///
/// liblz4 1.9.4 as packaged does not export `LZ4_attach_dictionary`, so each
/// block pays `LZ4_loadDict`, which hashes the whole dictionary; the timing
/// this reports is therefore an upper bound on the cost.
final class DictionaryCompressor {
    private let stream: UnsafeMutablePointer<LZ4_stream_t>
    let dictionary: [UInt8]

    init(dictionary: [UInt8]) {
        stream = LZ4_createStream()
        self.dictionary = dictionary
    }

    deinit { LZ4_freeStream(stream) }

    /// `source` compressed against the dictionary.
    func compress(_ source: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(LZ4_compressBound(Int32(source.count))))
        let size = dictionary.withUnsafeBufferPointer { dictionary in
            source.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { output in
                    LZ4_resetStream_fast(stream)
                    dictionary.withMemoryRebound(to: CChar.self) { _ = LZ4_loadDict(stream, $0.baseAddress, Int32($0.count)) }
                    return source.withMemoryRebound(to: CChar.self) { source in
                        output.withMemoryRebound(to: CChar.self) { output in
                            LZ4_compress_fast_continue(stream, source.baseAddress, output.baseAddress, Int32(source.count), Int32(output.count), 1)
                        }
                    }
                }
            }
        }
        return Array(output[0..<Int(max(size, 0))])
    }

    /// `block` decompressed against the dictionary into `rawSize` bytes, or
    /// nil when it does not decompress to exactly that.
    func decompress(_ block: [UInt8], rawSize: Int) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: rawSize)
        let produced = dictionary.withUnsafeBufferPointer { dictionary in
            block.withUnsafeBufferPointer { block in
                output.withUnsafeMutableBufferPointer { output in
                    dictionary.withMemoryRebound(to: CChar.self) { dictionary in
                        block.withMemoryRebound(to: CChar.self) { block in
                            output.withMemoryRebound(to: CChar.self) { output in
                                LZ4_decompress_safe_usingDict(block.baseAddress, output.baseAddress, Int32(block.count), Int32(output.count), dictionary.baseAddress, Int32(dictionary.count))
                            }
                        }
                    }
                }
            }
        }
        return produced == Int32(rawSize) ? output : nil
    }
}
