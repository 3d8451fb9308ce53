// The file operations the journal performs, behind one seam tests can break.

/// The operations LogStore performs on an open store file.
///
/// The journal, the snapshot and compaction do all their I/O on a file
/// through this protocol (and everything else through ``FileSystem``), so
/// tests can fail any call (EIO, ENOSPC, a short write) and check that
/// nothing is acknowledged that was not written. ``SystemFile`` is the real
/// implementation.
///
/// Implementations are safe to call from several threads at once for
/// `read`; `write`, `synchronize` and `truncate` are called by one writer
/// at a time.
protocol FileIO: AnyObject, Sendable {
    /// The path the file was opened at, for messages, until ``didMove(to:)``.
    var path: String { get }
    /// The file is now named `path` (a compaction renamed its new file over
    /// the store): messages name it from now on.
    func didMove(to path: String)
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read
    /// (fewer only at the end of the file), which are the first ones of
    /// `buffer`. Callers keep only those: the rest of `buffer` may be
    /// uninitialized memory.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(LogStoreError) -> Int
    /// Writes all of `bytes` at `offset`, or throws.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(LogStoreError)
    /// Makes everything written so far durable (fdatasync).
    func synchronize() throws(LogStoreError)
    /// The file's current size.
    func size() throws(LogStoreError) -> UInt64
    /// Cuts the file to `size` bytes.
    func truncate(to size: UInt64) throws(LogStoreError)
    /// Allocates the bytes `range` of the file (`posix_fallocate`), which
    /// starts where the caller knows the file ends, and extends the file to
    /// its end: the added bytes read as zeros, and a later write inside them
    /// does not change the file's size, so the `fdatasync` after it need not
    /// commit one (FORMAT.md §7, *Reserved space*). Takes the range rather
    /// than asking the file's size: a `stat` would read its timestamps,
    /// which slows the next flush (`FileIdentity`).
    func reserve(_ range: Range<UInt64>) throws(LogStoreError)
    /// Closes the file; later calls fail.
    func close()
    /// Takes the writer's exclusive lock on the file, or throws
    /// `.storeLocked` naming who holds it.
    func lockExclusively() throws(LogStoreError)
    /// Whether a writer holds the file's lock now, tested without keeping
    /// any lock and without making a writer's ``lockExclusively()`` fail.
    func isLockedByWriter() throws(LogStoreError) -> Bool
    /// The file's device and inode, to tell whether a path still names it.
    func identity() throws(LogStoreError) -> FileIdentity
    /// A second, read-only descriptor of the same file (the same inode, even
    /// once another file was renamed over its path), with a life of its own:
    /// a snapshot reads its blocks through one, so that closing or replacing
    /// the journal's descriptor never pulls a file out from under a reader.
    func reopenForReading() throws(LogStoreError) -> any FileIO
}

extension FileIO {
    /// Reads exactly `count` bytes at `offset`, or fewer at the end of the file.
    func read(count: Int, at offset: UInt64) throws(LogStoreError) -> [UInt8] {
        // Not zeroed first: only the bytes read are kept, and zeroing a
        // block's buffer cost a lookup as much as checksumming it.
        var failure: LogStoreError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(LogStoreError) {
                initialized = try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Copies the bytes `range` of this file to `destination`, starting at
    /// `offset` there, in chunks of a few MiB; throws if the file ends first.
    func copy(_ range: Range<UInt64>, to destination: any FileIO, at offset: UInt64) throws(LogStoreError) {
        var position = range.lowerBound
        while position < range.upperBound {
            let chunk = try read(count: Int(min(UInt64(4 << 20), range.upperBound - position)), at: position)
            guard !chunk.isEmpty else {
                throw LogStoreError(.io, "\(path) ended at offset \(position) while bytes up to \(range.upperBound) were being copied from it", path: path, offset: position)
            }
            try chunk.withBytes { (raw) throws(LogStoreError) in try destination.write(raw, at: offset + position - range.lowerBound) }
            position += UInt64(chunk.count)
        }
    }
}
