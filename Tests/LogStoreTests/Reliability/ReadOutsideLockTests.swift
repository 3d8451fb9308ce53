// A reader waiting for the disk must not hold the store's lock: a save, or
// another reader, would wait for its disk read (REVIEW.md's class of "work
// under a shared lock"; issue 24's one writer beside four readers).

import Foundation
import Testing
@testable import LogStore

@Suite("Reads wait for the disk outside the store's lock")
struct ReadOutsideLockTests {
    /// Items 1 to 40 in a snapshot of small blocks, on a simulated disk,
    /// opened with a cache of one block (ApplyReadFailureTests' store), so
    /// that reading item 1 after item 40 reads its block from the disk.
    static func compactedStore() throws -> (SimulatedDisk, Store) {
        let disk = SimulatedDisk()
        try ApplyReadFailureTests.fill(disk)
        return (disk, try ApplyReadFailureTests.open(disk))
    }

    @Test("A record read that waits for its block lets a save and another lookup through, and then reads the record")
    func saveWhileAReadWaits() throws {
        let (disk, store) = try Self.compactedStore()
        defer { store.close() }
        // Item 40's block is the one cached; item 1's is on the disk.
        #expect(store.record(store.id("Item", 40))?.values[1] == .int64(40))

        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        disk.holdNextRead(arrived: arrived, gate: gate)
        let read = Protected<Record?>(nil)
        let readDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            read.withLock { $0 = store.record(store.id("Item", 1)) }
            readDone.signal()
        }
        #expect(arrived.wait(timeout: .now() + 30) == .success, "the read of item 1's block never reached the disk")

        // While that read waits: a save, and a lookup of a record changed
        // since the snapshot (no disk read), each need the store's lock.
        let othersDone = DispatchSemaphore(value: 0)
        let saved = Protected<Bool>(false)
        Thread.detachNewThread {
            let context = store.newContext()
            // Its key is not 41: a reopened store skips what the session
            // before it reserved.
            let added = (try? context.insert("Item")).flatMap { item -> ObjectID? in
                item["name"] = "added"
                item["count"] = Int64(41)
                return (try? context.save()) != nil ? item.objectID : nil
            }
            saved.withLock { $0 = added.flatMap { store.record($0) }?.values[1] == .int64(41) }
            othersDone.signal()
        }
        let finished = othersDone.wait(timeout: .now() + 30) == .success
        #expect(finished, "a save and a lookup waited for another thread's disk read")
        gate.signal()
        if !finished { #expect(othersDone.wait(timeout: .now() + 30) == .success) }
        #expect(readDone.wait(timeout: .now() + 30) == .success)
        #expect(saved.withLock { $0 })
        #expect(read.withLock { $0 }?.values == [.string("item 1"), .int64(1)])
    }

    @Test("A read that fails after a compaction replaced the snapshot it was found in reports the failure, not a deleted record: by existingObject, and by a fault's first property read",
          arguments: [false, true])
    func failureAcrossACompaction(firingAFault: Bool) throws {
        let (disk, store) = try Self.compactedStore()
        defer { store.close() }
        #expect(store.record(store.id("Item", 40)) != nil)

        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        disk.holdNextRead(arrived: arrived, gate: gate)
        let outcome = Protected<Result<Int64?, LogStoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let context = store.newContext()
            let result = Result { () throws(LogStoreError) in
                // object(with:) makes a fault without reading the record;
                // its first property read does.
                let item = firingAFault ? try context.object(with: store.id("Item", 1)) : try context.existingObject(with: store.id("Item", 1))
                return try item.value(forKey: "count") as? Int64
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        #expect(arrived.wait(timeout: .now() + 30) == .success, "the read of item 1's block never reached the disk")
        // While that read waits: a compaction puts the records in a new
        // snapshot, and then the waiting read fails.
        _ = try store.compact()
        disk.arm(failing: 1, of: "read")
        gate.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        disk.arm()
        switch outcome.withLock({ $0 }) {
        case .failure(let error)?: #expect(error.kind != .objectNotFound, "\(error.message)")
        case .success(let count)?: Issue.record("the read succeeded (count \(String(describing: count))) though the disk failed it")
        case nil: Issue.record("the read did not finish")
        }
        // The record is there: read again, it is found.
        #expect(store.record(store.id("Item", 1))?.values[1] == .int64(1))
    }
}
