// The open rule of FORMAT.md §6 for a hole with valid frames after it: each
// frame records what its writer knew durable, and only a frame that records
// the missing one durable makes the hole damage.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Durable claims")
struct DurableClaimTests {
    /// A store of `count` saves written under `.deferredToOS` (no fsync after
    /// the open's, so every frame records sequence 0 durable), then, when
    /// `reopenedAfter` is given, reopened (which makes its frames durable)
    /// and given the rest: those frames record `reopenedAfter` durable.
    static func makeStore(at path: String, count: Int, reopenedAfter: Int? = nil) throws -> JournalFixtures.Store {
        var transactions: [[RecordChange]] = []
        var journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
        for name in JournalFixtures.names { _ = journal.symbol(for: name) }
        for number in 1...count {
            if number == count { _ = journal.symbol(for: JournalFixtures.lastName) }
            if number - 1 == reopenedAfter {
                journal.close()
                journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            }
            let changes = JournalFixtures.changes(number, of: count, lastPayloadBytes: 100)
            try journal.append(changes, at: JournalFixtures.commitTime(number))
            transactions.append(changes)
        }
        journal.close()
        let bytes = try JournalFixtures.read(path)
        return JournalFixtures.Store(path: path, transactions: transactions, bytes: bytes, frames: JournalFixtures.frames(in: bytes))
    }

    /// `bytes` with the frame `frame` zeroed: a write the disk never got.
    static func losing(_ frame: JournalFixtures.Frame, of bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        for offset in frame.offset..<frame.end { bytes[offset] = 0 }
        return bytes
    }

    @Test("Frames record the sequence their writer knew durable: the sequence before under fsync every commit, the open's under deferred to the OS")
    func framesRecordWhatWasDurable() throws {
        try withTemporaryDirectory { directory in
            let synced = try JournalFixtures.makeStore(at: directory + "/synced.logstore", count: 4)
            let deferred = try Self.makeStore(at: directory + "/deferred.logstore", count: 5, reopenedAfter: 3)
            func durable(_ store: JournalFixtures.Store) -> [UInt64?] {
                store.frames.map { frame in
                    let head = Array(store.bytes[frame.offset..<frame.payloadOffset])
                    return (try? head.withUnsafeBytes { try FrameHeader.parse($0).get() })?.durableSequence
                }
            }
            #expect(durable(synced) == [0, 1, 2, 3])
            #expect(durable(deferred) == [0, 0, 0, 3, 3])
        }
    }

    @Test("A lost frame whose successors record nothing past what precedes it is cut off with them, read-write and read-only, without salvage")
    func unsyncedHoleIsCutOff() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.makeStore(at: directory + "/store.logstore", count: 5)
            let hole = store.frames[2]
            let damaged = Self.losing(hole, of: store.bytes)
            try JournalFixtures.write(damaged, to: store.path)

            let reader = try Journal(path: store.path, options: JournalFixtures.readOnly)
            #expect(reader.recovery.outcome == .unsyncedFramesDiscarded)
            #expect(reader.recovery.droppedOffset == UInt64(hole.offset))
            #expect(reader.recovery.droppedByteCount == UInt64(damaged.count - hole.offset))
            #expect(reader.recovery.reason?.contains("2 valid frames after it") == true, "\(String(describing: reader.recovery.reason))")
            #expect(try reader.transactions().map(\.changes) == Array(store.transactions.prefix(2)))
            reader.close()
            #expect(try JournalFixtures.read(store.path) == damaged, "a read-only open changed the file")

            let journal = try Journal(path: store.path)
            #expect(journal.recovery.outcome == .unsyncedFramesDiscarded)
            #expect(journal.recovery.preservedDamagePath == nil)
            #expect(try JournalFixtures.fileSize(store.path) == hole.offset)
            #expect(try journal.append(store.transactions[2], at: JournalFixtures.commitTime(3)) == 3)
            journal.close()
            let reopened = try Journal(path: store.path)
            defer { reopened.close() }
            #expect(reopened.recovery == RecoveryReport.clean(frames: 3))
            #expect(try reopened.transactions().map(\.changes) == Array(store.transactions.prefix(3)))
        }
    }

    @Test("A lost frame that a later frame records durable is damage: refused, even when the frame right after it records less")
    func claimedHoleIsDamage() throws {
        try withTemporaryDirectory { directory in
            // Frame 4 records 0 durable, frames 5 and 6 record 4: frame 3 was on disk.
            let store = try Self.makeStore(at: directory + "/store.logstore", count: 6, reopenedAfter: 4)
            let hole = store.frames[2]
            try JournalFixtures.write(Self.losing(hole, of: store.bytes), to: store.path)
            JournalFixtures.expectCorruptFrame(store.path, at: hole)
            JournalFixtures.expectCorruptFrame(store.path, at: hole, JournalFixtures.readOnly)
            let error = JournalFixtures.openError(store.path)
            #expect(error?.message.contains("records sequence 4 as durable") == true, "\(String(describing: error))")
            // Losing frame 5 instead: frame 6 records 4, below it.
            try JournalFixtures.write(Self.losing(store.frames[4], of: store.bytes), to: store.path)
            let journal = try Journal(path: store.path, options: JournalFixtures.readOnly)
            defer { journal.close() }
            #expect(journal.recovery.outcome == .unsyncedFramesDiscarded)
            #expect(journal.lastSequence == 4)
        }
    }

    @Test("Frames that record nothing (files before format version 4) keep the old rule: any valid later frame makes a hole damage")
    func framesWithoutClaimsKeepTheOldRule() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let frames = (1...3).map { JournalFixtures.frame(payload: [0, 0], sequence: UInt64($0)) }
            try JournalFixtures.makeStore(at: path, frames: frames)
            let bytes = try JournalFixtures.read(path)
            let walked = JournalFixtures.frames(in: bytes)
            try JournalFixtures.write(Self.losing(walked[1], of: bytes), to: path)
            JournalFixtures.expectCorruptFrame(path, at: walked[1])
        }
    }
}

extension DurableClaimTests {
    @Test("A writer reopening after a crash under deferred durability makes what it found durable before its frames claim it: every power cut then opens without salvage")
    func reopenMakesFoundFramesDurable() throws {
        let path = "/simulated/store.logstore"
        let disk = SimulatedDisk()
        let options = JournalOptions(durability: .deferredToOS)
        // A process that dies leaves its frames in the page cache only.
        let crashed = try Journal(path: path, options: options, fileSystem: disk)
        for key in 1...3 { _ = try crashed.appendSample(key: UInt64(key)) }
        crashed.close()
        let reopened = try Journal(path: path, options: options, fileSystem: disk)
        defer { reopened.close() }
        _ = try reopened.appendSample(key: 4)
        for cut in SimulatedDisk.PowerCut.allCases {
            for seed in UInt64(1)...16 {
                let what = "\(cut.rawValue), seed \(seed)"
                let journal: Journal
                do {
                    journal = try Journal(path: path, options: JournalOptions(createIfMissing: false), fileSystem: disk.afterPowerCut(cut, seed: seed))
                } catch {
                    Issue.record("\(what): the store does not open: \(error)")
                    continue
                }
                #expect(journal.recovery.outcome != .salvaged, "\(what)")
                #expect(try journal.checkSamples() >= 3, "\(what): a frame the reopen found is gone")
                journal.close()
            }
        }
    }
}
