// FileIO on a POSIX file descriptor, with errors that name the path and errno.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CLogStoreSupport

/// A store file opened with `open(2)`.
///
/// `@unchecked Sendable`: the descriptor is immutable after `init`, and
/// `pread`/`pwrite` on one descriptor are safe from any thread. `close()` is
/// called once, by the owner, after every other use has finished.
final class SystemFile: FileIO, @unchecked Sendable {
    /// The name messages give the file: a compaction renames its new file
    /// over the store while the file is open.
    private let reportedPath: Protected<String>
    var path: String { reportedPath.withLock { $0 } }
    let descriptor: Int32

    /// Opens `path`; `reportingAs` names the file in messages when the path
    /// opened is an alias of it.
    init(path: String, mode: FileOpenMode, reportingAs name: String? = nil) throws(LogStoreError) {
        reportedPath = Protected(name ?? path)
        let flags: Int32
        var permissions: mode_t = 0
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .createExclusive(let mode):
            flags = O_RDWR | O_CREAT | O_EXCL
            permissions = mode
        }
        let fd = Platform.openDescriptor(path, flags, permissions)
        guard fd >= 0 else { throw SystemFile.error(errno, "open", path: name ?? path) }
        descriptor = fd
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(LogStoreError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = retryingOnInterrupt {
                pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n < 0 { throw SystemFile.error(errno, "read", path: path, offset: offset + UInt64(done)) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(LogStoreError) {
        var done = 0
        while done < bytes.count {
            let n = retryingOnInterrupt {
                pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            }
            if n < 0 { throw SystemFile.error(errno, "write", path: path, offset: offset + UInt64(done)) }
            if n == 0 { throw SystemFile.error(EIO, "write", path: path, offset: offset + UInt64(done)) }
            done += n
        }
    }

    func synchronize() throws(LogStoreError) {
        // Not retried on failure: after a failed fsync the kernel may have
        // dropped the dirty pages, so a second fsync can "succeed" without
        // the data being on disk. The caller stops accepting writes instead.
        guard Platform.synchronize(descriptor, metadata: false) == 0 else {
            throw SystemFile.error(errno, Platform.synchronizeCallName(metadata: false), path: path)
        }
    }

    func size() throws(LogStoreError) -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemFile.error(errno, "fstat", path: path) }
        return UInt64(info.st_size)
    }

    func truncate(to size: UInt64) throws(LogStoreError) {
        guard retryingOnInterrupt({ ftruncate(descriptor, off_t(size)) }) == 0 else {
            throw SystemFile.error(errno, "truncate", path: path, offset: size)
        }
    }

    func reserve(_ range: Range<UInt64>) throws(LogStoreError) {
        guard !range.isEmpty else { return }
        #if os(Linux)
        // Returns the error number rather than setting errno.
        var result: Int32
        repeat {
            result = posix_fallocate(descriptor, off_t(range.lowerBound), off_t(range.count))
        } while result == EINTR
        guard result == 0 else { throw SystemFile.error(result, "fallocate", path: path, offset: range.lowerBound) }
        #else
        // Written for, never built or tested: no posix_fallocate here, so
        // the reserved bytes are a hole, which reads as zeros as well.
        try truncate(to: range.upperBound)
        #endif
    }

    /// Closes the file, releasing a writer's lock first. `close` alone would
    /// not release it while a child process forked in the meantime still
    /// holds a copy of the descriptor (between fork and exec, before
    /// O_CLOEXEC closes it): the lock belongs to the open file description,
    /// which `LOCK_UN` releases for every copy.
    func close() {
        _ = flock(descriptor, LOCK_UN)
        Platform.closeDescriptor(descriptor)
    }

    func didMove(to path: String) { reportedPath.withLock { $0 = path } }

    func reopenForReading() throws(LogStoreError) -> any FileIO {
        let reopened = try SystemFile(path: currentPath(), mode: .readOnly, reportingAs: path)
        guard try reopened.identity() == identity() else {
            reopened.close()
            throw LogStoreError(.io, "\(path) was replaced while it was being opened; open the store again", path: path)
        }
        return reopened
    }

    /// A path that names this descriptor's file now, whatever its old path
    /// names: Linux's /proc/self/fd/N, Apple's F_GETPATH. Without either,
    /// the path it was opened at, which the caller checks still names it.
    private func currentPath() -> String {
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        return fcntl(descriptor, F_GETPATH, &buffer) == 0 ? String(cString: buffer) : path
        #else
        let alias = "/proc/self/fd/\(descriptor)"
        return SystemFileSystem().exists(alias) ? alias : path
        #endif
    }

    func lockExclusively() throws(LogStoreError) { try FileLock.lockExclusively(self) }

    func isLockedByWriter() throws(LogStoreError) -> Bool { try FileLock.isLockedByWriter(self) }

    /// The device and inode, to recognise the same file under two paths.
    func identity() throws(LogStoreError) -> FileIdentity {
        var device: UInt64 = 0, inode: UInt64 = 0
        guard logstore_descriptor_identity(descriptor, &device, &inode) == 0 else { throw SystemFile.error(errno, "stat", path: path) }
        return FileIdentity(device: device, inode: inode)
    }

    /// A typed error for a failed system call.
    static func error(_ code: Int32, _ call: String, path: String, offset: UInt64? = nil) -> LogStoreError {
        let reason = String(cString: strerror(code))
        var advice = "check the path, permissions and free space"
        if code == ENOSPC || code == EDQUOT { advice = "free some disk space" }
        if code == EIO { advice = "the device reported an I/O error: check the disk; the store refuses writes until reopened" }
        if code == ENOENT { advice = "check the path" }
        if code == EACCES || code == EPERM { advice = "check the file's permissions" }
        let place = offset.map { " at offset \($0)" } ?? ""
        return LogStoreError(.io, "\(call) failed on \(path)\(place): \(reason) (errno \(code)); \(advice)", path: path, offset: offset, errno: code)
    }
}

/// A file's device and inode numbers.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}

extension FileIdentity {
    /// The identity of the file `path` names, read without its timestamps
    /// (`logstore_path_identity`): a saver checks it before every flush, and
    /// reading a file's timestamps makes its next write slower to flush.
    /// Nil when there is no such file or it cannot be read.
    init?(ofPath path: String) {
        var device: UInt64 = 0, inode: UInt64 = 0
        guard logstore_path_identity(path, &device, &inode) == 0 else { return nil }
        self.init(device: device, inode: inode)
    }
}
