// A data block's values are checked as its records are read: a lookup
// checks the one record it reads, a scan every record of the block. A
// malformed value behind a valid checksum must still never be handed out,
// and every read that needs it, and verify, must say so.

import Foundation
import Testing
@_spi(Fuzzing) @testable import LogStore

@Suite("Values checked as records are read")
struct RecordValueCheckTests {
    /// Uncompressed, so that a record's string can be found in the file and
    /// changed; 16 KiB blocks hold all 300 counters in one.
    static let options = {
        var options = CounterModel.manual(.paged)
        options.compression = .none
        options.snapshotBlockSize = 16 << 10
        return options
    }()

    /// A compacted store of counters named "counter 0" to "counter 299",
    /// then the name of "counter 123" made invalid UTF-8 behind a valid
    /// frame checksum; returns the counters' IDs by number.
    static func damagedStore(at path: String) throws -> [ObjectID] {
        let ids: [ObjectID]
        do {
            let store = try Store(path: path, model: try CounterModel.make(), options: options)
            defer { store.close() }
            ids = try CounterModel.insertCounters(300, into: store.newContext()).map(\.objectID)
            try store.compact()
        }
        // The block rewritten, and every handle naming it (the key
        // directory's, the root's) made to match, as a crafted file would.
        let surgery = StoreFileSurgery(path: path)
        var content = try #require(ContentMutation.Content(try surgery.bytes))
        let name = Array("counter 123".utf8)
        let frame = try #require(content.frames.firstIndex { $0.kind == .snapshotBlock && $0.payload.firstRange(of: name) != nil })
        let at = try #require(content.frames[frame].payload.firstRange(of: name)).lowerBound
        content.frames[frame].payload[at + 8] = 0xff
        try surgery.write(content.encoded(fixingDirectory: true))
        return ids
    }

    /// Calls `body` with the store of ``damagedStore(at:)`` opened, and the
    /// counters' IDs.
    static func withDamagedStore(_ body: (Store, [ObjectID]) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/values.logstore"
            let ids = try damagedStore(at: path)
            let store = try Store(path: path, model: try CounterModel.make(), options: options)
            defer { store.close() }
            try body(store, ids)
        }
    }

    @Test("A lookup reads its record when another record of its block is malformed; the malformed one, a scan over the block, a compaction and verify all report .corruptSnapshot")
    func malformedRecordInABlock() throws {
        try Self.withDamagedStore { (store, ids) throws in
            // Its neighbour in the block is read, checked on its own.
            let context = store.newContext()
            let neighbour = try context.existingObject(with: ids[124])
            #expect(neighbour["name"] as? String == "counter 124")

            // The malformed record is never handed out: not as a value, not
            // as deleted.
            guard case .unreadable(let failure) = store.lookup(ids[123]) else {
                Issue.record("the malformed record was read, or taken for deleted")
                return
            }
            #expect(failure.kind == .corruptSnapshot)
            #expect(throws: LogStoreError.self) { _ = try store.newContext().existingObject(with: ids[123])["name"] }

            // A fetch that scans the block needs every record of it.
            do {
                _ = try store.newContext().fetch(FetchRequest(entityName: "Counter", predicate: ObjectPredicate("value >= 0")))
                Issue.record("a scan over the malformed record answered")
            } catch {
                #expect((error as? LogStoreError)?.kind == .corruptSnapshot)
            }
            #expect(throws: LogStoreError.self) { try store.compact() }
        }
        try withTemporaryDirectory { directory in
            let path = directory + "/verified.logstore"
            _ = try Self.damagedStore(at: path)
            let report = try StoreInspector.verify(path: path)
            #expect(!report.isValid)
        }
    }

    @Test("A scan checks a cached block once, and a lookup that read it first does not spare the scan the check")
    func scanAfterLookup() throws {
        try Self.withDamagedStore { (store, ids) throws in
            // The lookup caches the block with one record checked.
            #expect(try store.newContext().existingObject(with: ids[5])["name"] as? String == "counter 5")
            #expect(throws: LogStoreError.self) {
                _ = try store.newContext().fetch(FetchRequest(entityName: "Counter", predicate: ObjectPredicate("name BEGINSWITH %@", "counter")))
            }
        }
    }
}
