// The directory the benchmark files live in for one run.

import Foundation
import LogStore

/// A new directory for this run's files, removed with everything in it at
/// the end. It is made inside the directory given with `--directory`, or
/// in /tmp, so the files are on that filesystem.
final class ScratchDirectory {
    let path: String

    init(inside parent: String) throws {
        var template = Array("\(parent)/logstore-bench.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchmarkError.system("mkdtemp", parent) }
        path = String(cString: made)
    }

    /// The path of file `name` in this directory, with no file there yet.
    func freshPath(_ name: String) -> String {
        let file = "\(path)/\(name)"
        unlink(file)
        return file
    }

    /// A new, empty journal with the given durability.
    func freshJournal(_ name: String, durability: Durability, compression: JournalOptions.Compression = .lz4) throws -> Journal {
        try Journal(path: freshPath(name), options: JournalOptions(durability: durability, compression: compression))
    }

    func remove(_ file: String) { unlink(file) }

    func removeAll() { try? FileManager.default.removeItem(atPath: path) }
}
