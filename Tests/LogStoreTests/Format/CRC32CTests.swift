// CRC32C (FORMAT.md §1): known vectors, incremental updates, and the CPU
// instruction path against the portable table path.

import CLogStoreSupport
import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("CRC32C")
struct CRC32CTests {
    /// Published CRC32C check values (RFC 3720 appendix B.4 and the usual "123456789" check).
    static let vectors: [(name: String, bytes: [UInt8], crc: UInt32)] = [
        ("\"123456789\"", Array("123456789".utf8), 0xE306_9283),
        ("32 zero bytes", [UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ("32 bytes of 0xFF", [UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ("32 increasing bytes 0...31", (0..<32).map { UInt8($0) }, 0x46DD_794E),
        ("32 decreasing bytes 31...0", (0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
        ("no bytes", [], 0),
    ]

    @Test("Known vectors, through CRC32C and both C paths", arguments: 0..<vectors.count)
    func knownVectors(index: Int) {
        let vector = Self.vectors[index]
        #expect(vector.bytes.withUnsafeBytes { CRC32C.checksum($0) } == vector.crc, "\(vector.name)")
        #expect(portable(vector.bytes) == vector.crc, "portable path, \(vector.name)")
        #expect(extend(vector.bytes) == vector.crc, "dispatching path, \(vector.name)")
    }

    @Test("Updating piece by piece equals the checksum of the whole, at every split point")
    func incrementalEqualsOneShot() {
        let buffer = JournalFixtures.noise(count: 300, seed: 1)
        let whole = buffer.withUnsafeBytes { CRC32C.checksum($0) }
        for split in 0...buffer.count {
            var crc = CRC32C()
            crc.update(Array(buffer[..<split]))
            crc.update(Array(buffer[split...]))
            #expect(crc.value == whole, "split at \(split)")
            #expect(logstore_crc32c_extend_portable(portable(Array(buffer[..<split])), Array(buffer[split...]), buffer.count - split) == whole, "portable, split at \(split)")
        }
        // Three pieces, and one byte at a time.
        for first in stride(from: 0, through: buffer.count, by: 7) {
            for second in stride(from: first, through: buffer.count, by: 11) {
                var crc = CRC32C()
                for piece in [buffer[..<first], buffer[first..<second], buffer[second...]] { crc.update(Array(piece)) }
                #expect(crc.value == whole, "splits at \(first) and \(second)")
            }
        }
        var bytewise = CRC32C()
        for byte in buffer { bytewise.update([byte]) }
        #expect(bytewise.value == whole)
    }

    @Test("The hardware path equals the portable path on random buffers of many lengths and alignments")
    func hardwareEqualsPortable() {
        var generator = JournalFixtures.SeededGenerator(seed: 0xC3C3)
        let pool = JournalFixtures.noise(count: (1 << 20) + 64, seed: 2)
        pool.withUnsafeBytes { raw in
            var lengths = Array(0...520) + [1023, 1024, 1025, 4095, 4096, 4097, 65_535, 65_536, 1 << 20]
            lengths += (0..<50).map { _ in Int.random(in: 0...(1 << 16), using: &generator) }
            for length in lengths {
                for alignment in 0..<8 {
                    let bytes = UnsafeRawBufferPointer(rebasing: raw[alignment..<(alignment + length)])
                    let seed = UInt32.random(in: 0...UInt32.max, using: &generator)
                    let hardware = logstore_crc32c_extend(seed, bytes.baseAddress!, bytes.count)
                    let table = logstore_crc32c_extend_portable(seed, bytes.baseAddress!, bytes.count)
                    #expect(hardware == table, "length \(length), alignment \(alignment), starting from \(seed)")
                }
            }
        }
    }

    @Test("The checksum of a suffix follows from the checksums of the whole and of the prefix, at every split point")
    func suffixChecksum() {
        let bytes = JournalFixtures.noise(count: 300, seed: 22)
        let whole = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        for split in 0...bytes.count {
            let prefix = bytes[..<split].withUnsafeBytes { CRC32C.checksum($0) }
            let suffix = bytes[split...].withUnsafeBytes { CRC32C.checksum($0) }
            #expect(CRC32C.suffixChecksum(whole: whole, prefix: prefix, suffixCount: UInt64(bytes.count - split)) == suffix, "split at \(split)")
        }
    }

    @Test("A single flipped bit always changes the checksum")
    func detectsEveryBitFlip() {
        var buffer = JournalFixtures.noise(count: 64, seed: 3)
        let original = buffer.withUnsafeBytes { CRC32C.checksum($0) }
        for bit in 0..<(buffer.count * 8) {
            buffer[bit / 8] ^= 1 << (bit % 8)
            #expect(buffer.withUnsafeBytes { CRC32C.checksum($0) } != original, "bit \(bit)")
            buffer[bit / 8] ^= 1 << (bit % 8)
        }
    }

    private func portable(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { logstore_crc32c_extend_portable(0, $0.baseAddress, $0.count) }
    }

    private func extend(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { logstore_crc32c_extend(0, $0.baseAddress, $0.count) }
    }
}
