// The 40-byte frame header (FORMAT.md §3): its byte layout, what the
// checksum covers, and each clause of the validity rule.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Frame header")
struct FrameHeaderTests {
    static let limit = UInt32(FrameLayout.maxPayloadSize)

    @Test("The header's fields sit at the offsets of FORMAT.md §3, little-endian")
    func layout() {
        let payload = JournalFixtures.noise(count: 50, seed: 11)
        let (bytes, header) = Self.frame(payload: payload, rawSize: 50, sequence: 0x0102_0304_0506_0708, codec: .raw)
        #expect(Array(bytes[0..<4]) == Array("LSFR".utf8))
        #expect(Array(bytes[8..<12]) == [50, 0, 0, 0])
        #expect(Array(bytes[12..<16]) == [50, 0, 0, 0])
        #expect(Array(bytes[16..<24]) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(JournalFixtures.load(Int64.self, from: bytes, at: 24) == -1_234_567)
        #expect(bytes[32] == 1 && bytes[33] == 0)
        #expect(Array(bytes[34..<40]) == [0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[40...]) == payload)
        let covered = bytes[8...].withUnsafeBytes { CRC32C.checksum($0) }
        #expect(JournalFixtures.load(UInt32.self, from: bytes, at: 4) == covered)
        #expect(header.checksum == covered)
    }

    @Test("parse reads back what write wrote, for both codecs")
    func roundTrip() throws {
        for (codec, rawSize) in [(PayloadCodec.raw, UInt32(30)), (.lz4Block, 30 * 255 + 16)] {
            let (bytes, header) = Self.frame(payload: JournalFixtures.noise(count: 30, seed: 12), rawSize: rawSize, sequence: .max, codec: codec)
            let parsed = try bytes.prefix(FrameLayout.headerSize).withUnsafeBytes { try FrameHeader.parse($0).get() }
            #expect(parsed == header)
            #expect(parsed.frameSize == 70)
        }
    }

    @Test("The checksum covers bytes 8 ..< 40 + storedSize: every bit flip there, or in the checksum, is caught; the magic is checked on its own")
    func checksumCoverage() {
        var (bytes, _) = Self.frame(payload: JournalFixtures.noise(count: 24, seed: 13), rawSize: 24, sequence: 3, codec: .raw)
        #expect(Self.checksumMatches(bytes))
        for bit in 0..<(bytes.count * 8) {
            bytes[bit / 8] ^= 1 << (bit % 8)
            #expect(Self.checksumMatches(bytes) == (bit < 32), "bit \(bit % 8) of byte \(bit / 8)")
            bytes[bit / 8] ^= 1 << (bit % 8)
        }
    }

    @Test("Declared sizes up to 256 MiB pass the first check; one byte more, or 4 GiB, is an impossible size")
    func sizeLimit() {
        let cases: [(stored: UInt32, raw: UInt32, valid: Bool)] = [
            (0, 0, true), (Self.limit, Self.limit, true), (Self.limit + 1, 0, false), (0, Self.limit + 1, false),
            (.max, 0, false), (0, .max, false), (.max, .max, false), (1 << 31, 1, false),
        ]
        for (stored, raw, valid) in cases {
            var bytes = Self.frame(payload: [], rawSize: 0, sequence: 1, codec: .raw).bytes
            JournalFixtures.store(stored, into: &bytes, at: 8)
            JournalFixtures.store(raw, into: &bytes, at: 12)
            let result = bytes.withUnsafeBytes { FrameHeader.declaredPayloadSize($0) }
            switch result {
            case .success(let size): #expect(valid && size == stored, "stored \(stored), raw \(raw)")
            case .failure(let problem):
                #expect(!valid, "stored \(stored), raw \(raw): \(problem)")
                guard case .impossibleSize = problem else { Issue.record("stored \(stored), raw \(raw): \(problem)"); continue }
            }
        }
    }

    @Test("Any flipped bit of the magic is a bad magic")
    func badMagic() {
        for bit in 0..<32 {
            var bytes = Self.frame(payload: [], rawSize: 0, sequence: 1, codec: .raw).bytes
            bytes[bit / 8] ^= 1 << (bit % 8)
            #expect(bytes.withUnsafeBytes { FrameHeader.declaredPayloadSize($0) } == .failure(.badMagic), "bit \(bit)")
            #expect(bytes.withUnsafeBytes { FrameHeader.parse($0) } == .failure(.badMagic), "bit \(bit)")
        }
    }

