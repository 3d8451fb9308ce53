// The baseline: a file written with bare system calls.

import Foundation

/// A file written with `pwrite(2)` and flushed with `fdatasync(2)`: what
/// LogStore's appends cost at the least, measured beside them.
final class PlainFile {
    let path: String
    private let descriptor: Int32
    private(set) var size: UInt64 = 0

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BenchmarkError.system("open", path) }
    }

    deinit { close(descriptor) }

    /// Writes `bytes` at the end of the file.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(size) + off_t(done))
            guard written > 0 else { throw BenchmarkError.system("pwrite", path) }
            done += written
        }
        size += UInt64(bytes.count)
    }

    /// Makes the next write land at the start of the file again, over
    /// what is written there.
    func rewind() { size = 0 }

    func synchronize() throws {
        guard fdatasync(descriptor) == 0 else { throw BenchmarkError.system("fdatasync", path) }
    }
}

/// Flushes a file someone else wrote, so its writeback is over before a
/// measurement starts.
func synchronizeFile(at path: String) throws {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw BenchmarkError.system("open", path) }
    defer { close(descriptor) }
    guard fsync(descriptor) == 0 else { throw BenchmarkError.system("fsync", path) }
}

/// Reads the file at `path` from start to end in `chunkSize` reads, as the
/// journal's scanner does, and returns the bytes read: the floor under open.
func readSequentially(_ path: String, chunkSize: Int = 4 << 20) throws -> Int {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw BenchmarkError.system("open", path) }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: chunkSize)
    var total = 0
    while true {
        let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, chunkSize, off_t(total)) }
        guard got >= 0 else { throw BenchmarkError.system("pread", path) }
        if got == 0 { return total }
        total += got
    }
}
