// Durability modes keep their promise: when append returns, the frame is as
// durable as the mode says, and group commit shares fsyncs.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Durability modes")
struct GroupCommitTests {
    static let committers = 8
    static let commitsEach = 50

    /// Runs `committers` threads that each append `commitsEach` samples and,
    /// right after each append returns, check that the frame it wrote is
    /// covered by a completed fsync. Returns how many appends were not.
    private func commitConcurrently(_ journal: Journal, _ file: FaultyFile) -> Int {
        let keys = Counter()
        let undurable = Counter()
        // Threads of their own: concurrentPerform runs no more of them at
        // once than there are cores, two here, and a loaded machine can leave
        // those two taking turns, with nothing for a flush to share.
        let finished = DispatchGroup()
        for _ in 0..<Self.committers {
            finished.enter()
            Thread {
                defer { finished.leave() }
                for _ in 0..<Self.commitsEach {
                    do {
                        try journal.appendSample(key: keys.increment(), size: 64)
                    } catch {
                        Issue.record(error)
                        return
                    }
                    let end = file.callingThreadsLastWriteEnd ?? .max
                    if end > file.durableEnd { undurable.increment() }
                }
            }.start()
        }
        finished.wait()
        return Int(undurable.value)
    }

    @Test("Group commit: every append returns after its own frame is durable, with fewer fsyncs than commits")
    func groupCommit() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            // A slow fsync, like a real disk's, so committers pile up behind it.
            let (journal, file) = try makeFaultyJournal(
                at: path, plan: .init(syncDelay: 0.002), durability: .groupCommit(window: .milliseconds(1)))
            let notDurable = commitConcurrently(journal, file)
            let total = Self.committers * Self.commitsEach
            #expect(notDurable == 0, "appends returned before their frame was fsynced")
            #expect(journal.statistics.framesWritten == total)
            #expect(journal.statistics.syncs == file.syncCount)
            #expect(file.syncCount < total, "group commit shared no fsync")
            journal.close()

            // Keys were handed out in arbitrary order, but sequence numbers are
            // dense and every transaction reads back.
            let reopened = try Journal(path: path)
            defer { reopened.close() }
            let transactions = try reopened.transactions()
            #expect(transactions.map(\.sequence) == Array(1...UInt64(total)))
            let keys = Set(transactions.compactMap { transaction -> UInt64? in
                guard case .insert(let id, _)? = transaction.changes.first else { return nil }
                return id.key
            })
            #expect(keys == Set(1...UInt64(total)))
        }
    }

    @Test("fsync every commit: one fsync per commit, each before append returns")
    func fsyncEveryCommit() throws {
        try withTemporaryDirectory { directory in
            let (journal, file) = try makeFaultyJournal(at: directory + "/store.logstore", durability: .fsyncEveryCommit)
            defer { journal.close() }
            let notDurable = commitConcurrently(journal, file)
            #expect(notDurable == 0)
            #expect(file.syncCount == Self.committers * Self.commitsEach)
            #expect(journal.statistics.syncs == file.syncCount)
        }
    }

    @Test("Deferred to the OS: no fsync at all")
    func deferredToOS() throws {
        try withTemporaryDirectory { directory in
            let (journal, file) = try makeFaultyJournal(at: directory + "/store.logstore", durability: .deferredToOS)
            for key in 1...20 { try journal.appendSample(key: UInt64(key)) }
            #expect(file.syncCount == 0)
            #expect(journal.statistics.syncs == 0)
            #expect(try journal.checkSamples() == 20)
            journal.close()
        }
    }

    @Test("close() makes the frame of a save still waiting for its group flush durable; the save then returns without touching the closed file")
    func closeFlushesWaitingSaves() throws {
        let disk = SimulatedDisk()
        let journal = try WriteFailureTests.groupCommitJournal(on: disk)
        // A save between writing its frame and waiting for the flush, as the
        // store's saves are once they let go of the store's lock.
        let sequence = try journal.write([journal.sampleInsert(key: 2)])
        journal.close()
        #expect(throws: Never.self) { try journal.waitUntilDurable(sequence) }
        #expect(disk.callsAfterClose == [], "a descriptor was used after close")
        #expect(throws: LogStoreError.self) { try journal.appendSample(key: 3) }

        let reopened = try WriteFailureTests.reopenAfterPowerCut(disk)
        defer { reopened.close() }
        #expect(try reopened.checkSamples() == 2)
    }

    @Test("Group commit with no window still returns only after durability")
    func groupCommitWithoutWindow() throws {
        try withTemporaryDirectory { directory in
            let (journal, file) = try makeFaultyJournal(
                at: directory + "/store.logstore", plan: .init(syncDelay: 0.001), durability: .groupCommit(window: .zero))
            defer { journal.close() }
            #expect(commitConcurrently(journal, file) == 0)
            #expect(file.syncCount <= Self.committers * Self.commitsEach)
        }
    }
}

/// A counter concurrent threads share; `increment()` hands out 1, 2, 3, …
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count: UInt64 = 0

    @discardableResult
    func increment() -> UInt64 { lock.withLock { count += 1; return count } }
    var value: UInt64 { lock.withLock { count } }
}
