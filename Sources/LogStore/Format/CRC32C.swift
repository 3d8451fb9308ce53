// CRC32C, the checksum of headers and frames (FORMAT.md §1).

import CLogStoreSupport
import Foundation

/// The CRC32C (Castagnoli) checksum, computed with the CPU's instruction when
/// it has one.
///
/// Start from `CRC32C()` and ``update(_:)`` with each piece in order; the
/// result equals the checksum of the pieces concatenated.
///
/// Exposed to the benchmarks as SPI (`@_spi(Benchmarks) import LogStore`);
/// not part of the public API.
@_spi(Benchmarks)
public struct CRC32C: Hashable, Sendable {
    /// The checksum of everything passed so far.
    public private(set) var value: UInt32 = 0

    public init() {}

    /// Extends the checksum over `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        value = logstore_crc32c_extend(value, base, bytes.count)
    }

    /// Extends the checksum over the bytes of `bytes`.
    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The checksum of `bytes` on its own.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// Whether the CPU's CRC32C instruction is in use (for benchmark reports).
    public static var isHardwareAccelerated: Bool { logstore_crc32c_is_hardware_accelerated() != 0 }
}

#if !(arch(x86_64) || arch(arm64))
#error("LogStore's formats are little-endian and are only built for little-endian targets")
#endif
