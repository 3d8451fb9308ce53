// The scan after damage does work linear in the file's size, whatever the
// file holds (FORMAT.md §6): counted in bytes examined, never timed.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Scan work")
struct ScanWorkTests {
    /// `valid` (a store's bytes), then `size` bytes in which a frame magic
    /// starts every `period` bytes, each the header of a frame that would
    /// end at the end of the file and fails its checksum: every one a
    /// candidate the scan after the first (the bad frame) must consider,
    /// each claiming most of the file. Every 16 bytes, the next magics
    /// overwrite a header's later fields, so no header parses; every 48
    /// bytes, each header is whole and passes every check but the checksum.
    /// With `reaching`, each claims to end that many bytes past the region.
    static func hostileTail(after valid: [UInt8], size: Int, period: Int, reaching extra: Int = 0) -> [UInt8] {
        var bytes = valid + [UInt8](repeating: 0xA5, count: size)
        let total = bytes.count
        let kept = min(period, FrameLayout.headerSize)
        for start in stride(from: valid.count, to: total - FrameLayout.headerSize, by: period) {
            var header = FrameHeader(
                checksum: 0, storedSize: 0, rawSize: 0, sequence: 4,
                timestampMicroseconds: 0, kind: .transaction, codec: .raw, durableDistance: 1)
            var frame = [UInt8](repeating: 0, count: FrameLayout.headerSize)
            frame.withUnsafeMutableBytes { header.write(into: $0) }
            // Signed as an empty frame, so the checksum cannot match.
            let storedSize = UInt32(total + extra - start - FrameLayout.headerSize)
            JournalFixtures.store(storedSize, into: &frame, at: 8)
            JournalFixtures.store(storedSize, into: &frame, at: 12)
            bytes.replaceSubrange(start..<(start + kept), with: frame[0..<kept])
        }
        return bytes
    }

    @Test("The scan after damage examines a bounded multiple of the file's size, with a frame magic every 16 bytes or a whole frame header every 48",
          arguments: [16, 48])
    func hostileCandidates(period: Int) throws {
        let store = try withTemporaryDirectory { directory in
            try JournalFixtures.makeStore(at: directory + "/store.logstore", count: 3)
        }
        let bytes = Self.hostileTail(after: store.bytes, size: 1 << 20, period: period)
        let disk = SimulatedDisk()
        disk.setContents(of: "/hostile.logstore", to: bytes)
        let file = try disk.open("/hostile.logstore", .readOnly)
        defer { file.close() }
        var scanner = FrameScanner(file: file, limit: UInt64(bytes.count))
        let summary = try scanner.scan(from: UInt64(store.frames[0].offset)) { _, _ in }
        #expect(summary.frameCount == 3)
        #expect(summary.end == .tornTail(offset: UInt64(store.bytes.count), byteCount: UInt64(bytes.count - store.bytes.count), reason: "the frame fails its checksum"))
        let ratio = Double(scanner.examinedByteCount) / Double(bytes.count)
        print("scan work: \(bytes.count) bytes, a candidate frame every \(period) bytes after damage: \(scanner.examinedByteCount) bytes examined, \(String(format: "%.1f", ratio)) × the file")
        #expect(ratio < 8, "the scan examined \(scanner.examinedByteCount) bytes of a \(bytes.count)-byte file")
    }

    @Test("Among candidates that overlap, the scan finds the valid frames: the first for verify, every one for the open rule")
    func validFramesAmongCandidates() throws {
        try withTemporaryDirectory { directory in
            let store = try DurableClaimTests.makeStore(at: directory + "/store.logstore", count: 5)
            // Frame 3 lost; in its place candidates that claim to reach past
            // frames 4 and 5, which stay whole and valid.
            let hole = store.frames[2]
            let after = Array(store.bytes[hole.end...])
            let bytes = Self.hostileTail(after: Array(store.bytes[..<hole.offset]), size: hole.size, period: 48, reaching: after.count - 10) + after
            let disk = SimulatedDisk()
            disk.setContents(of: "/store.logstore", to: bytes)
            let file = try disk.open("/store.logstore", .readOnly)
            defer { file.close() }
            var scanner = FrameScanner(file: file, limit: UInt64(bytes.count))
            #expect(try scanner.nextValidFrame(after: UInt64(hole.offset), sequenceAbove: 2) == UInt64(store.frames[3].offset))
            #expect(try scanner.nextValidFrame(after: UInt64(store.frames[3].offset), sequenceAbove: 2) == UInt64(store.frames[4].offset))
            #expect(try scanner.nextValidFrame(after: UInt64(store.frames[4].offset), sequenceAbove: 2) == nil)
            var reader = FrameScanner(file: file, limit: UInt64(bytes.count))
            let summary = try reader.scan(from: UInt64(store.frames[0].offset)) { _, _ in }
            #expect(summary.frameCount == 2)
            #expect(summary.unsyncedFramesAfterEnd == 2)
        }
    }
}
