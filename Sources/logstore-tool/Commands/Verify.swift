// `logstore-tool verify FILE`: check every frame; exit 1 with offsets on damage.

import ArgumentParser
import LogStore

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every frame of a store: checksums, sizes, sequence numbers and payloads.",
        discussion: """
            Exits 0 when the file is good; 1 when it is damaged, listing each problem with its \
            offset, or ends in an interrupted save (never acknowledged; the next read-write open \
            cuts it off); 3 when it cannot be opened.
            """)

    @OptionGroup var common: CommonOptions

    func run() throws {
        let report: VerificationReport
        do {
            report = try StoreInspector.verify(path: common.file)
        } catch {
            throw ExitStatus.report(error)
        }
        if common.json {
            try common.emitJSON(report)
        } else {
            for problem in report.problems {
                print("damage: frame \(problem.frameNumber) at offset \(problem.offset): \(problem.message)")
            }
            for note in report.notes { print("note: \(note)") }
            var verdict = report.isValid ? "ok" : "\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") found"
            if report.isValid, let torn = report.interruptedSave { verdict = "interrupted save at offset \(torn.offset)" }
            print("\(report.path): \(report.validFrames) valid frames, \(report.bytesChecked) bytes checked: \(verdict)")
        }
        if !report.isValid || report.interruptedSave != nil { throw ExitStatus.problemFound }
    }
}
