// Where the systems LogStore's I/O runs on differ (Linux with glibc or musl,
// Apple's Darwin), each difference in one place.
//
// Built and tested on Linux with glibc only; the musl and Darwin branches
// follow those systems' manuals but have never been compiled (README.md).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls LogStore's I/O types make where their own methods of
/// the same name (`open`, `close`, `rename`, `link`) would shadow the C
/// function, and the calls whose meaning differs between systems.
enum Platform {
    /// Makes what was written to `descriptor` durable: on Linux
    /// `fdatasync`, or `fsync` with `metadata` (the inode's mode, owner
    /// and attributes too). Apple's `fsync` leaves data in the drive's
    /// cache, where a power cut loses it, so there `F_FULLFSYNC`, with
    /// `fsync` where the file system does not support it. Returns 0, or -1
    /// with `errno` set.
    static func synchronize(_ descriptor: Int32, metadata: Bool) -> Int32 {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        guard errno == ENOTSUP || errno == EINVAL || errno == ENOTTY else { return -1 }
        return fsync(descriptor)
        #else
        return metadata ? fsync(descriptor) : fdatasync(descriptor)
        #endif
    }

    /// The name of the call ``synchronize(_:metadata:)`` makes, for messages.
    static func synchronizeCallName(metadata: Bool) -> String {
        #if canImport(Darwin)
        "fcntl(F_FULLFSYNC)"
        #else
        metadata ? "fsync" : "fdatasync"
        #endif
    }

    /// This process's ID.
    static var processID: Int32 { getpid() }

    /// Whether process `pid` has ended: false for a running process, one
    /// this process may not signal (another user's), and a zombie not yet
    /// reaped, since its files may still be in use.
    static func hasEnded(_ pid: Int32) -> Bool {
        pid > 0 && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// `open(2)` with `O_CLOEXEC` (a child process must not inherit a
    /// store's descriptor, and with it the writer's lock), retried when a
    /// signal interrupts it.
    static func openDescriptor(_ path: String, _ flags: Int32, _ permissions: mode_t) -> Int32 {
        retryingOnInterrupt { systemOpen(path, flags | O_CLOEXEC, permissions) }
    }

    /// `close(2)`; its error is of no use once the descriptor is given up.
    static func closeDescriptor(_ descriptor: Int32) { _ = systemClose(descriptor) }

    /// `rename(2)`: 0, or -1 with `errno` set.
    static func rename(_ source: String, _ destination: String) -> Int32 { systemRename(source, destination) }

    /// `link(2)`: 0, or -1 with `errno` set.
    static func link(_ source: String, _ destination: String) -> Int32 { systemLink(source, destination) }
}

// Outside `Platform`, whose methods of the same names would hide them.
private func systemOpen(_ path: String, _ flags: Int32, _ permissions: mode_t) -> Int32 { open(path, flags, permissions) }
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func systemLink(_ source: String, _ destination: String) -> Int32 { link(source, destination) }

/// Calls `call` again while it fails with `EINTR`.
@inline(__always)
func retryingOnInterrupt<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}
