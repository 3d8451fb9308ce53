// A store file that fails on command and remembers what was made durable.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
@_spi(Benchmarks) @testable import LogStore

/// A `FileIO` over a real file that can fail its N-th write or sync, cut a
/// write short, and records, per thread, where each thread's last write ended
/// and how far the file was durable after each successful sync.
///
/// A sync covers exactly the bytes written before it started, as
/// `fdatasync` does: ``durableEnd`` moves to the end of the writes that had
/// completed when the sync began.
final class FaultyFile: FileIO, @unchecked Sendable {
    /// What to break, counted from 1 over the calls this file sees once
    /// armed (``makeFaultyJournal(at:plan:durability:)`` arms it after the
    /// open, whose own fsync is not the journal's to count).
    struct Plan {
        /// Fail this write (nothing written) with `writeError`.
        var failingWrite: Int?
        var writeError: Int32 = EIO
        /// Write only this many bytes of the failing write before failing
        /// (a full disk part way through a frame).
        var shortWriteBytes: Int?
        /// Fail this sync with `syncError`.
        var failingSync: Int?
        var syncError: Int32 = EIO
        /// Sleep this long inside every sync, to make group commit gather.
        var syncDelay: TimeInterval = 0
        /// Fail every reservation of space with this error.
        var reserveError: Int32?
    }

    func reopenForReading() throws(LogStoreError) -> any FileIO { try base.reopenForReading() }
    func lockExclusively() throws(LogStoreError) { try base.lockExclusively() }
    func isLockedByWriter() throws(LogStoreError) -> Bool { try base.isLockedByWriter() }
    func identity() throws(LogStoreError) -> FileIdentity { try base.identity() }

    private let base: SystemFile
    private let plan: Plan
    private let lock = NSLock()
    private var writes = 0
    private var syncs = 0
    private var reserves = 0
    private var succeededSyncs = 0
    private var writtenEnd: UInt64 = 0
    private var durable: UInt64 = 0
    private var lastWriteEnd: [UInt: UInt64] = [:]
    private var isArmed = false

    init(path: String, plan: Plan = Plan()) throws {
        base = try SystemFile(path: path, mode: .readWrite)
        self.plan = plan
        writtenEnd = try base.size()
        durable = writtenEnd
    }

    var path: String { base.path }
    func didMove(to path: String) { base.didMove(to: path) }

    /// Starts counting calls, and following the plan, from here.
    func arm() {
        lock.withLock {
            writes = 0
            syncs = 0
            reserves = 0
            succeededSyncs = 0
            isArmed = true
        }
    }

    /// How far the file is known to be durable.
    var durableEnd: UInt64 { lock.withLock { durable } }
    /// Successful syncs so far.
    var syncCount: Int { lock.withLock { succeededSyncs } }
    /// Where the calling thread's last write ended, or nil if it wrote nothing.
    var callingThreadsLastWriteEnd: UInt64? { lock.withLock { lastWriteEnd[UInt(pthread_self())] } }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(LogStoreError) -> Int {
        try base.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(LogStoreError) {
        let number = lock.withLock { writes += 1; return writes }
        if isArmedNow, number == plan.failingWrite {
            if let partial = plan.shortWriteBytes {
                try base.write(UnsafeRawBufferPointer(rebasing: bytes.prefix(partial)), at: offset)
            }
            throw SystemFile.error(plan.writeError, "pwrite", path: path, offset: offset)
        }
        try base.write(bytes, at: offset)
        let end = offset + UInt64(bytes.count)
        lock.withLock {
            writtenEnd = max(writtenEnd, end)
            lastWriteEnd[UInt(pthread_self())] = end
        }
    }

    func synchronize() throws(LogStoreError) {
        let (number, covered) = lock.withLock { syncs += 1; return (syncs, writtenEnd) }
        if plan.syncDelay > 0 { Thread.sleep(forTimeInterval: plan.syncDelay) }
        if isArmedNow, number == plan.failingSync {
            throw SystemFile.error(plan.syncError, "fdatasync", path: path)
        }
        try base.synchronize()
        lock.withLock {
            durable = max(durable, covered)
            succeededSyncs += 1
        }
    }

    private var isArmedNow: Bool { lock.withLock { isArmed } }

    func size() throws(LogStoreError) -> UInt64 { try base.size() }

    func truncate(to size: UInt64) throws(LogStoreError) {
        try base.truncate(to: size)
        lock.withLock { writtenEnd = size }
    }

    /// Reservations asked for since the file was armed.
    var reserveCount: Int { lock.withLock { reserves } }

    func reserve(_ range: Range<UInt64>) throws(LogStoreError) {
        lock.withLock { reserves += 1 }
        if isArmedNow, let failure = plan.reserveError { throw SystemFile.error(failure, "fallocate", path: path) }
        try base.reserve(range)
    }

    func close() { base.close() }
}

/// Creates an empty store at `path` and opens it as a journal over a
/// ``FaultyFile`` following `plan`.
func makeFaultyJournal(at path: String, plan: FaultyFile.Plan = .init(), durability: Durability = .fsyncEveryCommit) throws -> (Journal, FaultyFile) {
    try Journal.create(path: path, permissions: 0o600, header: FileHeader(storeID: UUID(), createdAt: Date(), version: FileLayout.createdVersion))
    let file = try FaultyFile(path: path, plan: plan)
    let journal = try Journal(file: file, options: JournalOptions(durability: durability))
    file.arm()
    return (journal, file)
}
