// Every I/O call of a save, a group commit, a compaction and an open, failed
// in turn in every way it can fail, then the power cut three ways and the
// store reopened: the documented promises hold in every case.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import LogStore

@Suite("Fault injection and power cuts")
struct FaultInjectionTests {
    static let path = "/simulated/store.logstore"

    static let model: Model = try! Model {
        Entity("Entry") {
            Attribute("batch", .int64, indexed: true)
            Attribute("text", .string)
        }
        Entity("Counter") {
            Attribute("slot", .int64)
            Attribute("lastBatch", .int64)
        }
    }

    static func open(_ disk: SimulatedDisk, _ options: JournalOptions = JournalOptions(compaction: .manual)) throws(LogStoreError) -> Store {
        try Store(journal: Journal(path: path, options: options, fileSystem: disk), model: model)
    }

    /// Counters, one per slot: concurrent saves of batches in other slots
    /// change different records, so they do not conflict.
    static let slots = 4

    /// Save `batch`: three entries of that batch, and its slot's counter set
    /// to it, in one transaction, so a save half visible shows as a batch of
    /// one or two entries, or a counter that disagrees with the entries.
    /// `padding` lengthens each entry's text by that many bytes.
    static func save(_ batch: Int, in store: Store, padding: Int = 0) throws {
        let context = store.newContext()
        let slot = Int64(batch % slots)
        let counter = try context.fetch(FetchRequest(entityName: "Counter", predicate: try ObjectPredicate("slot == %d", slot))).first ?? context.insert("Counter")
        counter["slot"] = slot
        counter["lastBatch"] = Int64(batch)
        for index in 0..<3 {
            let entry = try context.insert("Entry")
            entry["batch"] = Int64(batch)
            entry["text"] = "entry \(index) of batch \(batch) " + String(repeating: "x", count: batch * 7 % 50 + padding)
        }
        try context.save()
    }

    /// What a store must hold: the saves acknowledged, and those attempted
    /// (which may or may not be there, but never in part).
    struct Ledger {
        var acknowledged: Set<Int> = []
        var attempted: Set<Int> = []

        mutating func save(_ batch: Int, in store: Store) -> Result<Void, any Error> {
            attempted.insert(batch)
            do {
                try FaultInjectionTests.save(batch, in: store)
                acknowledged.insert(batch)
                return .success(())
            } catch { return .failure(error) }
        }

        /// The problems with what `store` holds, none when it keeps every promise.
        func problems(in store: Store) throws -> [String] {
            let context = store.newContext()
            defer { withExtendedLifetime(context) {} }
            var batches: [Int: Int] = [:]
            for entry in try context.fetchAll("Entry") { batches[Int(entry["batch"] as! Int64), default: 0] += 1 }
            var problems: [String] = []
            for (batch, count) in batches where count != 3 { problems.append("batch \(batch) is partly there: \(count) of 3 entries") }
            let present = Set(batches.keys)
            if !acknowledged.isSubset(of: present) { problems.append("acknowledged saves missing: \(acknowledged.subtracting(present).sorted())") }
            if !present.isSubset(of: attempted) { problems.append("saves present that were never made: \(present.subtracting(attempted).sorted())") }
            var counters: [Int: Int] = [:]
            for counter in try context.fetchAll("Counter") { counters[Int(counter["slot"] as! Int64)] = Int(counter["lastBatch"] as! Int64) }
            for slot in 0..<slots {
                let latest = present.filter { $0 % slots == slot }.max()
                if counters[slot] != latest { problems.append("counter \(slot) says \(counters[slot].map(String.init) ?? "nothing"), the entries say \(latest.map(String.init) ?? "nothing")") }
            }
            return problems
        }
    }

    /// Power cuts to try after each case: every kind, two seeds each.
    static let cuts: [(SimulatedDisk.PowerCut, UInt64)] = SimulatedDisk.PowerCut.allCases.flatMap { cut in [(cut, UInt64(1)), (cut, UInt64(2))] }

    /// How a case's power cuts may end, besides every promise kept.
    struct Allowance {
        /// A lying write: only the saves acknowledged before it are
        /// promised, and the damage it left may keep the store from opening
        /// at all (a compaction's lost header), as long as it says so.
        var promisedBeforeLie: Set<Int>?
    }

    /// Tallies over a test's cases, for its line of the matrix.
    struct Tally {
        var cuts = 0, salvaged = 0, lostToLies = 0
    }

