// Without libFuzzer, each fuzz executable replays files: to reproduce a
// crash under a debugger, or to check a corpus by hand.

import Foundation

/// Runs the files (or every file in the directories) named on the command
/// line through the target named first, or writes that target's seeds.
public enum FuzzReplay {
    public static func run() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let program = CommandLine.arguments[0]
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count >= 2 else {
            print("""
                usage: \(program) TARGET FILE|DIRECTORY...        replay each input through TARGET
                       \(program) TARGET --write-seeds DIRECTORY  write TARGET's seed corpus
                TARGET is one of \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))
                scripts/fuzz builds this program with libFuzzer and fuzzes each target
                """)
            exit(2)
        }
        let paths = arguments.dropFirst()
        if paths.first == "--write-seeds", paths.count == 2 {
            do {
                let count = try FuzzSeeds.write(target, to: paths.last!)
                print("\(target.rawValue): wrote \(count) seeds to \(paths.last!)")
                exit(0)
            } catch {
                print("cannot write the seeds: \(error)")
                exit(1)
            }
        }
        var count = 0
        for path in paths {
            for file in inputs(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    print("cannot read \(file)")
                    exit(1)
                }
                data.withUnsafeBytes { target.run($0) }
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs replayed, none crashed")
    }

    /// The file at `path`, or the files in the directory at `path`, sorted.
    public static func inputs(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
    }
}
