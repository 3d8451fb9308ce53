// A full disk fails the saves that find it full, and only those; a
// compaction that would not fit does not start; nothing saved is lost.

import Foundation
import Testing
@testable import LogStore

@Suite("A full disk")
struct FullDiskTests {
    typealias Faults = FaultInjectionTests

    @Test("Saves that find the disk full fail with .diskFull; once space is free saves succeed, and after a power cut every acknowledged save is there",
          arguments: [Durability.fsyncEveryCommit, .groupCommit(window: .milliseconds(1))])
    func fillFailFreeSave(durability: Durability) throws {
        // No reserved space, so that the next save's write finds the disk full
        // (``savesIntoReservedSpaceOnAFullDisk`` has the space).
        var scene = try Faults.storeWithSaves(5, options: JournalOptions(durability: durability, compaction: .manual, preallocationSize: 0))
        let store = try #require(scene.store)
        defer { store.close() }
        scene.disk.limitFreeSpace(to: 100)
        for batch in 6...7 {
            guard case .failure(let error) = scene.ledger.save(batch, in: store) else {
                Issue.record("batch \(batch) was saved on a full disk")
                continue
            }
            #expect((error as? LogStoreError)?.kind == .diskFull, "\(error)")
        }
        scene.disk.removeSpaceLimit()
        for batch in 8...10 {
            #expect(throws: Never.self, "batch \(batch) once space is free") { try scene.ledger.save(batch, in: store).get() }
        }
        var tally = Faults.Tally()
        try Faults.checkAfterPowerCuts(scene.disk, scene.ledger, Faults.Allowance(), "a full disk under \(durability)", &tally)
    }

    @Test("A disk that fills with space reserved: saves go into the reservation, then the one past it fails with .diskFull; once space is free saves succeed, and after a power cut every acknowledged save is there")
    func savesIntoReservedSpaceOnAFullDisk() throws {
        var scene = try Faults.storeWithSaves(5, options: JournalOptions(compaction: .manual, preallocationSize: 2048))
        let store = try #require(scene.store)
        defer { store.close() }
        let reserved = try #require(scene.disk.contents(of: Faults.path)).count - Int(store.journal.currentFile.end)
        #expect(reserved > 1024)
        scene.disk.limitFreeSpace(to: 0)
        var saved = 0, failure: Error?
        for batch in 6...100 {
            if case .failure(let error) = scene.ledger.save(batch, in: store) {
                failure = error
                break
            }
            saved += 1
        }
        #expect(saved > 0, "no save went into the reserved space")
        #expect((failure as? LogStoreError)?.kind == .diskFull, "\(String(describing: failure))")
        scene.disk.removeSpaceLimit()
        let next = scene.ledger.attempted.max()! + 1
        #expect(throws: Never.self) { try scene.ledger.save(next, in: store).get() }
        var tally = Faults.Tally()
        try Faults.checkAfterPowerCuts(scene.disk, scene.ledger, Faults.Allowance(), "a full disk with space reserved", &tally)
    }

    @Test("Concurrent group-commit saves on a disk that fills: those that fit are kept, the others fail with .diskFull, and saves succeed once space is free")
    func concurrentSavesOnAFillingDisk() throws {
        // Space reserved a frame or two ahead, used up part way.
        let options = JournalOptions(durability: .groupCommit(window: .milliseconds(1)), compaction: .manual, preallocationSize: 256)
        var scene = try Faults.storeWithSaves(4, options: options)
        let store = try #require(scene.store)
        defer { store.close() }
        // Room for a few saves of the twelve.
        scene.disk.limitFreeSpace(to: 500)
        let results = Self.saveConcurrently(in: store, rounds: 3).wait()
        scene.ledger.record(results)
        let failures = results.values.compactMap { $0 }
        #expect(!failures.isEmpty, "every save fitted: the test needs a smaller disk")
        #expect(failures.allSatisfy { $0 == .diskFull }, "\(failures)")

        scene.disk.removeSpaceLimit()
        #expect(throws: Never.self) { try scene.ledger.save(100, in: store).get() }
        var tally = Faults.Tally()
        try Faults.checkAfterPowerCuts(scene.disk, scene.ledger, Faults.Allowance(), "concurrent saves on a full disk", &tally)
    }

