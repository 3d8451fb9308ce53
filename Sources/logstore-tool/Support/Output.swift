// Standard output through one buffer.

import Foundation

/// Standard output written in 64 KiB pieces: a dump of a million records
/// is millions of short strings, and one write per string would cost more
/// than making them.
struct BufferedOutput: TextOutputStream {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 17) }

    mutating func write(_ string: String) {
        buffer.append(contentsOf: string.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Lets `body` append UTF-8 bytes in place.
    mutating func write(_ body: (inout [UInt8]) -> Void) {
        body(&buffer)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func flush() {
        // Whatever print() holds in the C library's buffer goes first.
        fflush(nil)
        buffer.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = Foundation.write(STDOUT_FILENO, bytes.baseAddress! + written, bytes.count - written)
                if count < 0 && errno == EINTR { continue }
                // A closed pipe (`| head`) ends the output; there is no one to tell.
                guard count > 0 else { break }
                written += count
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
