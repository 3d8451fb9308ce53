// Reading a snapshot frame that a handle or directory entry names, whose
// size it gives (FORMAT.md §13.3): one read of exactly that frame.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Frame read by its handle")
struct FrameByHandleTests {
    /// A file holding one snapshot block frame at the first frame offset,
    /// then `trailing` bytes of another frame's worth of zeros.
    private static func withFrame(trailing: Int = 64, _ body: (any FileIO, FrameHandle, [UInt8]) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let file = try SystemFile(path: directory + "/frames", mode: .createExclusive(permissions: 0o600))
            let payload = Array((0..<3_000).map { UInt8(truncatingIfNeeded: $0 % 7) })
            let appender = FrameAppender(file: file, at: UInt64(FileLayout.headerSize), time: Date(), compression: .lz4)
            let handle = try appender.append(.snapshotBlock, sequence: 1, payload)
            try [UInt8](repeating: 0, count: trailing).withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: appender.offset) }
            try body(file, handle, payload)
        }
    }

    @Test("A frame read by its handle's size is the frame read by its header: same header, same payload")
    func sameFrameEitherWay() throws {
        try Self.withFrame { file, handle, payload in
            let end = handle.offset + handle.frameSize
            guard case .success(let filled) = try FrameScanner.readFrame(in: file, at: handle.offset, limit: end, filling: true),
                  case .success(let scanned) = try FrameScanner.readFrame(in: file, at: handle.offset, limit: end + 64) else {
                Issue.record("the frame did not read")
                return
            }
            #expect(filled.0 == scanned.0)
            #expect(filled.1 == scanned.1)
            #expect(filled.0.storedSize == handle.storedSize && filled.0.checksum == handle.checksum)
            #expect(try SnapshotFile.decompress(filled.0, filled.1) == payload)
        }
    }

    @Test("A handle whose size is not the frame's is refused, larger or smaller, and a size no frame can have is refused before it is read")
    func sizeMustBeTheFrames() throws {
        try Self.withFrame { file, handle, _ in
            let end = handle.offset + handle.frameSize
            // Larger: the frame ends before where the handle says.
            guard case .failure(let larger) = try FrameScanner.readFrame(in: file, at: handle.offset, limit: end + 1, filling: true) else {
                Issue.record("a handle one byte too large was accepted")
                return
            }
            #expect(larger.reason.contains("where \(handle.storedSize + 1) were expected"), "\(larger.reason)")
            // Smaller: the frame's header claims bytes past the handle.
            guard case .failure(let smaller) = try FrameScanner.readFrame(in: file, at: handle.offset, limit: end - 1, filling: true) else {
                Issue.record("a handle one byte too small was accepted")
                return
            }
            #expect(smaller.reason.contains("past the end of its region"), "\(smaller.reason)")
            let huge = handle.offset + UInt64(FrameLayout.headerSize + FrameLayout.maxPayloadSize) + 1
            guard case .failure(let tooLarge) = try FrameScanner.readFrame(in: file, at: handle.offset, limit: huge, filling: true) else {
                Issue.record("a handle larger than any frame was accepted")
                return
            }
            #expect(tooLarge.reason.contains("larger than any frame"), "\(tooLarge.reason)")
        }
    }

    @Test("A handle reaching past the end of the file is a frame cut short, not a crash")
    func pastTheEnd() throws {
        try Self.withFrame(trailing: 0) { file, handle, _ in
            let end = handle.offset + handle.frameSize
            guard case .failure(let failure) = try FrameScanner.readFrame(in: file, at: handle.offset, limit: end + 100, filling: true) else {
                Issue.record("a frame past the end of the file was accepted")
                return
            }
            #expect(failure.reason.contains("the file ends inside the frame"), "\(failure.reason)")
        }
    }
}
