// The exclusive advisory lock a writer holds on its store file.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Takes the writer's lock on an open store file.
///
/// `flock(2)` locks belong to an open file description, so a second `Journal`
/// in the same process conflicts exactly like one in another process (POSIX
/// `fcntl` locks would not, and closing any descriptor of the file would drop
/// them). The lock goes away when the descriptor is closed, including when
/// the process dies, so a crash never leaves a store locked.
enum FileLock {
    /// How long a writer's open waits out readers' test locks
    /// (``isLockedByWriter(_:)``), each held for the length of two system calls.
    static let readerProbePatience: Duration = .milliseconds(200)

    static func lockExclusively(_ file: SystemFile) throws(LogStoreError) {
        let deadline = ContinuousClock.now.advanced(by: readerProbePatience)
        var holder: Int32?
        while true {
            if retryingOnInterrupt({ flock(file.descriptor, LOCK_EX | LOCK_NB) }) == 0 { return }
            let code = errno
            guard code == EWOULDBLOCK else { throw SystemFile.error(code, "flock", path: file.path) }
            // A writer holds an exclusive lock; a reader testing for one, a
            // shared lock for an instant. Only the writer is a conflict.
            holder = (try? file.identity()).flatMap { holderProcess(of: $0) }
            guard holder == nil, ContinuousClock.now < deadline else { break }
            usleep(500)
        }
        let who: String
        switch holder {
        case Platform.processID: who = "this process (it is already open for writing here)"
        case let pid?: who = "process \(pid)"
        case nil: who = "another process"
        }
        throw LogStoreError(.storeLocked, "\(file.path) is locked by \(who); close the other writer first, or open read-only", path: file.path)
    }

    /// Whether a writer holds the file's lock: a shared lock is refused
    /// while one does. The shared lock is let go at once; a writer whose
    /// open meets it waits for it (``lockExclusively(_:)``). The reader's
    /// own descriptor takes it, so it conflicts with a writer in this
    /// process as with one in another.
    static func isLockedByWriter(_ file: SystemFile) throws(LogStoreError) -> Bool {
        if retryingOnInterrupt({ flock(file.descriptor, LOCK_SH | LOCK_NB) }) == 0 {
            _ = flock(file.descriptor, LOCK_UN)
            return false
        }
        let code = errno
        guard code == EWOULDBLOCK else { throw SystemFile.error(code, "flock", path: file.path) }
        return true
    }

    /// The process holding a `flock` on the file, read from /proc/locks
    /// where the system has it (Linux), else nil: Apple's systems have no
    /// way to ask who holds a `flock`, so the message says "another process".
    static func holderProcess(of identity: FileIdentity) -> Int32? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF": pid, then major:minor:inode.
        // glibc's gnu_dev_major / gnu_dev_minor.
        let major = ((identity.device >> 8) & 0xFFF) | ((identity.device >> 32) & 0xFFFF_F000)
        let minor = (identity.device & 0xFF) | ((identity.device >> 12) & 0xFFFF_FF00)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE" else { continue }
            let parts = fields[5].split(separator: ":")
            guard parts.count == 3,
                  UInt64(parts[0], radix: 16) == major, UInt64(parts[1], radix: 16) == minor,
                  UInt64(parts[2]) == identity.inode else { continue }
            return Int32(fields[4])
        }
        return nil
        #else
        return nil
        #endif
    }
}
