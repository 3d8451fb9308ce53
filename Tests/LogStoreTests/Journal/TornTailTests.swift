// A save interrupted mid-write (FORMAT.md §6, the torn-tail rows): cut the
// last frame at every byte and check what open keeps, drops and repairs.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Torn tail")
struct TornTailTests {
    @Test("Cut at every byte of the last frame: read-only open ignores the torn save, read-write open cuts it off, and the next append takes its place")
    func everyCutPoint() throws {
        try JournalFixtures.withStore(count: 5, lastPayloadBytes: 300) { store, directory in
            let last = store.lastFrame
            #expect(last.storedSize >= 300)
            let kept = Array(store.transactions.dropLast())
            let path = directory + "/torn.logstore"

            for cut in (last.offset + 1)..<last.end {
                let torn = Array(store.bytes.prefix(cut))
                let context = "cut at \(cut), \(cut - last.offset) bytes into \(last)"
                try JournalFixtures.write(torn, to: path)

                // Read-only: reports the torn tail and leaves every byte alone.
                let reader = try Journal(path: path, options: JournalFixtures.readOnly)
                Self.expectTornTail(reader.recovery, at: last, cut: cut, context)
                // The two rows of FORMAT.md §6 a cut makes: header cut short, payload cut short.
                let row = cut - last.offset < FrameLayout.headerSize ? "header is cut short" : "payload is cut short"
                #expect(reader.recovery.reason?.contains(row) == true, "\(context): \(String(describing: reader.recovery.reason))")
                #expect(reader.lastSequence == 4, "\(context)")
                #expect(try reader.transactions().map(\.changes) == kept, "\(context)")
                reader.close()
                #expect(try JournalFixtures.read(path) == torn, "\(context): a read-only open changed the file")

                let report = try StoreInspector.verify(path: path)
                #expect(report.isValid && report.validFrames == 4 && report.interruptedSave?.offset == UInt64(last.offset) && report.notes.contains { $0.contains("interrupted save") }, "\(context): \(report)")

                // Read-write: cuts the torn frame off; the next save goes where it was.
                let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
                Self.expectTornTail(journal.recovery, at: last, cut: cut, context)
                #expect(try JournalFixtures.fileSize(path) == last.offset, "\(context): the file was not truncated at the frame's start")
                #expect(journal.lastSequence == 4, "\(context)")
                #expect(try journal.transactions().map(\.changes) == kept, "\(context)")
                // The torn frame's declaration went with it.
                #expect(journal.name(of: JournalFixtures.symbol(JournalFixtures.lastName)) == nil, "\(context)")
                #expect(journal.symbol(for: JournalFixtures.lastName) == JournalFixtures.symbol(JournalFixtures.lastName), "\(context)")
                #expect(try journal.append(store.transactions[4], at: JournalFixtures.commitTime(5)) == 5, "\(context)")
                #expect(try journal.transactions().map(\.changes) == store.transactions, "\(context)")
                journal.close()
                // Written again at the same time, the repaired file is the original, byte for byte.
                let repaired = try JournalFixtures.read(path)
                #expect(repaired == store.bytes, "\(context): the repaired file differs from the original")
                if repaired != store.bytes { break }
            }
        }
    }

    @Test("A store cut exactly at a frame boundary is clean: nothing is dropped")
    func cutAtFrameBoundary() throws {
        try JournalFixtures.withStore(count: 4) { store, directory in
            let path = directory + "/cut.logstore"
            for frame in store.frames {
                try JournalFixtures.write(Array(store.bytes.prefix(frame.end)), to: path)
                let journal = try Journal(path: path)
                #expect(journal.recovery == RecoveryReport.clean(frames: frame.number), "\(frame)")
                #expect(try journal.transactions().map(\.changes) == Array(store.transactions.prefix(frame.number)))
                journal.close()
                #expect(try JournalFixtures.fileSize(path) == frame.end)
            }
        }
    }

    @Test("The only frame torn: the store opens empty and the next append is sequence 1")
    func onlyFrameTorn() throws {
        try JournalFixtures.withStore(count: 2, lastPayloadBytes: 100) { store, directory in
            let path = directory + "/torn.logstore"
            let first = store.frames[0]
            for cut in [first.offset + 1, first.offset + 39, first.offset + 40, first.end - 1] {
                try JournalFixtures.write(Array(store.bytes.prefix(cut)), to: path)
                let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
                Self.expectTornTail(journal.recovery, at: first, cut: cut, "cut at \(cut)")
                #expect(journal.lastSequence == 0)
                #expect(try journal.transactions().isEmpty)
                for name in JournalFixtures.names { _ = journal.symbol(for: name) }
                #expect(try journal.append(store.transactions[0], at: JournalFixtures.commitTime(1)) == 1)
                journal.close()
                #expect(try JournalFixtures.read(path) == Array(store.bytes.prefix(first.end)), "cut at \(cut)")
            }
        }
    }