    /// After a power cut: the store opens and holds every acknowledged save
    /// and nothing partial, and takes a new save.
    static func checkAfterPowerCuts(_ disk: SimulatedDisk, _ ledger: Ledger, _ allowance: Allowance, _ context: String, _ tally: inout Tally) throws {
        for (cut, seed) in cuts {
            let after = disk.afterPowerCut(cut, seed: seed)
            let what = "\(context), then a power cut (\(cut.rawValue), seed \(seed))"
            var ledger = ledger
            if let promised = allowance.promisedBeforeLie { ledger.acknowledged = promised }
            tally.cuts += 1
            // Never createIfMissing: a lost file name must fail, not open empty.
            let strict = JournalOptions(createIfMissing: false, compaction: .manual)
            let store: Store
            do {
                store = try open(after, strict)
            } catch where error.kind == .corruptFrame && allowance.promisedBeforeLie != nil {
                var salvage = strict
                salvage.recoveryMode = .salvage
                store = try open(after, salvage)
                tally.salvaged += 1
            } catch where allowance.promisedBeforeLie != nil && [.corruptHeader, .corruptSnapshot].contains(error.kind) {
                tally.lostToLies += 1
                continue
            } catch {
                Issue.record("\(what): the store does not open: \(error)")
                continue
            }
            defer { store.close() }
            let problems = try ledger.problems(in: store)
            #expect(problems.isEmpty, "\(what): \(problems)")
            let next = (ledger.attempted.max() ?? 0) + 1
            #expect(throws: Never.self, "\(what): a save after reopening") { try save(next, in: store) }
        }
    }

    /// A disk, the store open on it (none for an open under test), and
    /// what the store must hold.
    struct Scene {
        var disk: SimulatedDisk
        var store: Store?
        var ledger: Ledger
    }

    /// The matrix for one operation: for each I/O call it makes, on a fresh
    /// `setUp()` scene each time,
    /// - the power cut just before that call, the operation running on;
    /// - that call failed in each way it can fail, then what the store does
    ///   next (`afterwards`), then the power cut.
    /// After each, three kinds of cut, two seeds each, and a reopen.
    ///
    /// A call is named by its kind and its place among calls of that kind
    /// (the second write), so that where threads interleave kinds
    /// differently from run to run, each kind is still reached and failed.
    ///
    /// `operation` returns whether it reported success. `callsVary`: threads
    /// decide how many calls of each kind there are, so a case whose call
    /// did not come (a third fdatasync, in a run that grouped every save in
    /// two) is counted as unreached.
    static func inject(
        _ name: String, callsVary: Bool = false, setUp: () throws -> Scene,
        operation: (inout Scene) -> Bool,
        afterwards: (inout Scene, _ succeeded: Bool, _ fault: SimulatedDisk.Fault) -> Void = { _, _, _ in }
    ) throws {
        var dry = try setUp()
        dry.disk.arm()
        #expect(operation(&dry), "\(name) without a fault")
        let calls = dry.disk.calls
        dry.store?.close()
        #expect(!calls.isEmpty)

        var tally = Tally()
        var faults = 0, cutsBefore = 0, unreached = 0
        var reachedKinds: Set<String> = []
        for (index, call) in calls.enumerated() {
            // Which of its kind the call is: threads may reorder writes and
            // fdatasyncs, but each run still makes a first fdatasync.
            let ordinal = calls[...index].lazy.filter { $0 == call }.count
            // The power cut just before the call.
            var scene = try setUp()
            let promised = scene.ledger.acknowledged
            scene.disk.arm(cuttingPowerBefore: ordinal, of: call)
            _ = operation(&scene)
            if let before = scene.disk.stateBeforeCut, scene.disk.armedCall == call {
                cutsBefore += 1
                var ledger = scene.ledger
                ledger.acknowledged = promised
                try checkAfterPowerCuts(before, ledger, Allowance(), "\(name) cut before \(call) \(ordinal)", &tally)
            } else {
                #expect(callsVary, "\(name): \(call) \(ordinal) never came")
                unreached += 1
            }
            scene.store?.close()

            // The call failed, each way it can fail.
            for fault in SimulatedDisk.Fault.applicable(to: call) {
                var scene = try setUp()
                let acknowledgedBefore = scene.ledger.acknowledged
                scene.disk.arm(failing: ordinal, of: call, with: fault)
                let succeeded = operation(&scene)
                let context = "\(name) with \(call) \(ordinal) failing by \(fault)"
                guard scene.disk.armedCall == call else {
                    #expect(callsVary, "\(context): the call never came")
                    unreached += 1
                    scene.store?.close()
                    continue
                }
                faults += 1
                reachedKinds.insert(call)
                let lied = fault == .lyingWrite
                // A reservation that fails is worked around: the save
                // appends past the end instead (FORMAT.md §7).
                if call == "fallocate" {
                    #expect(succeeded, "\(context): a failed reservation failed the operation")
                } else if !lied {
                    #expect(!succeeded, "\(context): reported success")
                }
                scene.disk.arm()
                afterwards(&scene, succeeded, fault)
                var allowance = Allowance()
                if lied { allowance.promisedBeforeLie = acknowledgedBefore }
                try checkAfterPowerCuts(scene.disk, scene.ledger, allowance, context, &tally)
                scene.store?.close()
            }
        }
        #expect(reachedKinds == Set(calls), "\(name): some kinds of call were never failed: \(Set(calls).subtracting(reachedKinds).sorted())")
        var kinds: [String: Int] = [:]
        for call in calls { kinds[call, default: 0] += 1 }
        let listed = kinds.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("fault injection: \(name): \(calls.count) I/O calls (\(listed)); \(cutsBefore) power cuts just before a call and \(faults) faults at one, each followed by \(cuts.count) power cuts and a reopen: \(tally.cuts) reopens, every promise kept"
            + (tally.salvaged > 0 ? "; \(tally.salvaged) needed salvage after a lie" : "")
            + (tally.lostToLies > 0 ? "; \(tally.lostToLies) found the damage a lying write left and refused to open" : "")
            + (unreached > 0 ? "; \(unreached) cases not reached (threads grouped the calls differently)" : ""))
    }

