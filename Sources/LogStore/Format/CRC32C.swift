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

extension CRC32C {
    /// The checksum of the last `suffixCount` bytes of a run of bytes, from
    /// the checksum of the whole run (`whole`) and of the bytes before those
    /// (`prefix`): what lets one pass over a file check frames that overlap
    /// (the recovery scan, FORMAT.md §6) without reading a byte twice.
    ///
    /// CRCs are linear: crc(A‖B) = crc(A)·x^(8·|B|) ⊕ crc(B) modulo the
    /// polynomial (zlib's crc32_combine), so crc(B) = crc(A‖B) ⊕ crc(A)·x^(8·|B|).
    /// Costs about 32 × log2(`suffixCount`) shifts.
    static func suffixChecksum(whole: UInt32, prefix: UInt32, suffixCount: UInt64) -> UInt32 {
        whole ^ multiply(powerOfX(8 &* suffixCount), prefix)
    }

    /// The reflected Castagnoli polynomial.
    private static let polynomial: UInt32 = 0x82F6_3B78

    /// a·b modulo the polynomial, both in the reflected bit order (the top
    /// bit is x⁰).
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var product: UInt32 = 0, b = b, mask: UInt32 = 1 << 31
        while mask != 0 {
            if a & mask != 0 { product ^= b }
            b = b & 1 != 0 ? (b >> 1) ^ polynomial : b >> 1
            mask >>= 1
        }
        return product
    }

    /// x^(2^k) modulo the polynomial, for k = 0..<64.
    private static let powersOfTwoPowers: [UInt32] = {
        var table: [UInt32] = [1 << 30]   // x¹
        for _ in 1..<64 { table.append(multiply(table[table.count - 1], table[table.count - 1])) }
        return table
    }()

    /// x^n modulo the polynomial.
    private static func powerOfX(_ n: UInt64) -> UInt32 {
        var result: UInt32 = 1 << 31, n = n, k = 0   // x⁰
        while n != 0 {
            if n & 1 != 0 { result = multiply(powersOfTwoPowers[k], result) }
            n >>= 1
            k += 1
        }
        return result
    }
}
