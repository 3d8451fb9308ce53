// Compaction progress: a redrawn bar on a terminal, plain lines otherwise.

import Foundation
import LogStore

/// Shows a compaction's progress on standard error.
///
/// On a terminal, one line redrawn at most ten times a second:
/// `[#######-------------]  35%  350000/1000000 records  12.0 MiB  110.2 MiB/s  1s left`.
/// Otherwise (a pipe, a log file), a line per stage and per tenth of the
/// records, so that logs stay short and readable.
final class ProgressDisplay {
    private let isTerminal: Bool
    private let started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var lastStage: CompactionStage?
    private var lastTenth = -1
    private var latest: CompactionProgress?

    init(isTerminal: Bool = isatty(STDERR_FILENO) != 0) {
        self.isTerminal = isTerminal
    }

    func update(_ stage: CompactionStage, _ progress: CompactionProgress) {
        latest = progress
        if isTerminal {
            let now = ContinuousClock.now
            if stage == .writingSnapshot, let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
            lastDrawn = now
            // Past the snapshot, the records are all written: the rest is short.
            draw(fraction: stage == .writingSnapshot ? progress.fraction : 1, stage: stage)
        } else {
            let tenth = Int(progress.fraction * 10)
            if stage != lastStage || (stage == .writingSnapshot && tenth > lastTenth) {
                printError("\(Self.name(of: stage)): \(Int(progress.fraction * 100))% (\(progress.records) of \(progress.totalRecords) records, \(formatBytes(progress.rawBytes)))")
            }
            lastTenth = tenth
        }
        lastStage = stage
    }

    /// Ends the bar's line.
    func finish() {
        if isTerminal {
            draw(fraction: 1, stage: .finished)
            FileHandle.standardError.write(Data("\n".utf8))
        }
    }

    private func draw(fraction: Double, stage: CompactionStage) {
        let width = 30
        let filled = Int((fraction * Double(width)).rounded(.down))
        let elapsed = CompactionReport.seconds(ContinuousClock.now - started)
        let records = latest?.records ?? 0, total = latest?.totalRecords ?? 0, bytes = latest?.rawBytes ?? 0
        let rate = elapsed > 0 ? Double(bytes) / elapsed : 0
        var line = "\r[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
        line += String(format: "%3d%%", Int((fraction * 100).rounded(.down)))
        line += "  \(records)/\(total) records  \(formatBytes(bytes))"
        line += "  \(formatBytes(UInt64(rate)))/s"
        if fraction > 0 && fraction < 1 {
            line += String(format: "  %.0fs left", elapsed * (1 - fraction) / fraction)
        } else if stage != .writingSnapshot {
            line += "  \(Self.name(of: stage))"
        }
        // Clear what a longer previous line left.
        FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
    }

    static func name(of stage: CompactionStage) -> String {
        switch stage {
        case .writingSnapshot: "writing snapshot"
        case .copyingJournal: "copying transactions saved meanwhile"
        case .synchronizing: "synchronizing"
        case .renaming: "renaming"
        case .finished: "finished"
        }
    }
}
