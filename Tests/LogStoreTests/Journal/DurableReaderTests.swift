// A read-only opener never returns a frame the writer could still cut off
// after a failed flush (FORMAT.md §7): while a writer holds the store, it
// reads only what some frame records as durable.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Durable readers")
struct DurableReaderTests {
    static let path = "/simulated/reader.logstore"

    @Test("A read-only open during a flush that then fails does not return the frame the writer cuts off")
    func readerDuringFailingFlush() throws {
        let disk = SimulatedDisk()
        let writer = try Journal(path: Self.path, options: JournalOptions(durability: .groupCommit(window: .zero)), fileSystem: disk)
        defer { writer.close() }
        for key in 1...2 { _ = try writer.appendSample(key: UInt64(key)) }

        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        disk.arm(failing: 1, of: "fdatasync")
        disk.holdNextFdatasync(arrived: arrived, gate: gate)
        let failed = DispatchSemaphore(value: 0)
        Thread {
            #expect(throws: LogStoreError.self) { _ = try writer.appendSample(key: 3) }
            failed.signal()
        }.start()
        arrived.wait()
        // Frame 3 is written, its flush not done: the writer may cut it off.
        let reader = try Journal(path: Self.path, options: JournalOptions(access: .readOnly), fileSystem: disk)
        defer { reader.close() }
        gate.signal()
        failed.wait()
        #expect(reader.lastSequence == 2)
        #expect(try reader.checkSamples() == 2)
        #expect(reader.recovery.framesNotYetDurable == 1)
        #expect(try JournalFixtures.frames(in: disk.contents(of: Self.path)!).count == 2, "the writer did not cut the failed frame off")
    }

    @Test("With a writer, a reader stops at the last frame some frame records durable; with none, it reads every whole frame")
    func readerLagsOnlyWhileAWriterHoldsTheStore() throws {
        let disk = SimulatedDisk()
        let writer = try Journal(path: Self.path, options: JournalOptions(durability: .deferredToOS), fileSystem: disk)
        for key in 1...3 { _ = try writer.appendSample(key: UInt64(key)) }
        // Under .deferredToOS nothing after the open is known durable.
        let during = try Journal(path: Self.path, options: JournalOptions(access: .readOnly), fileSystem: disk)
        #expect(during.lastSequence == 0)
        #expect(during.recovery.framesNotYetDurable == 3)
        during.close()
        writer.close()
        let after = try Journal(path: Self.path, options: JournalOptions(access: .readOnly), fileSystem: disk)
        defer { after.close() }
        #expect(try after.checkSamples() == 3)
        #expect(after.recovery == RecoveryReport.clean(frames: 3))
    }

    @Test("Damage a reader finds while a writer holds the store is read again: gone on the second read, the open is clean; still there after the rereads, it is damage")
    func damageWhileAWriterHoldsTheStoreIsReadAgain() throws {
        let disk = SimulatedDisk()
        let writer = try Journal(path: Self.path, options: JournalOptions(preallocationSize: 0), fileSystem: disk)
        defer { writer.close() }
        for key in 1...5 { _ = try writer.appendSample(key: UInt64(key)) }
        let whole = try #require(disk.contents(of: Self.path))
        // Frame 4 as a reader may see it while it is written: a byte not
        // there yet. Frame 5 records it durable, so the scan calls it damage.
        var torn = whole
        let fourth = JournalFixtures.frames(in: whole)[3]
        torn[fourth.offset + FrameLayout.headerSize + fourth.storedSize / 2] ^= 0xff

        // The first scan reads the torn bytes; by its second, the frame is whole.
        disk.setContents(of: Self.path, to: torn)
        // Held after the header and the first scan's one read of every frame.
        let reader = try disk.openReadOnly(Self.path, holdingReadAfter: 2, never: "the reader never read again") {
            disk.setContents(of: Self.path, to: whole)
        }.get()
        #expect(try reader.checkSamples() == 4, "every frame that a frame records durable")
        #expect(reader.recovery.outcome == .clean)
        reader.close()

        // Damage that stays is damage, after the rereads.
        disk.setContents(of: Self.path, to: torn)
        let error = #expect(throws: LogStoreError.self) { try Journal(path: Self.path, options: JournalOptions(access: .readOnly), fileSystem: disk) }
        #expect(error?.kind == .corruptFrame)
        #expect(error?.offset == UInt64(fourth.offset))
    }

    @Test("A writer's open waits out a reader's test lock instead of failing")
    func writerWaitsOutTestLock() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            try Journal(path: path).close()
            // A reader's test lock, held as long as a slow reader might.
            let descriptor = open(path, O_RDONLY)
            #expect(descriptor >= 0 && flock(descriptor, LOCK_SH | LOCK_NB) == 0)
            let released = DispatchSemaphore(value: 0)
            Thread {
                usleep(20_000)
                _ = flock(descriptor, LOCK_UN)
                _ = close(descriptor)
                released.signal()
            }.start()
            defer { released.wait() }
            let writer = try Journal(path: path)
            writer.close()
        }
    }

    @Test("Readers testing for a writer never make a writer's open fail")
    func probesDoNotLockWritersOut() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            // Frames no frame records durable, so each reader tests for a writer.
            let first = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            for key in 1...3 { _ = try first.appendSample(key: UInt64(key)) }
            first.close()
            let stop = Protected(false)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                defer { finished.signal() }
                while !stop.withLock({ $0 }) {
                    do { try Journal(path: path, options: JournalOptions(access: .readOnly)).close() } catch { Issue.record("reader: \(error)"); return }
                }
            }.start()
            defer {
                stop.withLock { $0 = true }
                finished.wait()
            }
            for round in 1...500 {
                do { try Journal(path: path, options: JournalOptions(durability: .deferredToOS)).close() } catch { Issue.record("writer open \(round): \(error)"); return }
            }
        }
    }
}
