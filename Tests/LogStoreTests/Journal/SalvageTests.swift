// Salvage mode (FORMAT.md §6): damage ends the data instead of failing the
// open; read-write, the cut-off bytes are first copied to PATH.damaged-OFFSET.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Salvage")
struct SalvageTests {
    @Test("Read-write salvage keeps the transactions before the bad frame, copies the rest aside, truncates, and accepts appends")
    func salvageMidFileDamage() throws {
        try withTemporaryDirectory { directory in
            let (store, damaged) = try Self.damagedStore(in: directory, frame: 3, of: 5)
            let frame = store.frames[2]
            let journal = try Journal(path: store.path, options: JournalFixtures.salvage)
            let report = journal.recovery
            #expect(report.outcome == .salvaged)
            #expect(report.frameCount == 2)
            #expect(report.droppedOffset == UInt64(frame.offset))
            #expect(report.droppedByteCount == UInt64(damaged.count - frame.offset))
            #expect(report.reason?.contains("frame 3") == true, "\(report)")
            #expect(report.preservedDamagePath == "\(store.path).damaged-\(frame.offset)")
            let copy = try #require(report.preservedDamagePath)
            #expect(try JournalFixtures.read(copy) == Array(damaged[frame.offset...]), "the copy does not hold exactly the cut-off bytes")
            let permissions = try FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? NSNumber
            #expect(permissions?.intValue == 0o600)
            #expect(try JournalFixtures.fileSize(store.path) == frame.offset, "the store was not truncated at the bad frame")

            #expect(journal.lastSequence == 2)
            #expect(try journal.transactions().map(\.changes) == Array(store.transactions.prefix(2)))
            #expect(try journal.append(store.transactions[2], at: JournalFixtures.commitTime(3)) == 3)
            #expect(try journal.transactions().map(\.changes) == Array(store.transactions.prefix(3)))
            journal.close()
            #expect(try JournalFixtures.read(store.path) == Array(store.bytes.prefix(frame.end)))

            let reopened = try Journal(path: store.path)
            defer { reopened.close() }
            #expect(reopened.recovery == RecoveryReport.clean(frames: 3))
        }
    }

    @Test("Salvaging twice at the same offset keeps both copies under different names")
    func salvageTwiceAtSameOffset() throws {
        try withTemporaryDirectory { directory in
            let (store, damaged) = try Self.damagedStore(in: directory, frame: 2, of: 4)
            let offset = store.frames[1].offset
            var copies: [String] = []
            for round in 1...3 {
                try JournalFixtures.write(damaged, to: store.path)
                let journal = try Journal(path: store.path, options: JournalFixtures.salvage)
                #expect(journal.recovery.outcome == .salvaged, "round \(round)")
                #expect(journal.recovery.droppedOffset == UInt64(offset), "round \(round)")
                let copy = try #require(journal.recovery.preservedDamagePath, "round \(round)")
                journal.close()
                copies.append(copy)
            }
            #expect(Set(copies).count == 3, "\(copies)")
            #expect(copies[0] == "\(store.path).damaged-\(offset)")
            for copy in copies {
                #expect(try JournalFixtures.read(copy) == Array(damaged[offset...]), "\(copy)")
            }
        }
    }

    @Test("Read-only salvage ends the data at the damage without changing the file or copying anything")
    func readOnlySalvage() throws {
        try withTemporaryDirectory { directory in
            let (store, damaged) = try Self.damagedStore(in: directory, frame: 3, of: 5)
            let frame = store.frames[2]
            let before = try Self.directoryListing(directory)
            let journal = try Journal(path: store.path, options: JournalFixtures.readOnlySalvage)
            #expect(journal.recovery.outcome == .salvaged)
            #expect(journal.recovery.droppedOffset == UInt64(frame.offset))
            #expect(journal.recovery.droppedByteCount == UInt64(damaged.count - frame.offset))
            #expect(journal.recovery.preservedDamagePath == nil)
            #expect(journal.lastSequence == 2)
            #expect(try journal.transactions().map(\.changes) == Array(store.transactions.prefix(2)))
            let refusal = #expect(throws: LogStoreError.self) { try journal.append(store.transactions[2]) }
            #expect(refusal?.kind == .readOnly)
            journal.close()
            #expect(try JournalFixtures.read(store.path) == damaged)
            #expect(try Self.directoryListing(directory) == before)
        }
    }

