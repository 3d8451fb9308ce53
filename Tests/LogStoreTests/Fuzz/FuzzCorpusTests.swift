// The fuzz targets' seed corpus and every input that once crashed one,
// replayed through the same functions libFuzzer calls: a crash found by
// fuzzing stays fixed, and the corpus stays meaningful as the format moves.

import Foundation
import LogStoreFuzzTargets
import Testing

@Suite("Fuzz corpus and regressions")
struct FuzzCorpusTests {
    @Test("Every seed and regression input runs through its target without a crash", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        let seeds = FuzzReplay.inputs(at: PackageRoot.path(target.corpusDirectory))
        let regressions = FuzzReplay.inputs(at: PackageRoot.path(target.regressionsDirectory))
        // An empty corpus would make this pass without testing anything.
        #expect(seeds.count >= 10, "\(target.corpusDirectory) holds \(seeds.count) inputs")
        for file in seeds + regressions {
            let data = try #require(FileManager.default.contents(atPath: file), "cannot read \(file)")
            data.withUnsafeBytes { target.run($0) }
        }
    }
}
