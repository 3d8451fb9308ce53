// LZ4 on whole byte buffers, for measuring sizes.

@_spi(Benchmarks) import LogStore

extension LZ4 {
    /// `bytes` compressed as one LZ4 block (never nil for non-empty input:
    /// the output has room for the worst case).
    static func compressed(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: compressBound(bytes.count))
        let size = output.withUnsafeMutableBytes { compress(bytes, into: $0) }
        return size > 0 ? Array(output[0..<size]) : nil
    }
}