    /// A disk holding a store with `saves` acknowledged saves, open.
    static func storeWithSaves(_ saves: Int, options: JournalOptions = JournalOptions(compaction: .manual)) throws -> Scene {
        let disk = SimulatedDisk()
        let store = try open(disk, options)
        var ledger = Ledger()
        for batch in 1...saves { _ = try ledger.save(batch, in: store).get() }
        return Scene(disk: disk, store: store, ledger: ledger)
    }

    /// After a failed write or fsync, the store refuses saves until
    /// reopened; after a write that found the disk full, it takes them.
    static func expectRefusal(_ scene: inout Scene, _ context: String, after fault: SimulatedDisk.Fault) {
        let next = scene.ledger.attempted.max()! + 1
        if fault.fillsDisk {
            #expect(throws: Never.self, "\(context): a save after a full disk") { try scene.ledger.save(next, in: scene.store!).get() }
            return
        }
        guard case .failure(let error) = scene.ledger.save(next, in: scene.store!) else {
            Issue.record("\(context): a save after the failure was accepted")
            return
        }
        #expect((error as? LogStoreError)?.kind == .writeFailed, "\(context): \(error)")
    }

    @Test("A save (fsync every commit): a power cut before each I/O call, and each call failed")
    func save() throws {
        try Self.inject("save", setUp: { try Self.storeWithSaves(5) }) { scene in
            (try? scene.ledger.save(6, in: scene.store!).get()) != nil
        } afterwards: { scene, succeeded, fault in
            if succeeded { _ = scene.ledger.save(7, in: scene.store!) } else { Self.expectRefusal(&scene, "save", after: fault) }
        }
    }

    @Test("A save that reserves space ahead of its frame: a power cut before each I/O call, and each call failed")
    func saveReservingSpace() throws {
        // Reserving a byte past each frame makes every save reserve.
        let options = JournalOptions(compaction: .manual, preallocationSize: 1)
        try Self.inject("save reserving space", setUp: { try Self.storeWithSaves(5, options: options) }) { scene in
            (try? scene.ledger.save(6, in: scene.store!).get()) != nil
        } afterwards: { scene, succeeded, fault in
            if succeeded { _ = scene.ledger.save(7, in: scene.store!) } else { Self.expectRefusal(&scene, "save", after: fault) }
        }
    }

