// The files a store's writers put beside it while they work, named
// PATH.<kind>-<PID>, and the removal of those whose process died.

/// A kind of temporary file beside a store, named `PATH.<kind>-<PID>` after
/// the process that writes it.
///
/// A process that dies while it writes one leaves it behind, so every
/// read-write open removes those of processes that have ended. A file of a
/// running process stays, even one whose ID is this process's: it may be
/// in use, and this process's own next creation or compaction replaces it.
enum TemporaryFile: String, CaseIterable, Sendable {
    /// A new store's header, fsynced, then linked into place as the store.
    /// Left behind after the link, it is a second name of the store, and
    /// would keep the whole file on disk after a compaction replaced it.
    case creating
    /// A compaction's new file, renamed over the store once complete.
    case compacting
    /// A salvaged store written by an open with `.salvage`, renamed over
    /// the damaged one once complete.
    case salvaging
    /// A store `recover` writes, linked to the name it was asked for once
    /// complete. Left behind after the link, it is a second name of it.
    case recovering

    /// This process's file of this kind beside the store at `path`.
    func path(beside path: String) -> String { "\(path).\(rawValue)-\(Platform.processID)" }

    /// Removes the temporary files of every kind beside `path` whose
    /// process has ended; the caller holds the store's writer lock.
    static func removeAbandoned(beside path: String, on fileSystem: any FileSystem) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let directory = SystemFileSystem.parentDirectory(of: path)
        for entry in fileSystem.names(inDirectory: directory) {
            guard let pid = processID(in: entry, storeName: name), Platform.hasEnded(pid) else { continue }
            fileSystem.remove(directory + "/" + entry)
        }
    }

    /// The process ID in `entry` when it names a temporary file of any
    /// kind of the store named `storeName`.
    private static func processID(in entry: String, storeName: String) -> Int32? {
        for kind in allCases {
            let prefix = "\(storeName).\(kind.rawValue)-"
            if entry.hasPrefix(prefix) { return Int32(entry.dropFirst(prefix.count)) }
        }
        return nil
    }
}