    @Test("Unknown kind or codec, any flags bit but bit 0 (carries a dictionary), and any bit of a snapshot frame's durable distance are unknown fields")
    func unknownFields() {
        var edits: [(String, (inout [UInt8]) -> Void)] = []
        for kind: UInt8 in [0, 7, 0x81, 255] { edits.append(("kind \(kind)", { $0[32] = kind })) }
        for codec: UInt8 in [3, 4, 0x80, 255] { edits.append(("codec \(codec)", { $0[33] = codec })) }
        for bit in 1..<16 { edits.append(("flags bit \(bit)", { JournalFixtures.store(UInt16(1) << bit, into: &$0, at: 34) })) }
        for kind in [FrameKind.snapshotBlock, .snapshotIndex, .indexBlock, .catalog, .root] {
            for bit in 0..<32 {
                edits.append(("\(kind), durable distance bit \(bit)", {
                    $0[32] = kind.rawValue
                    JournalFixtures.store(UInt32(1) << bit, into: &$0, at: FrameLayout.durableDistanceOffset)
                }))
            }
        }
        for (label, edit) in edits {
            var bytes = Self.frame(payload: [1, 2, 3], rawSize: 3, sequence: 1, codec: .raw).bytes
            edit(&bytes)
            guard case .failure(.unknownField) = bytes.withUnsafeBytes({ FrameHeader.parse($0) }) else {
                Issue.record("\(label) parses as \(bytes.withUnsafeBytes { FrameHeader.parse($0) })")
                continue
            }
        }
    }

    @Test("A transaction frame's durable distance reads back, and names the last sequence its writer knew durable; 0 names none")
    func durableDistance() {
        for (sequence, distance, durable) in [(UInt64(5), UInt32(0), UInt64?.none), (5, 1, 4), (5, 5, 0), (5, 9, 0), (1 << 40, .max, (1 << 40) - UInt64(UInt32.max))] {
            var header = FrameHeader(checksum: 0, storedSize: 0, rawSize: 0, sequence: sequence, timestampMicroseconds: 0, kind: .transaction, codec: .raw, durableDistance: distance)
            var bytes = [UInt8](repeating: 0, count: FrameLayout.headerSize)
            bytes.withUnsafeMutableBytes { header.write(into: $0) }
            let parsed = bytes.withUnsafeBytes { FrameHeader.parse($0) }
            #expect(parsed == .success(header), "sequence \(sequence), distance \(distance)")
            #expect(header.durableSequence == durable, "sequence \(sequence), distance \(distance)")
        }
        // Never more than is true, even where the distance does not fit.
        #expect(FrameHeader.durableDistance(sequence: 9, durable: 8) == 1)
        #expect(FrameHeader.durableDistance(sequence: 9, durable: 0) == 9)
        #expect(FrameHeader.durableDistance(sequence: 1 << 40, durable: 0) == .max)
    }

    @Test("The codec's size rule: raw needs rawSize == storedSize; LZ4, with or without the dictionary, allows at most 255 × storedSize + 16")
    func codecSizeRule() {
        let cases: [(codec: PayloadCodec, stored: UInt32, raw: UInt32, valid: Bool)] = [
            (.raw, 10, 10, true), (.raw, 10, 9, false), (.raw, 10, 11, false), (.raw, 0, 0, true), (.raw, 0, 1, false),
            (.lz4Block, 10, 10 * 255 + 16, true), (.lz4Block, 10, 10 * 255 + 17, false), (.lz4Block, 10, 0, true),
            (.lz4Block, 0, 16, true), (.lz4Block, 0, 17, false), (.lz4Block, 1_000_000, Self.limit, false),
            (.lz4Block, 1_052_689, Self.limit, true),
            (.lz4BlockWithDictionary, 10, 10 * 255 + 16, true), (.lz4BlockWithDictionary, 10, 10 * 255 + 17, false),
        ]
        for (codec, stored, raw, valid) in cases {
            var bytes = Self.frame(payload: [], rawSize: 0, sequence: 1, codec: codec).bytes
            JournalFixtures.store(stored, into: &bytes, at: 8)
            JournalFixtures.store(raw, into: &bytes, at: 12)
            let result = bytes.withUnsafeBytes { FrameHeader.parse($0) }
            switch result {
            case .success: #expect(valid, "\(codec) stored \(stored) raw \(raw) passes")
            case .failure(.impossibleSize): #expect(!valid, "\(codec) stored \(stored) raw \(raw) is refused")
            case .failure(let problem): Issue.record("\(codec) stored \(stored) raw \(raw): \(problem)")
            }
        }
    }

    // MARK: - Helpers

    /// A frame written by ``FrameHeader/write(into:)`` with a fixed timestamp.
    static func frame(payload: [UInt8], rawSize: UInt32, sequence: UInt64, codec: PayloadCodec) -> (bytes: [UInt8], header: FrameHeader) {
        var bytes = [UInt8](repeating: 0xEE, count: FrameLayout.headerSize) + payload
        var header = FrameHeader(
            checksum: 0, storedSize: UInt32(payload.count), rawSize: rawSize, sequence: sequence,
            timestampMicroseconds: -1_234_567, kind: .transaction, codec: codec)
        bytes.withUnsafeMutableBytes { header.write(into: $0) }
        return (bytes, header)
    }

    static func checksumMatches(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            FrameHeader.checksumMatches(
                header: UnsafeRawBufferPointer(rebasing: raw[0..<FrameLayout.headerSize]),
                payload: UnsafeRawBufferPointer(rebasing: raw[FrameLayout.headerSize...]))
        }
    }
}
