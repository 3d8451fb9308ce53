// `logstore-tool compact FILE`: fold the journal into a new snapshot.

import ArgumentParser
import Foundation
import LogStore

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compact a store: write its live records into a new snapshot and drop the history before it.",
        discussion: """
            Shows a progress bar on a terminal and plain lines otherwise (on standard error), \
            then the sizes before and after. Refuses (exit 4) while another process has the \
            store open: close the app, or let it compact the store itself. Does not start \
            (exit 5, saying how much space it needs) when the disk has too little free space \
            for the new file. A compaction that fails or is interrupted leaves the store as it \
            was. The compacted file keeps the store's mode, owner, group and extended \
            attributes; only root can keep an owner other than the user running the tool (that \
            user then owns it, with the store's group and mode).
            """)

    @OptionGroup var common: CommonOptions

    func run() throws {
        // The tool writes through a symbolic link only saying so.
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: common.file) {
            FileHandle.standardError.write(Data("note: \(common.file) is a symbolic link to \(target); compacting that file, and the link stays as it is\n".utf8))
        }
        let store = try openStore(common.file, writing: true)
        defer { store.close() }
        let display = ProgressDisplay()
        let report = try reporting { () throws(LogStoreError) in
            try store.compact { stage, progress in display.update(stage, progress) }
        }
        display.finish()
        let seconds = CompactionReport.seconds(report.duration)
        if common.json {
            try common.emitJSON(report)
        } else {
            print("compacted \(common.file): \(formatBytes(report.bytesBefore)) before, \(formatBytes(report.bytesAfter)) after; \(report.records) records through sequence \(report.sequence) in \(String(format: "%.2f", seconds)) s")
        }
    }
}
