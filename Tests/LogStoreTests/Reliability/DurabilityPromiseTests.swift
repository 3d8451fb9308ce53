// Each durability mode's promise (README "Durability"), held to it by power
// cuts on the simulated disk at many moments, cut each of three ways.

import Foundation
import Testing
@testable import LogStore

@Suite("Durability promises under power cuts")
struct DurabilityPromiseTests {
    /// The store, saves and ledger of the fault-injection tests.
    typealias Fixture = FaultInjectionTests

    /// Seeds per kind of cut at each moment.
    static let seeds: [UInt64] = Array(1...8)

    /// Opens what a power cut left, strictly: under every mode an ordinary
    /// power cut leaves at worst unsynced frames to cut off, never damage.
    static func reopen(_ disk: SimulatedDisk, _ what: String) throws -> Store? {
        // Never createIfMissing: a lost file name must fail, not open empty.
        do {
            return try Fixture.open(disk, JournalOptions(createIfMissing: false, compaction: .manual))
        } catch {
            Issue.record("\(what): the store does not open: \(error)")
            return nil
        }
    }

    /// The batches a store holds (each checked whole by the ledger).
    static func batches(in store: Store) throws -> Set<Int> {
        // The context outlives the reads: an object whose context is gone
        // reads as nil, as in Core Data.
        let context = store.newContext()
        return try withExtendedLifetime(context) {
            Set(try context.fetchAll("Entry").map { Int($0["batch"] as! Int64) })
        }
    }

    @Test("fsync every commit: a power cut after any save loses nothing acknowledged, and the file opens without salvage")
    func fsyncEveryCommit() throws {
        let disk = SimulatedDisk()
        let store = try Fixture.open(disk)
        defer { store.close() }
        var ledger = Fixture.Ledger()
        var checked = 0
        for batch in 1...24 {
            _ = try ledger.save(batch, in: store).get()
            for cut in SimulatedDisk.PowerCut.allCases {
                for seed in Self.seeds {
                    let what = "after save \(batch), a power cut (\(cut.rawValue), seed \(seed))"
                    guard let reopened = try Self.reopen(disk.afterPowerCut(cut, seed: seed), what) else { continue }
                    #expect(try ledger.problems(in: reopened) == [], "\(what)")
                    reopened.close()
                    checked += 1
                }
            }
        }
        print("durability: fsync every commit: \(checked) power cuts, every acknowledged save kept")
    }

    @Test("group commit: a power cut while 4 threads save loses nothing acknowledged, and the file opens without salvage")
    func groupCommit() throws {
        let disk = SimulatedDisk()
        let store = try Fixture.open(disk, JournalOptions(durability: .groupCommit(window: .milliseconds(1)), compaction: .manual))
        defer { store.close() }
        let acknowledged = Protected<Set<Int>>([])
        let savesEach = 12
        let finished = DispatchGroup()
        for thread in 0..<Fixture.slots {
            finished.enter()
            Thread {
                defer { finished.leave() }
                // This thread's batches all fall in its own counter slot.
                for round in 1...savesEach {
                    let batch = round * Fixture.slots + thread
                    do { try Fixture.save(batch, in: store) } catch { Issue.record("batch \(batch): \(error)"); return }
                    acknowledged.withLock { _ = $0.insert(batch) }
                }
            }.start()
        }
        // Cut the power at moments while they save: what was acknowledged
        // before the cut (read first) must be in what the cut leaves.
        var cuts: [(promised: Set<Int>, disk: SimulatedDisk, cut: SimulatedDisk.PowerCut, seed: UInt64)] = []
        var seen = 0
        while finished.wait(timeout: .now() + .microseconds(200)) == .timedOut || cuts.isEmpty {
            let promised = acknowledged.withLock { $0 }
            guard promised.count > seen || cuts.isEmpty else { continue }
            seen = promised.count
            for cut in SimulatedDisk.PowerCut.allCases {
                for seed in Self.seeds { cuts.append((promised, disk.afterPowerCut(cut, seed: seed), cut, seed)) }
            }
        }
        let attempted = Set((0..<Fixture.slots).flatMap { thread in (1...savesEach).map { $0 * Fixture.slots + thread } })
        var unsynced = 0
        for (index, cut) in cuts.enumerated() {
            let what = "power cut \(index) (\(cut.cut.rawValue), seed \(cut.seed)) with \(cut.promised.count) saves acknowledged"
            guard let reopened = try Self.reopen(cut.disk, what) else { continue }
            if reopened.journal.recovery.outcome == .unsyncedFramesDiscarded { unsynced += 1 }
            let ledger = Fixture.Ledger(acknowledged: cut.promised, attempted: attempted)
            #expect(try ledger.problems(in: reopened) == [], "\(what)")
            reopened.close()
        }
        print("durability: group commit: \(cuts.count) power cuts during 4 × \(savesEach) concurrent saves, every acknowledged save kept, none needed salvage (\(unsynced) cut off unsynced frames after a hole)")
    }

    @Test("deferred to the OS: a power cut keeps a prefix of the saves, each whole, and every save made before a compaction finished, and the file opens without salvage")
    func deferredToOS() throws {
        let disk = SimulatedDisk()
        let store = try Fixture.open(disk, JournalOptions(durability: .deferredToOS, compaction: .manual))
        defer { store.close() }
        var ledger = Fixture.Ledger()
        var compactedThrough = 0
        var checked = 0, kept: [Int] = []
        for batch in 1...30 {
            _ = try ledger.save(batch, in: store).get()
            if batch == 12 {
                try store.compact()
                compactedThrough = batch
            }
            for cut in SimulatedDisk.PowerCut.allCases {
                for seed in Self.seeds {
                    let what = "after save \(batch), a power cut (\(cut.rawValue), seed \(seed))"
                    guard let reopened = try Self.reopen(disk.afterPowerCut(cut, seed: seed), what) else { continue }
                    defer { reopened.close() }
                    // Nothing is promised but what a compaction made durable,
                    // and that whatever is there is whole and in order.
                    let promised = Fixture.Ledger(acknowledged: Set(1...max(1, compactedThrough)).filter { _ in compactedThrough > 0 }, attempted: ledger.attempted)
                    #expect(try promised.problems(in: reopened) == [], "\(what)")
                    let present = try Self.batches(in: reopened)
                    #expect(present == Set(1...max(1, present.count)).filter { _ in !present.isEmpty }, "\(what): \(present.sorted()) is not a prefix of the saves")
                    checked += 1
                    kept.append(present.count)
                }
            }
        }
        print("durability: deferred to the OS: \(checked) power cuts, each left a whole prefix of the saves (on average \(kept.reduce(0, +) / max(1, kept.count)) of them), all 12 saved before the compaction kept")
    }
}
