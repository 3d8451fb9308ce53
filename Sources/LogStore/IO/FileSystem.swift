// The file-system operations around the store file, behind the same seam as
// the file's own reads and writes.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CLogStoreSupport

/// How ``FileSystem/open(_:_:)`` opens a file.
enum FileOpenMode: Sendable, Hashable {
    case readOnly
    case readWrite
    /// Create a new file with these permissions, failing if one exists.
    case createExclusive(permissions: mode_t)
}

/// Everything LogStore does to the file system besides reading and writing
/// an open file (that is ``FileIO``): opening and creating files, renames
/// and links, removing, fsyncing a directory, and asking what a path names.
///
/// The journal, the snapshot and compaction go through it, so a test can
/// fail any call or cut the power between any two of them (the test
/// implementation lives with the tests); ``SystemFileSystem`` makes the
/// system calls.
protocol FileSystem: Sendable {
    /// Opens `path`; the file reports itself as `reportingAs` when given.
    func open(_ path: String, _ mode: FileOpenMode, reportingAs name: String?) throws(LogStoreError) -> any FileIO
    /// Whether `path` names anything.
    func exists(_ path: String) -> Bool
    /// The device and inode `path` names now, nil when nothing.
    func identity(ofPath path: String) -> FileIdentity?
    /// Renames `source` over `destination`, atomically.
    func rename(_ source: String, to destination: String) throws(LogStoreError)
    /// Makes `destination` a second name of `source`; false when
    /// `destination` already exists (another creator won).
    func link(_ source: String, to destination: String) throws(LogStoreError) -> Bool
    /// Removes `path` if it exists.
    func remove(_ path: String)
    /// fsyncs the directory holding `path`, so a create, link or rename in
    /// it survives a power cut.
    func synchronizeDirectory(of path: String) throws(LogStoreError)
    /// Gives `file` the mode, owner, group and extended attributes (ACLs,
    /// security labels, an app's own) of `original`, durably, so the file
    /// a compaction renames over a store is open to whoever the store was.
    ///
    /// As far as this process may: only a privileged process (root) gives
    /// a file away, so run by another user `file` stays that user's, with
    /// the old group if the user belongs to it and the old mode; whoever
    /// reached the store through its group or its mode still does. An
    /// attribute the process may not read or set is left out.
    func copyOwnership(from original: any FileIO, to file: any FileIO) throws(LogStoreError)
    /// The names in `directory`, or none when it cannot be read.
    func names(inDirectory directory: String) -> [String]
    /// The file `path` names when it is a symbolic link, else `path`: a
    /// compaction renames its new file over the real file, never over a
    /// link (which would turn the link into a copy and strand the file).
    func resolvingSymbolicLink(_ path: String) -> String
    /// The bytes an unprivileged process may still write on the file
    /// system holding `path`; nil when the system cannot tell.
    func freeSpace(at path: String) -> UInt64?
}

extension FileSystem {
    func open(_ path: String, _ mode: FileOpenMode) throws(LogStoreError) -> any FileIO {
        try open(path, mode, reportingAs: nil)
    }

    /// Throws `.storeReplaced` unless the store's path (the name `file`
    /// reports) still names `file`, whose identity is `identity` when the
    /// caller knows it.
    ///
    /// A store file removed, renamed or replaced by another process while
    /// open keeps taking writes, but no one opening the store reads them:
    /// a second writer would even make a new store under the name. The
    /// journal checks before it makes frames durable and, without fsync,
    /// every millisecond of writes (``JournalWriter``); a compaction before
    /// it starts and before its rename.
    func checkStillNamed(_ file: any FileIO, identity known: FileIdentity? = nil) throws(LogStoreError) {
        let path = file.path
        let own: FileIdentity
        if let known { own = known } else { own = try file.identity() }
        guard let named = identity(ofPath: path), named == own else {
            throw LogStoreError(.storeReplaced, "\(path) no longer names the store file this store has open: another process removed, renamed or replaced it. Nothing more is written, since no one opening \(path) would read it, and saves not yet acknowledged were not made; what was saved before is in the open file. Close the store, give the file its name back if it is kept elsewhere, and open it again", path: path)
        }
    }
}

/// The file system through system calls.
struct SystemFileSystem: FileSystem {
    func open(_ path: String, _ mode: FileOpenMode, reportingAs name: String?) throws(LogStoreError) -> any FileIO {
        try SystemFile(path: path, mode: mode, reportingAs: name)
    }

    func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    func identity(ofPath path: String) -> FileIdentity? {
        FileIdentity(ofPath: path)
    }

    func rename(_ source: String, to destination: String) throws(LogStoreError) {
        guard Platform.rename(source, destination) == 0 else { throw SystemFile.error(errno, "rename", path: source) }
    }

    func link(_ source: String, to destination: String) throws(LogStoreError) -> Bool {
        if Platform.link(source, destination) == 0 { return true }
        let code = errno
        if code == EEXIST { return false }
        throw SystemFile.error(code, "link", path: destination)
    }

    func remove(_ path: String) { unlink(path) }

    func synchronizeDirectory(of path: String) throws(LogStoreError) {
        let directory = Self.parentDirectory(of: path)
        let fd = Platform.openDescriptor(directory, O_RDONLY | O_DIRECTORY, 0)
        guard fd >= 0 else { throw SystemFile.error(errno, "open directory", path: directory) }
        defer { Platform.closeDescriptor(fd) }
        guard Platform.synchronize(fd, metadata: true) == 0 else {
            throw SystemFile.error(errno, Platform.synchronizeCallName(metadata: true) + " directory", path: directory)
        }
    }

    func resolvingSymbolicLink(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    func freeSpace(at path: String) -> UInt64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        // Blocks free to unprivileged users (f_bavail, not f_bfree: the
        // blocks reserved for root are not ours to fill), in fragment size.
        let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        return overflow ? .max : bytes
    }

    func names(inDirectory directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        // The name is read in place up to its NUL: readdir's record is only
        // as long as its name (d_reclen), so copying the whole d_name array
        // would read past it.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(stream) {
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The directory part of `path`: "." for a bare name, "/" for "/name".
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }
}

extension LogStoreError {
    /// Whether this is a system call's report that the disk, or the user's
    /// quota on it, is full (ENOSPC, EDQUOT): a write that failed so left
    /// nothing that cutting the file back does not undo.
    var isOutOfSpace: Bool { kind == .io && (errno == ENOSPC || errno == EDQUOT) }
}
