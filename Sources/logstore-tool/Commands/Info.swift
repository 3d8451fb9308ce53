// `logstore-tool info FILE`: header, sizes, record counts, compaction.

import ArgumentParser
import Foundation
import LogStore

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's format, identity, sizes, record counts and compression.")

    @OptionGroup var common: CommonOptions

    /// `info --json`'s result: the file facts, and what the records say.
    struct Result: Encodable {
        var file: StoreInfo
        /// Live records per entity (absent for a file with no recorded model).
        var records: [String: Int]?
        /// Whether the default compaction policy would compact the store now.
        var compactionDue: Bool?
    }

    func run() throws {
        let info = try reporting { () throws(LogStoreError) in try StoreInspector.info(path: common.file) }
        var result = Result(file: info)
        // A file written with the Journal API alone has frames but no model.
        if info.damage == nil, let store = try? Store(recordedModelAt: common.file, options: JournalOptions(access: .readOnly, createIfMissing: false)) {
            let context = store.newContext()
            result.records = Dictionary(uniqueKeysWithValues: store.model.entities.map { ($0.name, (try? context.count($0.name)) ?? 0) })
            result.compactionDue = store.isCompactionDue
            store.close()
        }
        if common.json {
            try common.emitJSON(result)
            return
        }
        let formatter = ISO8601DateFormatter()
        print("""
            file:              \(info.path)
            format version:    \(info.writeVersion) (readable by version \(info.readVersion) and later)
            store UUID:        \(info.storeID.uuidString)
            created:           \(formatter.string(from: info.createdAt))
            file size:         \(formatBytes(info.fileSize)) (\(info.fileSize) bytes)
            """)
        if info.isReplaced {
            print("replaced:          a compaction or salvage renamed a new file over this one; the store went on there, and this file can only be read")
        }
        if let snapshot = info.snapshot {
            print("snapshot:          \(formatBytes(snapshot.storedBytes)) through sequence \(snapshot.sequence), \(snapshot.blocks) blocks, \(formatBytes(snapshot.rawBytes)) of records raw")
            if info.readVersion >= 5 {
                print("snapshot index:    \(formatBytes(snapshot.indexRawBytes)) raw (\(formatBytes(snapshot.indexStoredBytes)) stored) in \(snapshot.indexFrames) frames: index blocks, catalog and root")
            } else {
                print("snapshot index:    \(formatBytes(snapshot.indexRawBytes)) raw (\(formatBytes(snapshot.indexStoredBytes)) stored) of the 256 MiB a frame may hold")
            }
        } else {
            print("snapshot:          none (never compacted)")
        }
        print("""
            journal:           \(formatBytes(info.journalBytes)) in \(info.frameCount) transaction\(info.frameCount == 1 ? "" : "s") after the \(info.snapshot == nil ? (info.readVersion >= 5 ? "header and anchor pages" : "header") : "snapshot")
            sequence numbers:  \(info.firstSequence.map { "\($0) to \(info.lastSequence ?? $0)" } ?? "none after the snapshot")
            last commit:       \(info.lastCommitAt.map { formatter.string(from: $0) } ?? "never")
            journal payload:   \(formatBytes(info.rawPayloadBytes)) raw, \(formatBytes(info.storedPayloadBytes)) stored (compression ratio \(String(format: "%.2f", info.compressionRatio)))
            """)
        if let records = result.records {
            let total = records.values.reduce(0, +)
            print("records:           \(total) (\(records.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))")
        }
        if let due = result.compactionDue {
            print("compaction due:    \(due ? "yes (run \"logstore-tool compact\", or let the app compact it)" : "no")")
        }
        if let damage = info.damage {
            print("damage:            \(damage) (run \"logstore-tool verify\")")
        } else if info.unreadableTailBytes > 0 {
            print("interrupted save:  \(info.unreadableTailBytes) bytes at the end (cut off at the next read-write open)")
        }
        if info.reservedBytes > 0 {
            print("reserved space:    \(info.reservedBytes) zero bytes at the end, for the next saves (a writer has the store open, or did not close it)")
        }
    }
}