    @Test("A group commit (4 savers sharing fsyncs): a power cut before each I/O call, and each call failed")
    func groupCommit() throws {
        let options = JournalOptions(durability: .groupCommit(window: .milliseconds(2)), compaction: .manual)
        try Self.inject("group commit", callsVary: true, setUp: { try Self.storeWithSaves(5, options: options) }) { scene in
            let store = scene.store!
            let results = Protected<[Int: Bool]>([:])
            let finished = DispatchGroup()
            for batch in 6...9 {
                finished.enter()
                Thread {
                    defer { finished.leave() }
                    let saved = (try? FaultInjectionTests.save(batch, in: store)) != nil
                    results.withLock { $0[batch] = saved }
                }.start()
            }
            finished.wait()
            let outcome = results.withLock { $0 }
            scene.ledger.attempted.formUnion(outcome.keys)
            scene.ledger.acknowledged.formUnion(outcome.filter(\.value).keys)
            return outcome.values.allSatisfy { $0 }
        } afterwards: { scene, succeeded, fault in
            if !succeeded { Self.expectRefusal(&scene, "group commit", after: fault) }
        }
    }

    @Test("A compaction: a power cut before each I/O call, and each call failed")
    func compaction() throws {
        try Self.inject("compaction", setUp: { try Self.storeWithSaves(20) }) { scene in
            (try? scene.store!.compact()) != nil
        } afterwards: { scene, _, _ in
            // Before the rename the store carries on in the old file; after
            // it, a failed directory fsync stops writes. Either way, a save
            // that is acknowledged must survive the power cut.
            if case .failure(let error) = scene.ledger.save(21, in: scene.store!) {
                #expect((error as? LogStoreError)?.kind == .writeFailed, "compaction: \(error)")
            }
        }
    }

    @Test("An open that cuts off a save a crash interrupted: a power cut before each I/O call, and each call failed",
          arguments: [false, true])
    func openAfterTornSave(compacted: Bool) throws {
        // A store whose last save a crash tore: its frame is cut short, and
        // the open under test must cut it off, truncate and fsync.
        func setUp() throws -> Scene {
            var scene = try Self.storeWithSaves(8)
            let store = scene.store!
            if compacted {
                try store.compact()
                for batch in 9...10 { _ = try scene.ledger.save(batch, in: store).get() }
            }
            let torn = scene.ledger.attempted.max()! + 1
            _ = try scene.ledger.save(torn, in: store).get()
            store.close()
            scene.ledger.acknowledged.remove(torn)
            let bytes = try #require(scene.disk.contents(of: Self.path))
            scene.disk.setContents(of: Self.path, to: Array(bytes.dropLast(9)))
            scene.store = nil
            return scene
        }
        var outcome: RecoveryReport.Outcome?
        try Self.inject(compacted ? "open of a compacted store" : "open", setUp: setUp) { scene in
            guard let store = try? Self.open(scene.disk) else { return false }
            outcome = outcome ?? store.journal.recovery.outcome
            store.close()
            return true
        }
        #expect(outcome == .tornTail, "the open under test found no torn save to cut off")
    }

    @Test("After a failed write or fsync, a reopen in the same process builds only on what is on disk",
          arguments: [SimulatedDisk.Fault.error(EIO), .shortWrite], ["write", "fdatasync"])
    func reopenAfterFailure(fault: SimulatedDisk.Fault, call: String) throws {
        // Linux may drop the pages of a failed fsync and mark them clean:
        // reads still show them, the disk never gets them. A reopen that
        // built on them would put later acknowledged saves behind a hole.
        guard call == "write" || fault == .error(EIO) else { return }
        for durability in [Durability.fsyncEveryCommit, .groupCommit(window: .milliseconds(1))] {
            var scene = try Self.storeWithSaves(5, options: JournalOptions(durability: durability, compaction: .manual))
            scene.disk.arm(failing: call == "write" ? 1 : 2, with: fault)
            #expect(throws: (any Error).self) { try scene.ledger.save(6, in: scene.store!).get() }
            #expect(scene.disk.armedCall == call)
            scene.store!.close()
            scene.disk.arm()
            let reopened = try Self.open(scene.disk, JournalOptions(durability: durability, createIfMissing: false, compaction: .manual))
            #expect(try Self.Ledger(acknowledged: Set(1...5), attempted: Set(1...5)).problems(in: reopened) == [], "the failed save is visible after the reopen")
            for batch in 7...9 { _ = try scene.ledger.save(batch, in: reopened).get() }
            var tally = Tally()
            try Self.checkAfterPowerCuts(scene.disk, scene.ledger, Allowance(), "\(durability): \(call) failed by \(fault), reopened, three saves", &tally)
            reopened.close()
            scene.store = nil
        }
    }
}
