// Damage that no crash explains (FORMAT.md §6): a flipped bit in the last
// frame looks like a torn append, the same bit in an earlier frame is damage
// that fails the open at that frame, and verify lists it.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Corruption")
struct CorruptionTests {
    @Test("A flipped bit anywhere in the last frame is a torn tail, except a size field flipped over 256 MiB, which is damage")
    func bitFlipInLastFrame() throws {
        try JournalFixtures.withStore(count: 4, lastPayloadBytes: 200) { store, directory in
            let last = store.lastFrame
            let path = directory + "/flipped.logstore"
            var impossibleSizes = 0
            for (index, flip) in Self.flips(of: last).enumerated() {
                let flipped = Self.flipping(store.bytes, flip)
                let context = "bit \(flip.bit) of byte \(flip.offset - last.offset) of \(last)"
                try JournalFixtures.write(flipped, to: path)
                // FORMAT.md §6: a size over the limit is damage anywhere; every
                // other bad last frame is indistinguishable from a torn append.
                let stored = JournalFixtures.load(UInt32.self, from: flipped, at: last.offset + 8)
                let raw = JournalFixtures.load(UInt32.self, from: flipped, at: last.offset + 12)
                if max(stored, raw) > UInt32(FrameLayout.maxPayloadSize) {
                    impossibleSizes += 1
                    JournalFixtures.expectCorruptFrame(path, at: last, JournalFixtures.readOnly, context)
                    JournalFixtures.expectCorruptFrame(path, at: last, JournalOptions(), context)
                    #expect(try JournalFixtures.read(path) == flipped, "\(context): a refused open changed the file")
                    continue
                }
                let reader = try Journal(path: path, options: JournalFixtures.readOnly)
                TornTailTests.expectTornTail(reader.recovery, at: last, cut: last.end, context)
                #expect(try reader.transactions().map(\.changes) == Array(store.transactions.dropLast()), "\(context)")
                reader.close()
                // Read-write on a sample: the frame is cut off.
                if index % 5 == 0 {
                    let journal = try Journal(path: path)
                    TornTailTests.expectTornTail(journal.recovery, at: last, cut: last.end, context)
                    journal.close()
                    #expect(try JournalFixtures.read(path) == Array(store.bytes.prefix(last.offset)), "\(context)")
                }
            }
            // Bits 28–31 of storedSize and of rawSize.
            #expect(impossibleSizes == 8)
        }
    }

    @Test("A flipped bit anywhere in an earlier frame fails the open with .corruptFrame at that frame, and verify reports it", arguments: [1, 2, 3])
    func bitFlipInEarlierFrame(frameNumber: Int) throws {
        try JournalFixtures.withStore(count: 4) { store, directory in
            let frame = store.frames[frameNumber - 1]
            let path = directory + "/flipped.logstore"
            for (index, flip) in Self.flips(of: frame).enumerated() {
                let flipped = Self.flipping(store.bytes, flip)
                let context = "bit \(flip.bit) of byte \(flip.offset - frame.offset) of \(frame)"
                try JournalFixtures.write(flipped, to: path)
                JournalFixtures.expectCorruptFrame(path, at: frame, JournalFixtures.readOnly, context)
                if index % 5 == 0 {
                    JournalFixtures.expectCorruptFrame(path, at: frame, JournalOptions(), context)
                    #expect(try JournalFixtures.read(path) == flipped, "\(context): a refused open changed the file")
                }
                let report = try StoreInspector.verify(path: path)
                #expect(report.problems.first?.offset == UInt64(frame.offset), "\(context): \(report.problems)")
                #expect(report.problems.first?.frameNumber == frame.number, "\(context): \(report.problems)")
                if frame.number > 1 {
                    // Frame 1 declares every name, so only its loss makes later frames fail too.
                    #expect(report.problems.count == 1 && report.validFrames == store.frames.count - 1, "\(context): \(report)")
                }
            }
        }
    }

