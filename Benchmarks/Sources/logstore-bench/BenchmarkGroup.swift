// What every benchmark group is given and gives back.

import Foundation

/// One group of measurements, a file of its own; `--only` selects it by name.
protocol BenchmarkGroup {
    /// The name `--only` takes and the report shows.
    static var name: String { get }
    static func run(in context: BenchmarkContext) throws -> GroupReport
}

/// The run's settings and shared inputs.
struct BenchmarkContext {
    let quick: Bool
    let scratch: ScratchDirectory
    let corpus: TextCorpus

    /// Odd, so the median is one of the runs.
    var repetitions: Int { quick ? 3 : 5 }

    /// `full` in a full run, `quick` in a quick one.
    func scaled<T>(full: T, quick: T) -> T { self.quick ? quick : full }

    /// Progress for whoever watches: stderr, so `--json` output stays one document.
    func log(_ message: String) {
        FileHandle.standardError.write(Data("[logstore-bench] \(message)\n".utf8))
    }
}