    @Test("Zeros from the last frame to the end of the file are reserved space: a clean open, read-only or not, keeps them, and the next frame goes into them")
    func zerosAtEndAreReservedSpace() throws {
        try JournalFixtures.withStore(count: 3) { store, _ in
            for zeros in [1, 39, 40, 41, 4096] {
                let file = store.bytes + [UInt8](repeating: 0, count: zeros)
                try JournalFixtures.write(file, to: store.path)
                for options in [JournalFixtures.readOnly, JournalOptions(preallocationSize: 0)] {
                    let journal = try Journal(path: store.path, options: options)
                    var expected = RecoveryReport.clean(frames: 3)
                    expected.reservedByteCount = UInt64(zeros)
                    #expect(journal.recovery == expected, "\(zeros) zeros, \(options.access)")
                    #expect(try journal.transactions().map(\.changes) == store.transactions)
                    journal.close()
                    // Read-only changes nothing; a writer's close cuts off
                    // the reserved space it did not use.
                    let left = options.access == .readOnly ? file : store.bytes
                    #expect(try JournalFixtures.read(store.path) == left, "\(zeros) zeros, \(options.access)")
                }
                // The next frame starts where the last one ends, over the
                // zeros; close cuts off what it left of them.
                try JournalFixtures.write(file, to: store.path)
                let journal = try Journal(path: store.path, options: JournalOptions(preallocationSize: 0))
                _ = try journal.appendSample(key: 4)
                let end = journal.currentFile.end
                journal.close()
                let written = try JournalFixtures.read(store.path)
                #expect(written.count == Int(end), "\(zeros) zeros")
                #expect(Array(written.prefix(store.bytes.count)) == store.bytes)
                let reopened = try Journal(path: store.path)
                #expect(reopened.recovery == RecoveryReport.clean(frames: 4), "\(zeros) zeros")
                reopened.close()
            }
        }
    }

    @Test("No frame magic at the end, zeros then other bytes, nothing valid after: torn tail, cut off with the zeros")
    func zerosThenBytesAtEnd() throws {
        try JournalFixtures.withStore(count: 3) { store, _ in
            for (zeros, tail) in [(0, [UInt8(1)]), (1, [0xff]), (4096, [0, 7, 0])] {
                try JournalFixtures.write(store.bytes + [UInt8](repeating: 0, count: zeros) + tail, to: store.path)
                let journal = try Journal(path: store.path)
                #expect(journal.recovery.outcome == .tornTail, "\(zeros) zeros")
                #expect(journal.recovery.droppedOffset == UInt64(store.bytes.count), "\(zeros) zeros")
                #expect(journal.recovery.droppedByteCount == UInt64(zeros + tail.count), "\(zeros) zeros")
                #expect(journal.recovery.reservedByteCount == 0)
                #expect(journal.recovery.frameCount == 3)
                #expect(try journal.transactions().map(\.changes) == store.transactions)
                journal.close()
                #expect(try JournalFixtures.read(store.path) == store.bytes, "\(zeros) zeros were not cut off")
            }
        }
    }

    @Test("Checksum mismatch in the last frame, nothing valid after: torn tail, dropped whole")
    func checksumMismatchAtEnd() throws {
        try JournalFixtures.withStore(count: 4) { store, _ in
            let last = store.lastFrame
            var damaged = store.bytes
            damaged[last.payloadOffset + 5] ^= 0x10
            try Self.expectLastFrameCutOff(store, damaged, "payload bit flipped")
        }
    }

    @Test("A bad last frame followed by a copy of an older frame is still a torn tail: only later sequence numbers prove damage")
    func olderFrameAfterTornFrameDoesNotCount() throws {
        try JournalFixtures.withStore(count: 4) { store, _ in
            let last = store.lastFrame, first = store.frames[0]
            let bytes = Array(store.bytes.prefix(last.offset + 60)) + store.bytes[first.offset..<first.end]
            try Self.expectLastFrameCutOff(store, bytes, "older frame after a torn one")
        }
    }

    /// Writes `bytes`, a version of `store` whose last frame is bad, opens it
    /// read-write, and checks that everything from the last frame on was cut off.
    static func expectLastFrameCutOff(_ store: JournalFixtures.Store, _ bytes: [UInt8], _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try JournalFixtures.write(bytes, to: store.path)
        let journal = try Journal(path: store.path)
        defer { journal.close() }
        expectTornTail(journal.recovery, at: store.lastFrame, cut: bytes.count, context, sourceLocation: sourceLocation)
        #expect(try journal.transactions().map(\.changes) == Array(store.transactions.dropLast()), "\(context)", sourceLocation: sourceLocation)
        #expect(try JournalFixtures.fileSize(store.path) == store.lastFrame.offset, "\(context)", sourceLocation: sourceLocation)
    }

    /// Checks a torn-tail report: the dropped bytes start at `frame` and run to `cut`.
    static func expectTornTail(_ report: RecoveryReport, at frame: JournalFixtures.Frame, cut: Int, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(report.outcome == .tornTail, "\(context): \(report)", sourceLocation: sourceLocation)
        #expect(report.droppedOffset == UInt64(frame.offset), "\(context): \(report)", sourceLocation: sourceLocation)
        #expect(report.droppedByteCount == UInt64(cut - frame.offset), "\(context): \(report)", sourceLocation: sourceLocation)
        #expect(report.frameCount == frame.number - 1, "\(context): \(report)", sourceLocation: sourceLocation)
        #expect(report.preservedDamagePath == nil, "\(context): \(report)", sourceLocation: sourceLocation)
        #expect(report.reason?.isEmpty == false, "\(context): \(report)", sourceLocation: sourceLocation)
    }
}