    @Test("Checksum mismatch with a valid, later frame after it: .corruptFrame at the bad frame, not a torn tail")
    func checksumMismatchMidFile() throws {
        try Self.withDamagedFrame(2, of: 4) { bytes, frame in
            bytes[frame.payloadOffset] ^= 0x01
        }
    }

    @Test("No frame magic, with a valid frame after it: .corruptFrame")
    func noMagicMidFile() throws {
        try Self.withDamagedFrame(3, of: 4) { bytes, frame in
            bytes[frame.offset + 2] = UInt8(ascii: "X")
        }
    }

    @Test("A frame lost to zeros (a write the disk dropped) with a valid frame after it: .corruptFrame")
    func zeroedFrameMidFile() throws {
        try Self.withDamagedFrame(2, of: 4) { bytes, frame in
            for offset in frame.offset..<frame.end { bytes[offset] = 0 }
        }
    }

    @Test("Payload cut short (storedSize past the end of the file) with valid frames after it: .corruptFrame")
    func payloadCutShortMidFile() throws {
        try Self.withDamagedFrame(2, of: 4) { bytes, frame in
            JournalFixtures.store(UInt32(bytes.count), into: &bytes, at: frame.offset + 8)
        }
    }

    @Test("A storedSize shrunk by a flipped bit, with valid frames after it: .corruptFrame, and verify resumes at the next frame")
    func storedSizeShrunkMidFile() throws {
        try Self.withDamagedFrame(2, of: 4) { bytes, frame in
            JournalFixtures.store(UInt32(frame.storedSize - 1), into: &bytes, at: frame.offset + 8)
        }
    }

    // MARK: - Helpers

    /// Every bit of the 40-byte header, and three bits of every payload byte.
    static func flips(of frame: JournalFixtures.Frame) -> [(offset: Int, bit: Int)] {
        let header = (0..<(FrameLayout.headerSize * 8)).map { (frame.offset + $0 / 8, $0 % 8) }
        let payload = (0..<frame.storedSize).flatMap { byte in
            [byte % 8, (byte + 3) % 8, (byte + 6) % 8].map { (frame.payloadOffset + byte, $0) }
        }
        return header + payload
    }

    static func flipping(_ bytes: [UInt8], _ flip: (offset: Int, bit: Int)) -> [UInt8] {
        var bytes = bytes
        bytes[flip.offset] ^= 1 << flip.bit
        return bytes
    }

    /// Builds a store of `count` transactions, damages frame `number` with
    /// `edit`, and checks that strict opens fail at that frame, that nothing
    /// is changed, and that verify reports it.
    static func withDamagedFrame(
        _ number: Int, of count: Int, sourceLocation: SourceLocation = #_sourceLocation,
        _ edit: (inout [UInt8], JournalFixtures.Frame) -> Void
    ) throws {
        try JournalFixtures.withStore(count: count) { store, _ in
            let frame = store.frames[number - 1]
            var bytes = store.bytes
            edit(&bytes, frame)
            try JournalFixtures.write(bytes, to: store.path)
            JournalFixtures.expectCorruptFrame(store.path, at: frame, JournalOptions(), "read-write", sourceLocation: sourceLocation)
            JournalFixtures.expectCorruptFrame(store.path, at: frame, JournalFixtures.readOnly, "read-only", sourceLocation: sourceLocation)
            #expect(try JournalFixtures.read(store.path) == bytes, "a refused open changed the file", sourceLocation: sourceLocation)
            let report = try StoreInspector.verify(path: store.path)
            #expect(report.problems.map(\.offset) == [UInt64(frame.offset)], "\(report)", sourceLocation: sourceLocation)
            #expect(report.problems.map(\.frameNumber) == [number], "\(report)", sourceLocation: sourceLocation)
            #expect(report.validFrames == count - 1, "\(report)", sourceLocation: sourceLocation)
            let info = try StoreInspector.info(path: store.path)
            #expect(info.damage?.contains("offset \(frame.offset)") == true, "\(info)", sourceLocation: sourceLocation)
        }
    }
}
