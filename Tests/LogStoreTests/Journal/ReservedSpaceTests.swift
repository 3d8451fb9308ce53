// The writer reserves file space ahead of its frames, so that a durable
// save's fdatasync has no file size to commit (FORMAT.md §7, *Reserved
// space*): what the file holds while open, after a crash, after a close,
// and when reserving fails.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import LogStore

@Suite("Reserved space")
struct ReservedSpaceTests {
    static let path = "/simulated/reserved.logstore"

    @Test("Saves write into space reserved ahead of them, the file's size changing once per reservation; close cuts the rest off")
    func savesWriteIntoReservedSpace() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            // Uncompressed, so that a large sample's frame is as large as its payload.
            let journal = try Journal(path: path, options: JournalOptions(compression: .none, preallocationSize: 64 << 10))
            _ = try journal.appendSample(key: 1)
            let reserved = try JournalFixtures.fileSize(path)
            #expect(reserved == journal.currentFile.end + (64 << 10))
            for key in 2...20 { _ = try journal.appendSample(key: UInt64(key)) }
            #expect(try JournalFixtures.fileSize(path) == reserved, "a save within the reservation changed the file's size")
            #expect(journal.statistics.reservations == 1)
            // A save larger than what is left reserves again, past its own end.
            _ = try journal.appendSample(key: 21, size: 100 << 10)
            #expect(journal.statistics.reservations == 2)
            #expect(try JournalFixtures.fileSize(path) == journal.currentFile.end + (64 << 10))
            let end = journal.currentFile.end
            journal.close()
            #expect(try JournalFixtures.fileSize(path) == end)

