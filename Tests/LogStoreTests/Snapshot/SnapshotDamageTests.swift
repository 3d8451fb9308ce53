// A damaged snapshot block or index is found at open, named, and listed by verify.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Snapshot damage")
struct SnapshotDamageTests {
    /// A compacted store of 5,000 counters in many small blocks, and its directory.
    static func withCompactedStore(_ body: (String, Model, SnapshotIndex) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/damaged.logstore"
            let model = try CounterModel.make()
            // Format version 4, one index frame: the layout these tests damage.
            var options = CounterModel.manual(.indexFrame)
            options.snapshotBlockSize = 4 << 10
            do {
                let store = try Store(path: path, model: model, options: options)
                defer { store.close() }
                let context = store.newContext()
                for (number, counter) in try CounterModel.insertCounters(5_000, into: context).enumerated() {
                    counter["note"] = "note \(number)"
                }
                try context.save()
                try store.compact()
            }
            let file = try SystemFile(path: path, mode: .readOnly)
            defer { file.close() }
            let header = try JournalFixtures.header(of: file)
            let offset = try #require(header.snapshotIndexOffset)
            let (index, _) = try SnapshotFile.readIndex(in: file, at: offset, fileSize: try file.size())
            try #require(index.blocks.count > 10)
            try body(path, model, index)
        }
    }

    @Test("A flipped bit in a block's payload is .corruptSnapshot at open, naming the block; verify lists it")
    func damagedBlock() throws {
        try Self.withCompactedStore { path, model, index in
            let block = index.blocks[6]
            try StoreFileSurgery(path: path).flipBit(at: Int(block.offset) + 40 + Int(block.storedSize) / 2, bit: 3)
            let error = #expect(throws: LogStoreError.self) { try Store(path: path, model: model, options: CounterModel.manual) }
            #expect(error?.kind == .corruptSnapshot)
            #expect(error?.frameNumber == 7)
            #expect(error?.offset == block.offset)
            #expect(error?.message.contains("snapshot block 7 at offset \(block.offset)") == true)
            #expect(error?.message.contains("logstore-tool verify") == true)

            let report = try StoreInspector.verify(path: path)
            #expect(report.problems.map(\.frameNumber) == [7])
            #expect(report.problems.first?.offset == block.offset)
            #expect(report.validFrames == index.blocks.count)  // the other blocks and the index
        }
    }

    @Test("A damaged index, or a header pointing elsewhere, is .corruptSnapshot naming the index")
    func damagedIndex() throws {
        try Self.withCompactedStore { path, model, index in
            let surgery = StoreFileSurgery(path: path)
            let original = try surgery.bytes
            let indexOffset = Int(index.blocks.last!.offset + index.blocks.last!.frameSize)
            try surgery.flipBit(at: indexOffset + 60)
            let error = #expect(throws: LogStoreError.self) { try Store(path: path, model: model, options: CounterModel.manual) }
            #expect(error?.kind == .corruptSnapshot)
            #expect(error?.message.contains("snapshot index at offset \(indexOffset)") == true)
            #expect(try StoreInspector.verify(path: path).problems.count == 1)

            // The header's pointer moved onto a block: not an index frame.
            var bytes = original
            JournalFixtures.store(index.blocks[2].offset, into: &bytes, at: FileLayout.snapshotOffsetField)
            JournalFixtures.resignHeader(&bytes)
            try surgery.write(bytes)
            let moved = #expect(throws: LogStoreError.self) { try Store(path: path, model: model, options: CounterModel.manual) }
            #expect(moved?.kind == .corruptSnapshot)
            #expect(moved?.message.contains("snapshot block frame") == true)
        }
    }

    @Test("A block missing from between the others is damage, not a shorter snapshot")
    func missingBlock() throws {
        try Self.withCompactedStore { path, model, index in
            let surgery = StoreFileSurgery(path: path)
            var bytes = try surgery.bytes
            let block = index.blocks[3]
            // Overwrite block 4 with a copy of block 5's frame: valid, but not the one listed.
            let next = index.blocks[4]
            let copy = Array(bytes[Int(next.offset)..<Int(next.offset + next.frameSize)])
            bytes.replaceSubrange(Int(block.offset)..<Int(block.offset + block.frameSize), with: copy)
            try surgery.write(bytes)
            let error = #expect(throws: LogStoreError.self) { try Store(path: path, model: model, options: CounterModel.manual) }
            #expect(error?.kind == .corruptSnapshot)
        }
    }

    /// Replaces the snapshot index of the store at `path` by `index` changed
    /// by `craft`, in a frame whose checksum is valid, and drops the journal
    /// after it: content that only a crafted (or buggy) file could hold.
    static func craftIndex(of path: String, _ index: SnapshotIndex, _ craft: (inout SnapshotIndex) -> Void) throws {
        let surgery = StoreFileSurgery(path: path)
        let indexOffset = Int(index.blocks.last!.offset + index.blocks.last!.frameSize)
        var crafted = index
        craft(&crafted)
        var frame = ByteWriter(capacity: 1 << 16)
        crafted.encoded().bytes.withUnsafeBytes { raw in
            _ = FrameHeader.encodeFrame(kind: .snapshotIndex, sequence: crafted.sequence, timestampMicroseconds: 0, payload: raw, compressor: nil, into: &frame)
        }
        try surgery.write(Array(try surgery.bytes[..<indexOffset]) + frame.bytes)
    }

    @Test("A checksum-valid index whose numbers overflow is .corruptSnapshot, never a trap", arguments: [
        "a block offset near 2^64", "block record counts whose sum overflows", "a record count near 2^63",
    ])
    func overflowingIndex(_ craft: String) throws {
        try Self.withCompactedStore { path, model, index in
            try Self.craftIndex(of: path, index) { index in
                switch craft {
                case "a block offset near 2^64": index.blocks[1].offset = .max - 20
                case "block record counts whose sum overflows": index.blocks[0].recordCount = .max
                default: index.blocks[0].recordCount = .max - 1_000
                }
            }
            let error = #expect(throws: LogStoreError.self) { try Store(path: path, model: model, options: CounterModel.manual) }
            #expect(error?.kind == .corruptSnapshot, "\(String(describing: error))")
            #expect(error?.message.contains("snapshot index") == true)
            // Recovery rebuilds the index from the blocks, which are whole.
            let recovery = try StoreInspector.recover(path: path, to: path + ".recovered")
            #expect(recovery.snapshotRecordsKept == 5_000 && recovery.lostRecords.isEmpty)
            #expect(try StoreInspector.verify(path: path).problems.isEmpty == false)
        }
    }

    @Test("A checksum-valid index that places a record where its block holds another is .corruptSnapshot when a migration reads it, not a record of defaults")
    func misplacedRecordInMigration() throws {
        try Self.withCompactedStore { path, _, index in
            try Self.craftIndex(of: path, index) { index in
                // Every key one place later than the blocks hold it (the next
                // key, which the blocks' context repeats, unchanged).
                let keys = index.entities[0].keys
                precondition(index.entities[0].nextKey - 1 > keys.last!)
                index.entities[0].keys = Array(keys.dropFirst()) + [index.entities[0].nextKey - 1]
            }
            let migrated = try CounterModel.make(adding: "added")
            let error = #expect(throws: LogStoreError.self) { try Store(path: path, model: migrated, options: CounterModel.manual) }
            #expect(error?.kind == .corruptSnapshot, "\(String(describing: error))")
        }
    }

    @Test("A checksum-valid index that places a record where its block holds another: a fetch, a lookup and a dictionary fetch that read it throw .corruptSnapshot; none answers without the record or calls it deleted")
    func misplacedRecordRead() throws {
        try Self.withCompactedStore { path, model, index in
            let keys = index.entities[0].keys
            try Self.craftIndex(of: path, index) { index in
                index.entities[0].keys = Array(keys.dropFirst()) + [index.entities[0].nextKey - 1]
            }
            let reads: [(String, (Store) throws -> Int)] = [
                ("fetch", { try $0.newContext().fetch(FetchRequest(entityName: "Counter", predicate: try ObjectPredicate("value != -1"))).count }),
                ("existingObject", { store in
                    let context = store.newContext()
                    return try withExtendedLifetime(context) { try context.existingObject(with: store.id("Counter", keys[1])) != nil ? 1 : 0 }
                }),
                ("dictionaries", { try $0.newContext().fetchDictionaries(FetchRequest(entityName: "Counter")).count }),
            ]
            for (name, read) in reads {
                let store = try Store(path: path, model: model, options: CounterModel.manual)
                defer { store.close() }
                let outcome = Result { try read(store) }
                switch outcome {
                case .success(let answer): Issue.record("\(name): answered \(answer) from misplaced records")
                case .failure(let error): #expect((error as? LogStoreError)?.kind == .corruptSnapshot, "\(name): \(error)")
                }
            }
        }
    }
}

