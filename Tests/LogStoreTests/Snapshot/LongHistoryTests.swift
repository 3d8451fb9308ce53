// A long history compacts to the size of its live data.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Long history")
struct LongHistoryTests {
    /// Saves in the long-history test; LOGSTORE_HISTORY_SAVES changes it.
    static let saves = TestSettings.integer("LOGSTORE_HISTORY_SAVES", default: 1_000_000)

    @Test("1,000,000 saves of updates to 1,000 records compact to about the size of the 1,000 records alone, with identical contents")
    func millionUpdatesCompact() throws {
        try withTemporaryDirectory { directory in
            let model = try CounterModel.make()
            let path = directory + "/history.logstore"
            let store = try Store(path: path, model: model, options: CounterModel.manual)
            let context = store.newContext()
            let counters = try CounterModel.insertCounters(1_000, into: context)
            for save in 1..<Self.saves {
                let counter = counters[save % counters.count]
                counter["value"] = Int64(save)
                counter["note"] = "save \(save)"
                try context.save()
            }
            let historySize = try SystemFile(path: path, mode: .readOnly).sizeAndClose()
            let before = contents(of: store)
            try store.compact()
            store.close()
            let compactedSize = try SystemFile(path: path, mode: .readOnly).sizeAndClose()

            // The same 1,000 final records, saved once into a new store.
            let freshPath = directory + "/fresh.logstore"
            do {
                let fresh = try Store(path: freshPath, model: model, options: CounterModel.manual)
                defer { fresh.close() }
                let freshContext = fresh.newContext()
                for (_, values) in before["Counter", default: [:]].sorted(by: { $0.key < $1.key }) {
                    let counter = try freshContext.insert("Counter")
                    counter["name"] = values[0].string
                    counter["value"] = values[1].int64
                    counter["note"] = values[2].string
                }
                try freshContext.save()
            }
            let freshSize = try SystemFile(path: freshPath, mode: .readOnly).sizeAndClose()
            do {
                let fresh = try Store(path: freshPath, model: model, options: CounterModel.manual)
                defer { fresh.close() }
                try fresh.compact()
            }
            let freshCompactedSize = try SystemFile(path: freshPath, mode: .readOnly).sizeAndClose()
            // The snapshot also carries the index of `name` and each record's
            // key and version, which one save of the records does not. A
            // version 5 file also reserves its anchor pages (FORMAT.md §13.2),
            // 12 KiB of the file's size that are never written (a hole).
            // Each 4 KiB block is compressed alone, so LZ4 finds less to
            // share than in one save's frame: 1.60 measured.
            let anchorPages = try StoreInspector.info(path: path).readVersion >= Int(FileLayout.pagedSnapshotVersion) ? UInt64(FileLayout.pagedFramesStart - FileLayout.headerSize) : 0
            let ratio = Double(compactedSize - anchorPages) / Double(freshSize)
            let compactedRatio = Double(compactedSize) / Double(freshCompactedSize)
            print("long history: \(Self.saves) saves, \(historySize) bytes; compacted \(compactedSize) bytes; the 1,000 records saved once: \(freshSize) bytes (ratio \(String(format: "%.2f", ratio))), and compacted: \(freshCompactedSize) bytes (ratio \(String(format: "%.2f", compactedRatio)))")
            #expect(ratio < 1.7)
            #expect(compactedRatio < 1.2)
            #expect(compactedSize * 20 < historySize)

            let reopened = try Store(path: path, model: model, options: CounterModel.manual)
            defer { reopened.close() }
            #expect(reopened.transactionsReplayed == 0)
            #expect(reopened.recovery.frameCount == 0, "no journal frame before the snapshot is read")
            #expect(contents(of: reopened) == before)
        }
    }
}

extension SystemFile {
    /// The file's size; closes it.
    func sizeAndClose() throws -> UInt64 {
        defer { close() }
        return try size()
    }
}

extension StoredValue {
    /// The value as the app wrote it, for copying a record in a test.
    var string: String? { if case .string(let value) = self { value } else { nil } }
    var int64: Int64? { if case .int64(let value) = self { value } else { nil } }
}
