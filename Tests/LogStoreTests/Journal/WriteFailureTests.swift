// A failed write or fsync fails that save and every later one, a full disk
// fails only the saves that find it full, and nothing unacknowledged is ever
// presented as saved.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Write and fsync failures")
struct WriteFailureTests {
    @Test("A failed write throws the system error, and every later append is refused with it",
          arguments: [EIO, EROFS])
    func failedWrite(code: Int32) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let (journal, _) = try makeFaultyJournal(at: path, plan: .init(failingWrite: 3, writeError: code))
            try journal.appendSample(key: 1)
            try journal.appendSample(key: 2)

            let failure = #expect(throws: LogStoreError.self) { try journal.appendSample(key: 3) }
            #expect(failure?.kind == .io)
            #expect(failure?.errno == code)
            #expect(failure?.message.contains(path) == true)

            // The write that failed was the third; the fourth would succeed,
            // but the journal must not accept it after a failure.
            let refusal = #expect(throws: LogStoreError.self) { try journal.appendSample(key: 3) }
            #expect(refusal?.kind == .writeFailed)
            #expect(refusal?.errno == code)
            #expect(refusal?.details.first?.kind == .io)
            #expect(journal.lastSequence == 2)
            journal.close()

            let reopened = try Journal(path: path)
            defer { reopened.close() }
            #expect(try reopened.checkSamples() == 2)
            #expect(reopened.recovery.outcome == .clean)
        }
    }

    @Test("A write that finds the disk or the quota full fails that append only; the next is written at the next sequence number",
          arguments: [ENOSPC, EDQUOT], [nil, 57])
    func fullDisk(code: Int32, landed: Int?) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let (journal, file) = try makeFaultyJournal(at: path, plan: .init(failingWrite: 2, writeError: code, shortWriteBytes: landed))
            try journal.appendSample(key: 1, size: 300)
            // Where the frames end; the file runs on into reserved space.
            let end = journal.currentFile.end
            #expect(try file.size() > end)
            let failure = #expect(throws: LogStoreError.self) { try journal.appendSample(key: 2, size: 300) }
            #expect(failure?.kind == .diskFull)
            #expect(failure?.errno == code)
            #expect(failure?.message.contains(path) == true)
            // The bytes the full disk took are cut off at once, with the
            // reserved space after them, which the full disk did not honour.
            #expect(try file.size() == end)
            #expect(journal.lastSequence == 1)

            #expect(try journal.appendSample(key: 2) == 2)
            #expect(try journal.checkSamples() == 2)
            journal.close()

            let reopened = try Journal(path: path)
            defer { reopened.close() }
            #expect(reopened.recovery.outcome == .clean)
            #expect(try reopened.checkSamples() == 2)
        }
    }

    @Test("A failed fsync fails the save that waited for it and refuses every later one, also when the disk filled up under it",
          arguments: [EIO, ENOSPC])
    func failedSync(code: Int32) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let (journal, file) = try makeFaultyJournal(at: path, plan: .init(failingSync: 2, syncError: code))
            try journal.appendSample(key: 1)
            let durableBefore = file.durableEnd

            let failure = #expect(throws: LogStoreError.self) { try journal.appendSample(key: 2) }
            #expect(failure?.kind == .io)
            #expect(failure?.errno == code)
            #expect(failure?.message.contains("fdatasync") == true)
            // No retry of the fsync: after a failed fsync the kernel may have
            // dropped the dirty pages, so a retry that succeeds proves nothing.
            let refusal = #expect(throws: LogStoreError.self) { try journal.appendSample(key: 3) }
            #expect(refusal?.kind == .writeFailed)
            #expect(file.durableEnd == durableBefore)
            // The frame whose fsync failed is cut off at once (its pages may
            // never reach the disk), and the cut itself is fsynced: the one
            // successful fsync after the failure, which acknowledges nothing.
            #expect(try file.size() == durableBefore)
            #expect(file.syncCount == 2)
            journal.close()

            let reopened = try Journal(path: path)
            defer { reopened.close() }
            #expect(reopened.recovery.outcome == .clean)
            #expect(try reopened.checkSamples() == 1)
        }
    }

    @Test("Under group commit a failed fsync fails every save waiting on it")
    func failedGroupSync() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let (journal, _) = try makeFaultyJournal(
                at: path, plan: .init(failingSync: 1, syncDelay: 0.005), durability: .groupCommit(window: .milliseconds(5)))
            let outcomes = Outcomes()
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                do {
                    try journal.appendSample(key: UInt64(index + 1))
                    outcomes.record(nil)
                } catch let error as LogStoreError {
                    outcomes.record(error.kind)
                } catch {
                    Issue.record(error)
                }
            }
            // Every committer failed: the first with the fsync's error, or
            // later ones with the refusal that carries it. None was acknowledged.
            let kinds = outcomes.all
            #expect(kinds.count == 4)
            #expect(kinds.allSatisfy { $0 == .io || $0 == .writeFailed })
            #expect(throws: LogStoreError.self) { try journal.appendSample(key: 9) }
            journal.close()
        }
    }

    @Test("Under group commit a write failing while a flush is under way leaves the frames that flush acknowledges")
    func writeFailingDuringFlush() throws {
        let disk = SimulatedDisk()
        let journal = try Self.groupCommitJournal(on: disk)
        let outcomes = Outcomes()
        let finished = DispatchGroup()
        let gate = Self.holdSecondSaveInItsFlush(journal, on: disk, outcomes: outcomes, group: finished)

        // Meanwhile a third save's write fails, and the writer cuts the file back.
        disk.arm(failing: 1, of: "write", with: .error(EIO))
        DispatchQueue.global().async(group: finished) {
            #expect(throws: LogStoreError.self) { try journal.appendSample(key: 3) }
        }
        let deadline = Date(timeIntervalSinceNow: 30)
        while !disk.faultFired, Date() < deadline { usleep(1_000) }
        #expect(disk.faultFired)
        gate.signal()
        finished.wait()
        journal.close()

        // The second save was acknowledged: it must be there, fsynced.
        #expect(outcomes.all == [nil])
        let reopened = try Self.reopenAfterPowerCut(disk)
        defer { reopened.close() }
        #expect(reopened.recovery.outcome == .clean)
        #expect(try reopened.checkSamples() == 2)
    }

    @Test("Under group commit a full disk fails the save that found it full; frames written before it, synced or not, are kept and acknowledged")
    func fullDiskDuringFlush() throws {
        let disk = SimulatedDisk()
        // No reserved space: the fourth save's write is what finds the disk full.
        let journal = try Self.groupCommitJournal(on: disk, preallocationSize: 0)
        let outcomes = Outcomes()
        let finished = DispatchGroup()
        let gate = Self.holdSecondSaveInItsFlush(journal, on: disk, outcomes: outcomes, group: finished)
        // The third writes its frame, which that flush does not cover, and waits.
        DispatchQueue.global().async(group: finished) { outcomes.record(Self.kind(of: { try journal.appendSample(key: 3) })) }
        let deadline = Date(timeIntervalSinceNow: 30)
        while journal.lastSequence < 3, Date() < deadline { usleep(1_000) }
        #expect(journal.lastSequence == 3)

        // The fourth finds the disk full, while that flush is still held.
        disk.limitFreeSpace(to: 20)
        disk.arm()
        let fourth = Outcomes()
        DispatchQueue.global().async(group: finished) { fourth.record(Self.kind(of: { try journal.appendSample(key: 4) })) }
        while !disk.calls.contains("write"), Date() < deadline { usleep(1_000) }
        gate.signal()
        finished.wait()
        #expect(fourth.all == [.diskFull])
        #expect(outcomes.all.count == 2)
        #expect(outcomes.all.allSatisfy { $0 == nil }, "saves written before the full disk failed: \(outcomes.all)")

        // Space comes back: the next save takes the fourth sequence number.
        disk.removeSpaceLimit()
        #expect(try journal.appendSample(key: 4) == 4)
        journal.close()
        #expect(disk.callsAfterClose == [])

        let reopened = try Self.reopenAfterPowerCut(disk)
        defer { reopened.close() }
        #expect(reopened.recovery.outcome == .clean)
        #expect(try reopened.checkSamples() == 4)
    }

    @Test("Reading a journal's transactions after close is a .closed error, and touches no descriptor")
    func readAfterClose() throws {
        let disk = SimulatedDisk()
        let journal = try Self.groupCommitJournal(on: disk)
        journal.close()
        let error = #expect(throws: LogStoreError.self) { try journal.transactions() }
        #expect(error?.kind == .closed)
        #expect(disk.callsAfterClose == [])
    }

    static let simulatedPath = "/simulated/store.logstore"

    /// A group-commit journal on `disk` that flushes at once, sample 1 saved.
    static func groupCommitJournal(on disk: SimulatedDisk, preallocationSize: Int = JournalOptions.defaultPreallocationSize) throws -> Journal {
        let options = JournalOptions(durability: .groupCommit(window: .zero), compaction: .manual, preallocationSize: preallocationSize)
        let journal = try Journal(path: simulatedPath, options: options, fileSystem: disk)
        try journal.appendSample(key: 1)
        return journal
    }

    /// Appends sample 2 on another thread of `group`, its outcome recorded
    /// in `outcomes`, and returns once the flush it leads stops before its
    /// fdatasync, the journal's lock let go: signal the returned gate to let
    /// that flush go on.
    static func holdSecondSaveInItsFlush(_ journal: Journal, on disk: SimulatedDisk, outcomes: Outcomes, group: DispatchGroup) -> DispatchSemaphore {
        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        disk.holdNextFdatasync(arrived: arrived, gate: gate)
        DispatchQueue.global().async(group: group) { outcomes.record(kind(of: { try journal.appendSample(key: 2) })) }
        arrived.wait()
        return gate
    }

    /// The journal of ``groupCommitJournal(on:)`` as a power cut that
    /// loses every unsynced write leaves it.
    static func reopenAfterPowerCut(_ disk: SimulatedDisk) throws -> Journal {
        try Journal(path: simulatedPath, options: JournalOptions(createIfMissing: false), fileSystem: disk.afterPowerCut(.loseUnsynced, seed: 1))
    }

    /// The kind of error `body` throws, nil when it returns.
    static func kind(of body: () throws -> Void) -> LogStoreError.Kind? {
        do {
            try body()
            return nil
        } catch {
            return (error as? LogStoreError)?.kind ?? .io
        }
    }

    @Test("A transaction over the frame limit is refused before anything is written, and the journal stays usable")
    func tooLarge() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let journal = try Journal(path: path)
            defer { journal.close() }
            // The data alone fills the limit; names and field headers push it over.
            let error = #expect(throws: LogStoreError.self) {
                try journal.append([journal.sampleInsert(key: 1, size: FrameLayout.maxPayloadSize)])
            }
            #expect(error?.kind == .transactionTooLarge)
            #expect(try journal.appendSample(key: 1) == 1)
            #expect(try journal.checkSamples() == 1)
        }
    }

    @Test("Appending after close or to a read-only journal is a typed error")
    func closedAndReadOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let journal = try Journal(path: path)
            try journal.appendSample(key: 1)
            journal.close()
            #expect(throws: LogStoreError.self) { try journal.appendSample(key: 2) }
            do {
                try journal.appendSample(key: 2)
            } catch let error as LogStoreError {
                #expect(error.kind == .closed)
            }

            let reader = try Journal(path: path, options: JournalOptions(access: .readOnly))
            defer { reader.close() }
            let error = #expect(throws: LogStoreError.self) { try reader.appendSample(key: 2) }
            #expect(error?.kind == .readOnly)
            #expect(try reader.checkSamples() == 1)
        }
    }
}

/// Collects results from concurrent committers.
final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var kinds: [LogStoreError.Kind?] = []

    func record(_ kind: LogStoreError.Kind?) { lock.withLock { kinds.append(kind) } }
    var all: [LogStoreError.Kind?] { lock.withLock { kinds } }
}