    @Test("Salvage at the first frame leaves an empty store whose next append is sequence 1 and declares its names again")
    func salvageFirstFrame() throws {
        try withTemporaryDirectory { directory in
            let (store, damaged) = try Self.damagedStore(in: directory, frame: 1, of: 3)
            let journal = try Journal(path: store.path, options: JournalFixtures.salvage)
            #expect(journal.recovery.outcome == .salvaged)
            #expect(journal.recovery.frameCount == 0)
            #expect(journal.recovery.droppedByteCount == UInt64(damaged.count - store.frames[0].offset))
            #expect(try journal.transactions().isEmpty)
            #expect(journal.name(of: Symbol(rawValue: 0)) == nil)
            for name in JournalFixtures.names { _ = journal.symbol(for: name) }
            #expect(try journal.append(store.transactions[0], at: JournalFixtures.commitTime(1)) == 1)
            journal.close()
            #expect(try JournalFixtures.read(store.path) == Array(store.bytes.prefix(store.frames[0].end)))
        }
    }

    @Test("Salvage cuts off a frame whose checksum matches but whose changes do not decode, names and all: the next save declares them again and the file reopens")
    func salvageForgetsNamesOfDroppedFrame() throws {
        try JournalFixtures.withStore(count: 3) { store, _ in
            // Frame 3 as a writer with a bug might leave it: it declares the
            // last name, then a change with a tag no version knows.
            let name = Array(JournalFixtures.lastName.utf8)
            let payload: [UInt8] = [1, UInt8(JournalFixtures.names.count), UInt8(name.count)] + name + [1, 0x09]
            let last = store.lastFrame
            let bytes = Array(store.bytes.prefix(last.offset)) + JournalFixtures.frame(payload: payload, sequence: 3)
            try JournalFixtures.write(bytes, to: store.path)

            let journal = try Journal(path: store.path, options: JournalFixtures.salvage)
            #expect(journal.recovery.outcome == .salvaged)
            #expect(journal.name(of: JournalFixtures.symbol(JournalFixtures.lastName)) == nil, "the dropped frame's name is still in the table")
            #expect(journal.symbol(for: JournalFixtures.lastName) == JournalFixtures.symbol(JournalFixtures.lastName))
            #expect(try journal.append(store.transactions[2], at: JournalFixtures.commitTime(3)) == 3)
            journal.close()

            let reopened = try Journal(path: store.path)
            defer { reopened.close() }
            #expect(reopened.recovery == RecoveryReport.clean(frames: 3))
            #expect(try reopened.transactions().map(\.changes) == store.transactions)
        }
    }

    @Test("Salvage stops at an impossible size too, without allocating it")
    func salvageImpossibleSize() throws {
        try JournalFixtures.withStore(count: 3) { store, _ in
            let last = store.lastFrame
            var bytes = store.bytes
            JournalFixtures.store(UInt32.max, into: &bytes, at: last.offset + 8)
            try JournalFixtures.write(bytes, to: store.path)
            let journal = try Journal(path: store.path, options: JournalFixtures.salvage)
            defer { journal.close() }
            #expect(journal.recovery.outcome == .salvaged)
            #expect(journal.recovery.droppedOffset == UInt64(last.offset))
            #expect(try journal.transactions().map(\.changes) == Array(store.transactions.dropLast()))
        }
    }

    @Test("Salvage mode treats a torn tail as a torn tail and a clean file as clean: no copy is made")
    func salvageWithoutDamage() throws {
        try JournalFixtures.withStore(count: 3) { store, directory in
            let clean = try Journal(path: store.path, options: JournalFixtures.salvage)
            #expect(clean.recovery == RecoveryReport.clean(frames: 3))
            clean.close()

            let last = store.lastFrame
            try JournalFixtures.write(Array(store.bytes.prefix(last.end - 7)), to: store.path)
            let torn = try Journal(path: store.path, options: JournalFixtures.salvage)
            TornTailTests.expectTornTail(torn.recovery, at: last, cut: last.end - 7, "salvage mode")
            torn.close()
            #expect(try Self.directoryListing(directory) == ["store.logstore"])
        }
    }

    // MARK: - Helpers

    /// A store of `count` transactions with one payload bit of frame `number` flipped.
    static func damagedStore(in directory: String, frame number: Int, of count: Int) throws -> (JournalFixtures.Store, [UInt8]) {
        let store = try JournalFixtures.makeStore(at: directory + "/store.logstore", count: count)
        var damaged = store.bytes
        damaged[store.frames[number - 1].payloadOffset + 1] ^= 0x04
        try JournalFixtures.write(damaged, to: store.path)
        #expect(JournalFixtures.openError(store.path)?.kind == .corruptFrame, "the damage is not mid-file damage")
        return (store, damaged)
    }

    static func directoryListing(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }
}
