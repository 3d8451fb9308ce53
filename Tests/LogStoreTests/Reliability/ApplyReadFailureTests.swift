// A snapshot block that fails to read while a durable save is applied
// (issue 22 point 7; REVIEW.md engine item 9): the store must not go on
// serving the record as it was before the save, which its journal says it
// no longer is.

import Foundation
import Testing
@testable import LogStore

@Suite("A block read failing while a save is applied")
struct ApplyReadFailureTests {
    static let model = try! Model {
        Entity("Item") {
            Attribute("name", .string, indexed: true)
            Attribute("count", .int64)
        }
    }

    static let path = "/store.logstore"
    /// Small blocks and a cache of one block, so that reading one record
    /// evicts the block of another and the save must read it again.
    static let options = JournalOptions(compaction: .manual, snapshotBlockSize: 128, blockCacheCapacity: 1)

    static func open(_ disk: SimulatedDisk) throws -> Store {
        try Store(journal: Journal(path: path, options: options, fileSystem: disk), model: model)
    }

    /// Items 1 to 40, compacted into a snapshot of small blocks.
    static func fill(_ disk: SimulatedDisk) throws {
        let store = try open(disk)
        defer { store.close() }
        let context = store.newContext()
        for number in 1...40 {
            let item = try context.insert("Item")
            item["name"] = "item \(number)"
            item["count"] = Int64(number)
        }
        try context.save()
        _ = try store.compact()
    }

    /// The `count` of item 1 as `store` serves it to a new context; nil when
    /// the store throws instead.
    static func servedCount(_ store: Store) -> Int64? {
        let context = store.newContext()
        return withExtendedLifetime(context) {
            guard let item = try? context.existingObject(with: store.id("Item", 1)) else { return nil }
            return (try? item.value(forKey: "count")) as? Int64
        }
    }

    @Test("Failing each read of a save in turn: the store serves what its file holds, or throws; it never serves the record from before the save")
    func everyReadOfASave() throws {
        var reachedApply = false
        for failing in 1...8 {
            let disk = SimulatedDisk()
            try Self.fill(disk)
            let store = try Self.open(disk)
            let context = store.newContext()
            let first = try context.existingObject(with: store.id("Item", 1))
            first["count"] = Int64(1_000)
            // Reading the last item evicts the first one's block. The save
            // changes both: it reads each one's block for its version before
            // anything is written (a failure there refuses the save), the
            // last one's evicting the first one's again, so that applying
            // the written save reads a block once more.
            try context.existingObject(with: store.id("Item", 40))["count"] = Int64(4_000)
            // A fault made before the save, loaded only after it.
            let faultContext = store.newContext()
            let fault = try faultContext.object(with: store.id("Item", 3))
            disk.arm(failing: failing, of: "read")
            let saved = (try? context.save()) != nil
            let fired = disk.faultFired
            disk.arm()
            let served = Self.servedCount(store)
            // A save after a failure must not build on a stale record either.
            let laterSave: Int64? = {
                let later = store.newContext()
                return withExtendedLifetime(later) {
                    guard let item = try? later.existingObject(with: store.id("Item", 2)) else { return nil }
                    item["count"] = Int64(2_000)
                    return (try? later.save()) != nil ? 2_000 : nil
                }
            }()
            // The fault, loaded now, says the same, not that it was deleted.
            var faultError: LogStoreError?
            do { _ = try withExtendedLifetime(faultContext) { try fault.value(forKey: "name") } } catch { faultError = error as? LogStoreError }
            let refusal: LogStoreError? = {
                let later = store.newContext()
                return withExtendedLifetime(later) { () -> LogStoreError? in
                    do { _ = try later.fetchAll("Item"); return nil } catch { return error as? LogStoreError }
                }
            }()
            store.close()

            let reopened = try Self.open(disk)
            defer { reopened.close() }
            let truth = try #require(Self.servedCount(reopened), "read \(failing): the reopened store does not serve item 1")
            if saved { #expect(truth == 1_000, "read \(failing): an acknowledged save is lost") }
            if let served {
                #expect(served == truth, "read \(failing) failed\(fired ? "" : " (never reached)"): the store served count \(served) while its file holds \(truth)")
            }
            if served == nil {
                // Refusing to serve says why, and what to do.
                #expect(refusal?.kind == .io && refusal?.message.contains("open it again") == true, "read \(failing): \(String(describing: refusal))")
                #expect(faultError?.kind == .io, "read \(failing): \(String(describing: faultError))")
            }
            if laterSave != nil {
                #expect(served == truth, "read \(failing): a save went on after the store served a stale record")
            }
            if fired && saved { reachedApply = true }
        }
        // The case the test is for: the save was written, and a read after it failed.
        #expect(reachedApply, "no failed read came after the save was written")
    }
}

extension ApplyReadFailureTests {
    @Test("A block that fails to read after open: a fetch, a count, a lookup and a fault that read it throw .io; none answers without its records or calls them deleted, and saves are refused")
    func readsNeverAnswerWithoutABlock() throws {
        let disk = SimulatedDisk()
        try Self.fill(disk)
        // Each read fails in a new store, its first block read after open:
        // blocks are read on demand, through a cache of one block.
        let reads: [(String, (Store) throws -> Int)] = [
            ("fetch", { try $0.newContext().fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("count != 3"))).count }),
            ("count of a scan", { try $0.newContext().count(for: FetchRequest(entityName: "Item", predicate: try ObjectPredicate("count > 0"))) }),
            ("fetch of IDs by value", { try $0.newContext().fetchIDs(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("count >= 20"))).count }),
            ("existingObject", { store in
                let context = store.newContext()
                return try withExtendedLifetime(context) { try context.existingObject(with: store.id("Item", 7)) != nil ? 1 : 0 }
            }),
            ("dictionary fetch", { try $0.newContext().fetchDictionaries(FetchRequest(entityName: "Item")).count }),
            ("fault", { store in
                let context = store.newContext()
                return try withExtendedLifetime(context) { try context.object(with: store.id("Item", 7)).value(forKey: "count") != nil ? 1 : 0 }
            }),
        ]
        for (name, read) in reads {
            let store = try Self.open(disk)
            defer { store.close() }
            disk.arm(failing: 1, of: "read")
            let outcome = Result { try read(store) }
            disk.arm()
            switch outcome {
            case .success(let answer):
                Issue.record("\(name): answered \(answer) though a block failed to read (fired: \(disk.faultFired))")
            case .failure(let error):
                #expect((error as? LogStoreError)?.kind == .io, "\(name): \(error)")
            }
            // Saves are refused from now on, until the store is opened again.
            let context = store.newContext()
            try withExtendedLifetime(context) {
                try context.insert("Item")["name"] = "after"
                #expect(throws: LogStoreError.self, "\(name)") { try context.save() }
            }
        }
    }
}