            let reopened = try Journal(path: path)
            defer { reopened.close() }
            #expect(reopened.recovery == RecoveryReport.clean(frames: 21))
            #expect(try reopened.checkSamples() == 21)
        }
    }

    @Test("After a crash or a power cut the reserved space is there: the open is clean, keeps it, and writes the next saves into it",
          arguments: [Durability.fsyncEveryCommit, .groupCommit(window: .zero), .deferredToOS])
    func reopenAfterCrashWritesIntoReservedSpace(durability: Durability) throws {
        let disk = SimulatedDisk()
        let writer = try Journal(path: Self.path, options: JournalOptions(durability: durability, preallocationSize: 4096), fileSystem: disk)
        for key in 1...5 { _ = try writer.appendSample(key: UInt64(key)) }
        // Not closed: the process died, and the power may have gone.
        for cut in [SimulatedDisk.PowerCut.loseUnsynced, .reordered] {
            let after = disk.afterPowerCut(cut, seed: 7)
            let size = try #require(after.contents(of: Self.path)).count
            let journal = try Journal(path: Self.path, options: JournalOptions(durability: durability, preallocationSize: 4096), fileSystem: after)
            let kept = try journal.checkSamples()
            // Under .deferredToOS a power cut may tear the unsynced frames.
            if durability != .deferredToOS {
                #expect(kept == 5, "\(cut): an acknowledged save is missing")
                #expect(journal.recovery.outcome == .clean, "\(cut): \(journal.recovery)")
            }
            if journal.recovery.outcome == .clean {
                #expect(UInt64(size) == journal.currentFile.end + journal.recovery.reservedByteCount, "\(cut)")
            }
            _ = try journal.appendSample(key: UInt64(kept + 1))
            if journal.recovery.outcome == .clean, journal.recovery.reservedByteCount > 200 {
                #expect(try #require(after.contents(of: Self.path)).count == size, "\(cut): the save did not go into the reserved space")
            }
            let end = journal.currentFile.end
            journal.close()
            #expect(try #require(after.contents(of: Self.path)).count == Int(end), "\(cut): close left reserved space")
            let reopened = try Journal(path: Self.path, options: JournalOptions(), fileSystem: after)
            #expect(try reopened.checkSamples() == kept + 1, "\(cut)")
            reopened.close()
        }
        writer.close()
    }

    @Test("Where reserving fails (a full disk, no allocation), saves append as without it", arguments: [ENOSPC, EOPNOTSUPP, EIO])
    func reservingFails(code: Int32) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let (journal, file) = try makeFaultyJournal(at: path, plan: .init(reserveError: code))
            for key in 1...3 {
                _ = try journal.appendSample(key: UInt64(key))
                #expect(try file.size() == journal.currentFile.end)
            }
            #expect(journal.statistics.reservations == 0)
            // Tried again only once another preallocationSize bytes are written.
            #expect(file.reserveCount == 1)
            journal.close()
            let reopened = try Journal(path: path)
            defer { reopened.close() }
            #expect(reopened.recovery == RecoveryReport.clean(frames: 3))
        }
    }

    @Test("A read-only journal never reserves and never cuts: a live or a dead writer's reserved space stays as it is")
    func readersLeaveReservedSpace() throws {
        let disk = SimulatedDisk()
        let writer = try Journal(path: Self.path, options: JournalOptions(preallocationSize: 4096), fileSystem: disk)
        defer { writer.close() }
        for key in 1...3 { _ = try writer.appendSample(key: UInt64(key)) }
        let before = try #require(disk.contents(of: Self.path))
        #expect(UInt64(before.count) > writer.currentFile.end)
        disk.arm()
        let reader = try Journal(path: Self.path, options: JournalOptions(access: .readOnly), fileSystem: disk)
        // The third frame is the writer's last, which no frame records
        // durable yet (FORMAT.md §7): a reader leaves it out.
        #expect(try reader.checkSamples() == 2)
        #expect(reader.recovery.reservedByteCount == UInt64(before.count) - writer.currentFile.end)
        reader.close()
        #expect(!disk.calls.contains("truncate") && !disk.calls.contains("fallocate"), "\(disk.calls)")
        #expect(disk.contents(of: Self.path) == before)
        _ = try writer.appendSample(key: 4)

        // The writer's process died: no lock, every frame read, the zeros still there.
        let crashed = disk.afterPowerCut(.loseUnsynced, seed: 1)
        let left = try #require(crashed.contents(of: Self.path))
        crashed.arm()
        let late = try Journal(path: Self.path, options: JournalOptions(access: .readOnly), fileSystem: crashed)
        #expect(try late.checkSamples() == 4)
        #expect(late.recovery.reservedByteCount > 0)
        late.close()
        #expect(!crashed.calls.contains("truncate") && !crashed.calls.contains("fallocate"), "\(crashed.calls)")
        #expect(crashed.contents(of: Self.path) == left)
    }

    @Test("A read-only open whose read finds the reserved space cut off (the writer closed meanwhile) reads again: no error, every frame")
    func readerMeetsWriterClosing() throws {
        let disk = SimulatedDisk()
        let writer = try Journal(path: Self.path, options: JournalOptions(preallocationSize: 4096), fileSystem: disk)
        for key in 1...3 { _ = try writer.appendSample(key: UInt64(key)) }
        #expect(try #require(disk.contents(of: Self.path)).count > Int(writer.currentFile.end))
        // The reader's third read is the one past the last frame, into the zeros.
        let reader = try disk.openReadOnly(Self.path, holdingReadAfter: 2, never: "the reader never read past its frames") { () throws in
            writer.close()
            #expect(try #require(disk.contents(of: Self.path)).count == Int(writer.currentFile.end))
        }.get()
        defer { reader.close() }
        #expect(try reader.checkSamples() == 3)
        #expect(reader.recovery == RecoveryReport.clean(frames: 3))
    }

    @Test("info, verify and recover count reserved space neither as an interrupted save nor as lost bytes")
    func toolsOnReservedSpace() throws {
        try JournalFixtures.withStore(count: 3) { store, directory in
            try JournalFixtures.write(store.bytes + [UInt8](repeating: 0, count: 4096), to: store.path)
            let info = try StoreInspector.info(path: store.path)
            #expect(info.unreadableTailBytes == 0)
            #expect(info.reservedBytes == 4096)
            #expect(info.frameCount == 3)
            let report = try StoreInspector.verify(path: store.path)
            #expect(report.isValid)
            #expect(report.interruptedSave == nil)
            #expect(report.notes.contains { $0.contains("4096 bytes") && $0.contains("reserved") }, "\(report.notes)")
            let recovery = try StoreInspector.recover(path: store.path, to: directory + "/recovered.logstore")
            #expect(recovery.isComplete, "\(recovery)")
            #expect(recovery.keptTransactions == 3)
            #expect(try JournalFixtures.read(directory + "/recovered.logstore").count == store.bytes.count)
        }
    }
}
