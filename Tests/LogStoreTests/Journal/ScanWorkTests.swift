// The scan after damage does work linear in the file's size, whatever the
// file holds (FORMAT.md §6): counted in bytes examined, never timed.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Scan work")
struct ScanWorkTests {
    /// A store of a few valid frames, then a bad one, then `size` bytes in
    /// which a frame magic starts every 16 bytes, each the header of a frame
    /// that would end at the end of the file and fails its checksum: every
    /// candidate a search for the next valid frame must consider, each
    /// claiming most of the file.
    static func hostileFile(size: Int) throws -> [UInt8] {
        try withTemporaryDirectory { directory in
            let store = try JournalFixtures.makeStore(at: directory + "/store.logstore", count: 3)
            return hostileTail(after: store.bytes, size: size)
        }
    }

    /// `valid` followed by a bad frame and the magic-every-16-bytes region.
    static func hostileTail(after valid: [UInt8], size: Int) -> [UInt8] {
        var bytes = valid + [UInt8](repeating: 0xA5, count: size)
        let total = bytes.count
        for start in stride(from: valid.count, to: total - FrameLayout.headerSize, by: 16) {
            var header = FrameHeader(
                checksum: 0, storedSize: UInt32(total - start - FrameLayout.headerSize), rawSize: UInt32(total - start - FrameLayout.headerSize),
                sequence: 4, timestampMicroseconds: 0, kind: .transaction, codec: .raw, durableDistance: 1)
            var head = [UInt8](repeating: 0, count: FrameLayout.headerSize + Int(header.storedSize))
            // Only the first 16 bytes are kept (the next magic follows), so
            // the checksum computed here cannot match what the file holds.
            head.withUnsafeMutableBytes { header.write(into: $0) }
            bytes.replaceSubrange(start..<(start + 16), with: head[0..<16])
        }
        return bytes
    }

    @Test("Recovering a file with a frame magic every 16 bytes after damage examines a bounded multiple of its size")
    func magicEverySixteenBytes() throws {
        let size = 1 << 20
        let bytes = try Self.hostileFile(size: size)
        let disk = SimulatedDisk()
        disk.setContents(of: "/hostile.logstore", to: bytes)
        let file = try disk.open("/hostile.logstore", .readOnly)
        defer { file.close() }
        var scanner = FrameScanner(file: file, limit: UInt64(bytes.count))
        let summary = try scanner.scan { _, _ in }
        #expect(summary.frameCount == 3)
        guard case .tornTail = summary.end else {
            Issue.record("the scan ends \(summary.end), not at a torn tail: no candidate is valid")
            return
        }
        let ratio = Double(scanner.examinedByteCount) / Double(bytes.count)
        print("scan work: \(bytes.count) bytes with a frame magic every 16 bytes after damage: \(scanner.examinedByteCount) bytes examined, \(String(format: "%.1f", ratio)) × the file")
        #expect(ratio < 8, "the scan examined \(scanner.examinedByteCount) bytes of a \(bytes.count)-byte file")
    }
}
