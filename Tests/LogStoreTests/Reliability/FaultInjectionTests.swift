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
    static func save(_ batch: Int, in store: Store) throws {
        let context = store.newContext()
        let slot = Int64(batch % slots)
        let counter = try context.fetch(FetchRequest(entityName: "Counter", predicate: try ObjectPredicate("slot == %d", slot))).first ?? context.insert("Counter")
        counter["slot"] = slot
        counter["lastBatch"] = Int64(batch)
        for index in 0..<3 {
            let entry = try context.insert("Entry")
            entry["batch"] = Int64(batch)
            entry["text"] = "entry \(index) of batch \(batch) " + String(repeating: "x", count: batch * 7 % 50)
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

    /// After a power cut: the store opens and holds every acknowledged save
    /// and nothing partial, and takes a new save.
    ///
    /// A lying write (success reported, half landed) breaks the frame it
    /// carried, and no store can keep a save the disk lied about: with
    /// `promisedBeforeLie` given, only the saves acknowledged before the
    /// lie must be there. The damage may be a torn tail (cut off at open) or
    /// sit before later frames: then the store refuses to open as corrupt,
    /// and opens with salvage.
    static func checkAfterPowerCuts(_ disk: SimulatedDisk, _ ledger: Ledger, promisedBeforeLie: Set<Int>?, _ context: String) throws {
        for (cut, seed) in cuts {
            let after = disk.afterPowerCut(cut, seed: seed)
            let what = "\(context), then a power cut (\(cut.rawValue), seed \(seed))"
            var ledger = ledger
            if let promisedBeforeLie { ledger.acknowledged = promisedBeforeLie }
            let store: Store
            do {
                store = try open(after)
            } catch where promisedBeforeLie != nil && error.kind == .corruptFrame {
                store = try open(after, JournalOptions(recoveryMode: .salvage, compaction: .manual))
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

    /// One line of the injection matrix, printed with the test's output.
    static func report(_ operation: String, calls: [String], cases: Int, unreached: Int) {
        var tally: [String: Int] = [:]
        for call in calls { tally[call, default: 0] += 1 }
        let kinds = tally.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("fault injection: \(operation): \(calls.count) I/O calls (\(kinds)), \(cases) faults injected, each followed by \(cuts.count) power cuts and a reopen, all passed" + (unreached > 0 ? " (\(unreached) more not reached: that run's flushes grouped into fewer calls)" : ""))
    }

    /// A disk, the store open on it (none for an open under test), and
    /// what the store must hold.
    struct Scene {
        var disk: SimulatedDisk
        var store: Store?
        var ledger: Ledger
    }

    /// Runs `operation` once per (call, fault) on a fresh `setUp()` scene;
    /// `operation` returns whether it reported success. `afterFailure`
    /// checks what the store does next, before the power cuts.
    static func inject(
        _ name: String, callsVary: Bool = false, setUp: () throws -> Scene,
        operation: (inout Scene) -> Bool,
        afterwards: (inout Scene, _ succeeded: Bool) -> Void = { _, _ in }
    ) throws {
        var dry = try setUp()
        dry.disk.arm()
        #expect(operation(&dry), "\(name) without a fault")
        let calls = dry.disk.calls
        dry.store?.close()
        #expect(!calls.isEmpty)

        var cases = 0, unreached = 0
        for (index, call) in calls.enumerated() {
            for fault in SimulatedDisk.Fault.applicable(to: call) {
                cases += 1
                var scene = try setUp()
                let acknowledgedBefore = scene.ledger.acknowledged
                scene.disk.arm(failing: index + 1, with: fault)
                let succeeded = operation(&scene)
                let context = "\(name) with call \(index + 1) (\(call)) failing by \(fault)"
                if !scene.disk.faultFired {
                    // Only where threads decide how many calls there are.
                    #expect(callsVary, "\(context): the call was never made")
                    unreached += 1
                } else if fault != .lyingWrite {
                    #expect(!succeeded, "\(context): reported success")
                }
                scene.disk.arm()
                afterwards(&scene, succeeded)
                try checkAfterPowerCuts(scene.disk, scene.ledger, promisedBeforeLie: fault == .lyingWrite ? acknowledgedBefore : nil, context)
                scene.store?.close()
            }
        }
        report(name, calls: calls, cases: cases - unreached, unreached: unreached)
    }

    /// A disk holding a store with `saves` acknowledged saves, open.
    static func storeWithSaves(_ saves: Int, options: JournalOptions = JournalOptions(compaction: .manual)) throws -> Scene {
        let disk = SimulatedDisk()
        let store = try open(disk, options)
        var ledger = Ledger()
        for batch in 1...saves { _ = try ledger.save(batch, in: store).get() }
        return Scene(disk: disk, store: store, ledger: ledger)
    }

    /// After a failed write or fsync, the store refuses saves until reopened.
    static func expectRefusal(_ scene: inout Scene, _ context: String) {
        let next = scene.ledger.attempted.max()! + 1
        guard case .failure(let error) = scene.ledger.save(next, in: scene.store!) else {
            Issue.record("\(context): a save after the failure was accepted")
            return
        }
        #expect((error as? LogStoreError)?.kind == .writeFailed, "\(context): \(error)")
    }

    @Test("A save (fsync every commit): each I/O call failed, then the power cut")
    func save() throws {
        try Self.inject("save", setUp: { try Self.storeWithSaves(5) }) { scene in
            (try? scene.ledger.save(6, in: scene.store!).get()) != nil
        } afterwards: { scene, succeeded in
            if succeeded { _ = scene.ledger.save(7, in: scene.store!) } else { Self.expectRefusal(&scene, "save") }
        }
    }

    @Test("A group commit (4 savers sharing fsyncs): each I/O call failed, then the power cut")
    func groupCommit() throws {
        let options = JournalOptions(durability: .groupCommit(window: .milliseconds(2)), compaction: .manual)
        try Self.inject("group commit", callsVary: true, setUp: { try Self.storeWithSaves(5, options: options) }) { scene in
            // Four threads save at once. How their flushes group varies from
            // run to run, so a case may make fewer calls than the dry run:
            // then its fault is never reached, and the test says so.
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
        } afterwards: { scene, succeeded in
            if !succeeded { Self.expectRefusal(&scene, "group commit") }
        }
    }

    @Test("A compaction: each I/O call failed, then the power cut")
    func compaction() throws {
        try Self.inject("compaction", setUp: { try Self.storeWithSaves(20) }) { scene in
            (try? scene.store!.compact()) != nil
        } afterwards: { scene, _ in
            // Before the rename the store carries on in the old file; after
            // it, a failed directory fsync stops writes. Either way, a save
            // that is acknowledged must survive the power cut.
            if case .failure(let error) = scene.ledger.save(21, in: scene.store!) {
                #expect((error as? LogStoreError)?.kind == .writeFailed, "compaction: \(error)")
            }
        }
    }

    @Test("An open that cuts off an interrupted save: each I/O call failed, then the power cut",
          arguments: [false, true])
    func openAfterTornSave(compacted: Bool) throws {
        // A store whose last save a full disk cut short, closed: the open
        // under test must cut the torn frame off, truncate and fsync.
        func setUp() throws -> Scene {
            var scene = try Self.storeWithSaves(8)
            let store = scene.store!
            if compacted {
                try store.compact()
                for batch in 9...10 { _ = try scene.ledger.save(batch, in: store).get() }
            }
            scene.disk.arm(failing: 1, with: .shortWrite)
            #expect(throws: LogStoreError.self) { try scene.ledger.save(scene.ledger.attempted.max()! + 1, in: store).get() }
            store.close()
            scene.store = nil
            return scene
        }
        try Self.inject(compacted ? "open of a compacted store" : "open", setUp: setUp) { scene in
            guard let store = try? Self.open(scene.disk) else { return false }
            store.close()
            return true
        }
    }
}
