// `logstore-tool recover FILE --output NEW`: save everything that still reads.

import ArgumentParser
import LogStore

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a new store with everything of a damaged one that still reads, and report what was lost.",
        discussion: """
            The damaged file is not changed. The new store keeps its identity, so object IDs \
            stay valid, and never gives out a key the damaged store gave out. Damage in the \
            journal keeps every transaction before it. A damaged snapshot block loses only its \
            own records: those of every other block are kept (as inserts in a new journal), then \
            every transaction after the snapshot, minus its changes to the lost records; \
            references to lost records become null. A damaged snapshot index is rebuilt from \
            the blocks (format version 4 on; the recorded model and the store dictionary are \
            lost). The lost records are listed by entity and key range. Exits 0 when nothing \
            was lost, 1 when something was, 3 when nothing can be recovered (a damaged index \
            of a version 2 or 3 file: restore a backup).
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Where to write the new store (must not exist).")
    var output: String

    func run() throws {
        let recovery = try reporting { () throws(LogStoreError) in try StoreInspector.recover(path: common.file, to: output) }
        if common.json {
            try common.emitJSON(recovery)
        } else {
            if let kept = recovery.snapshotRecordsKept {
                print("wrote \(recovery.output): the snapshot is damaged; \(kept) records of its whole blocks and \(recovery.keptTransactions) transactions after it kept")
                for block in recovery.damagedBlocks {
                    // The message names the block, or the index, and where it is.
                    print("damaged: \(block.message)")
                }
                for lost in recovery.lostRecords {
                    let ranges = lost.keys.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
                    // Rebuilt from the blocks, the ranges may hold keys deleted before.
                    let count = lost.isExact ? "\(lost.count)" : "up to \(lost.count)"
                    print("lost: \(count) \(lost.entity) record(s), keys \(ranges.joined(separator: ", "))")
                }
                if recovery.droppedChanges > 0 {
                    print("lost: \(recovery.droppedChanges) later change(s) to those records (\(recovery.droppedTransactions) transaction(s) held nothing else)")
                }
                if recovery.nullifiedReferences > 0 {
                    print("changed: \(recovery.nullifiedReferences) reference(s) to lost records set to null")
                }
            } else {
                let last = recovery.lastKeptSequence.map { "through sequence \($0)" } ?? "with no transactions"
                print("wrote \(recovery.output): \(recovery.keptTransactions) transactions after the snapshot kept, \(last)")
            }
            if let damage = recovery.damage, recovery.snapshotRecordsKept == nil {
                print("lost: \(recovery.lostBytes) bytes from offset \(damage.offset) (frame \(damage.frameNumber): \(damage.message))")
            }
            if recovery.lostTransactions > 0, let first = recovery.firstLostSequence, let last = recovery.lastLostSequence {
                print("lost: \(recovery.lostTransactions) readable transactions after damage in the journal, sequences \(first) to \(last), which cannot be kept without the ones before them")
            }
            if recovery.damage == nil {
                print("nothing lost: the file had no damage")
            }
        }
        if !recovery.isComplete { throw ExitStatus.problemFound }
    }
}
