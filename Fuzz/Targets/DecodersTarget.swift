// Fuzz target: the file format's decoders on arbitrary bytes.

@_spi(Fuzzing) import LogStore

enum DecodersTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        FormatDecoders.decode(bytes)
    }
}