    @Test("A compaction that would not fit in the free space does not start: .diskFull, no file written, and the store goes on")
    func compactionNeedsFreeSpace() throws {
        var scene = try Faults.storeWithSaves(20)
        let store = try #require(scene.store)
        defer { store.close() }
        let needed = Compaction.requiredFreeSpace(liveBytes: store.state.withLock { $0.liveBytesEstimate })
        scene.disk.limitFreeSpace(to: Int(needed) - 1)
        let error = #expect(throws: LogStoreError.self) { try store.compact() }
        #expect(error?.kind == .diskFull)
        #expect(error?.message.contains(Faults.path) == true)
        #expect(scene.disk.allNames == [Faults.path], "the compaction wrote a file")
        #expect(throws: Never.self) { try scene.ledger.save(21, in: store).get() }

        // With the space it asks for, it runs, and the new file fits in it.
        scene.disk.limitFreeSpace(to: Int(Compaction.requiredFreeSpace(liveBytes: store.state.withLock { $0.liveBytesEstimate })))
        #expect(throws: Never.self) { try store.compact() }
        var tally = Faults.Tally()
        try Faults.checkAfterPowerCuts(scene.disk, scene.ledger, Faults.Allowance(), "a compaction on a nearly full disk", &tally)
    }

    @Test("A compaction that finds the disk full part way (another program filled it) stops with .diskFull, removes its file, and the store goes on")
    func diskFillingDuringCompaction() throws {
        var scene = try Faults.storeWithSaves(20)
        let store = try #require(scene.store)
        defer { store.close() }
        var filled = false
        let error = #expect(throws: LogStoreError.self) {
            try store.compact { stage, _ in
                if stage == .writingSnapshot, !filled {
                    filled = true
                    scene.disk.limitFreeSpace(to: 100)
                }
            }
        }
        #expect(error?.kind == .diskFull, "\(String(describing: error))")
        #expect(error?.message.contains(Faults.path) == true)
        #expect(scene.disk.allNames == [Faults.path], "the compaction left its file")
        scene.disk.removeSpaceLimit()
        #expect(throws: Never.self) { try scene.ledger.save(21, in: store).get() }
        var tally = Faults.Tally()
        try Faults.checkAfterPowerCuts(scene.disk, scene.ledger, Faults.Allowance(), "a disk filling during a compaction", &tally)
    }

    @Test("An automatic compaction that would not fit does not start, and says why in lastCompactionError; saves go on, and the first once space is free starts it")
    func automaticCompactionNeedsFreeSpace() throws {
        let disk = SimulatedDisk()
        // Room for the saves, not for a compaction's 1 MiB margin.
        disk.limitFreeSpace(to: 256 << 10)
        let store = try Faults.open(disk, JournalOptions(compaction: .automatic(minimumJournalBytes: 4 << 10)))
        defer { store.close() }
        var ledger = Faults.Ledger()
        for batch in 1...60 {
            #expect(throws: Never.self) { try ledger.save(batch, in: store).get() }
        }
        let deadline = Date(timeIntervalSinceNow: 30)
        while store.compactions.isScheduled.load(ordering: .relaxed), Date() < deadline { usleep(1_000) }
        #expect(store.lastCompactionError?.kind == .diskFull, "\(String(describing: store.lastCompactionError))")
        #expect(disk.allNames == [Faults.path])
        #expect(store.journal.snapshot == nil)
        #expect(try ledger.problems(in: store) == [])

        disk.removeSpaceLimit()
        #expect(throws: Never.self) { try ledger.save(61, in: store).get() }
        while store.compactions.isScheduled.load(ordering: .relaxed), Date() < deadline { usleep(1_000) }
        #expect(store.lastCompactionError == nil)
        #expect(store.journal.snapshot != nil, "the save after space was freed did not start a compaction")
        #expect(try ledger.problems(in: store) == [])
    }

    @Test("The space a compaction asks for holds the new file, also for small records that are mostly an indexed string")
    func requiredSpaceHoldsTheNewFile() throws {
        let disk = SimulatedDisk()
        let store = try Store(journal: Journal(path: Faults.path, options: CounterModel.manual, fileSystem: disk), model: CounterModel.make())
        defer { store.close() }
        let context = store.newContext()
        for number in 0..<20_000 {
            let counter = try context.insert("Counter")
            counter["name"] = UUID().uuidString
            counter["value"] = Int64(number)
        }
        try context.save()
        let needed = Compaction.requiredFreeSpace(liveBytes: store.state.withLock { $0.liveBytesEstimate })
        disk.limitFreeSpace(to: Int(needed))
        let report = try store.compact()
        // Not the margin alone: the records take more than it.
        #expect(report.bytesAfter > 1 << 20)
    }

    @Test("Closing a store while group-commit saves wait for their flush: they are made durable and acknowledged, later saves fail with .closed, and no call touches the closed file")
    func closeDuringSaves() throws {
        let options = JournalOptions(durability: .groupCommit(window: .milliseconds(1)), compaction: .manual)
        var scene = try Faults.storeWithSaves(4, options: options)
        let store = try #require(scene.store)
        let before = store.journal.lastSequence
        // One saver's flush stops before its fdatasync; the others write
        // their frames meanwhile and wait for the next flush.
        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        scene.disk.holdNextFdatasync(arrived: arrived, gate: gate)
        let savers = Self.saveConcurrently(in: store, rounds: 1)
        arrived.wait()
        let deadline = Date(timeIntervalSinceNow: 30)
        while store.journal.lastSequence < before + UInt64(Faults.slots), Date() < deadline { usleep(1_000) }
        #expect(store.journal.lastSequence == before + UInt64(Faults.slots))

        // Close while that flush is under way, then let it finish.
        let closed = DispatchGroup()
        DispatchQueue.global().async(group: closed) { store.close() }
        // Time for close to start waiting for the flush; were it late, the
        // test would check less, never fail wrongly.
        usleep(100_000)
        gate.signal()
        closed.wait()
        let results = savers.wait()
        #expect(scene.disk.callsAfterClose == [], "a descriptor was used after close")
        #expect(results.values.allSatisfy { $0 == nil }, "saves whose frames were written before close failed: \(results)")
        scene.ledger.record(results)
        guard case .failure(let error) = scene.ledger.save(100, in: store) else {
            Issue.record("a save after close succeeded")
            return
        }
        #expect((error as? LogStoreError)?.kind == .closed, "\(error)")
        var tally = Faults.Tally()
        try Faults.checkAfterPowerCuts(scene.disk, scene.ledger, Faults.Allowance(), "saves waiting at close", &tally)
    }

    /// Savers on their own threads, one per counter slot, so they never
    /// conflict: each saves `rounds` batches, and stops at its first failure.
    struct Savers {
        let outcomes = Protected<[Int: LogStoreError.Kind?]>([:])
        let finished = DispatchGroup()

        /// Waits for every saver; returns each batch tried and its error's kind (nil: saved).
        func wait() -> [Int: LogStoreError.Kind?] {
            finished.wait()
            return outcomes.withLock { $0 }
        }
    }

    static func saveConcurrently(in store: Store, rounds: Int) -> Savers {
        let savers = Savers()
        for slot in 0..<Faults.slots {
            savers.finished.enter()
            Thread {
                defer { savers.finished.leave() }
                for round in 1...rounds {
                    let batch = 4 * round + slot + 4
                    let kind = WriteFailureTests.kind { try Faults.save(batch, in: store) }
                    savers.outcomes.withLock { $0[batch] = kind }
                    if kind != nil { return }
                }
            }.start()
        }
        return savers
    }
}

extension FaultInjectionTests.Ledger {
    /// Takes in the outcomes of saves made concurrently.
    mutating func record(_ outcomes: [Int: LogStoreError.Kind?]) {
        attempted.formUnion(outcomes.keys)
        acknowledged.formUnion(outcomes.filter { $0.value == nil }.keys)
    }
}
