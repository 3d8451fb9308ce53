// `logstore-tool recover FILE --output NEW`: save what precedes the damage.

import ArgumentParser
import LogStore

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a new store with every transaction before the first damage, and report what was lost.",
        discussion: """
            The damaged file is not changed. The new store keeps its identity, so object IDs \
            stay valid. When a snapshot block is damaged, the records of the blocks before it \
            are kept (as inserts in a new journal) and the rest is listed as lost. Exits 0 when \
            nothing was lost, 1 when something was, 3 when the snapshot's index is damaged \
            (nothing usable precedes it: restore a backup).
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
                print("wrote \(recovery.output): the snapshot is damaged; the \(kept) records of the blocks before the damage were kept (\(recovery.snapshotRecordsLost ?? 0) records from the damaged block on were lost)")
            } else {
                let last = recovery.lastKeptSequence.map { "through sequence \($0)" } ?? "with no transactions"
                print("wrote \(recovery.output): \(recovery.keptTransactions) transactions after the snapshot kept, \(last)")
            }
            if let damage = recovery.damage {
                print("lost: \(recovery.lostBytes) bytes from offset \(damage.offset) (frame \(damage.frameNumber): \(damage.message))")
                if recovery.lostTransactions > 0, let first = recovery.firstLostSequence, let last = recovery.lastLostSequence {
                    print("lost: \(recovery.lostTransactions) readable transactions after the damage, sequences \(first) to \(last), which cannot be kept without the ones before them")
                }
            } else {
                print("nothing lost: the file had no damage")
            }
        }
        if !recovery.isComplete { throw ExitStatus.problemFound }
    }
}
