// Appends transaction frames: encode, compress, checksum, write, and make durable.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// The single writer of a store file.
///
/// `@unchecked Sendable`: every mutable property is read and written only
/// while `monitor` is locked. Encoding happens under the lock too, so frames
/// get consecutive sequence numbers in file order and each frame declares
/// exactly the names no earlier frame declared.
final class JournalWriter: @unchecked Sendable {
    /// Where the transactions start in the current file; a compaction
    /// replaces it, and the file with it.
    private var origin: TailOrigin
    private var file: any FileIO { origin.file }
    private let durability: Durability
    /// Where the store's path is checked to still name the file.
    private let fileSystem: any FileSystem
    /// The identity of the file, which the store's path must still name
    /// when frames are made durable (``checkName()``); nil if `fstat` failed.
    private var fileIdentity: FileIdentity?
    /// When writes without fsync last found the path naming the file.
    private var nameCheckedAt = ContinuousClock.now
    /// How often writes without fsync check the path: the check is a
    /// `stat(2)`, which costs more than writing a small frame, and this
    /// mode promises nothing of the disk anyway. Flushes check every time.
    static let nameCheckInterval: Duration = .milliseconds(1)
    /// Nil when the journal stores payloads uncompressed.
    private let compressor: LZ4.Compressor?
    private let monitor = Monitor()
    /// Followers wait here for the flush under way to finish.
    private let flushed: Monitor.Condition
    /// A gathering leader waits here for more frames.
    private let frameWritten: Monitor.Condition

    private var endOffset: UInt64
    /// The file's size as far as this writer knows: `endOffset`, or more
    /// where it reserved space ahead of its frames, or found some reserved.
    /// A read-only journal's is its `endOffset`: it never changes the file.
    private var reservedEnd: UInt64
    /// How far ahead of a frame that outgrows the reservation the next
    /// reservation reaches; 0 for none (``JournalOptions/preallocationSize``).
    private let preallocationSize: UInt64
    /// After a reservation failed, the next is tried only for a frame that
    /// ends past here, so that a disk that stays full or a file system
    /// without allocation costs one failed call per `preallocationSize`
    /// bytes written, not one per save.
    private var nextReservationEnd: UInt64 = 0
    private var nextSequence: UInt64
    private var symbols: SymbolTable
    /// The first error after which the file may not hold what the writer
    /// believes (a failed fsync, a write failure other than a full disk);
    /// once set, every append is refused until the store is reopened.
    private var failure: LogStoreError?
    /// `close()` began: appends are refused and a gathering leader stops.
    private var isClosing = false
    /// The file is closed: nothing may use it again, since its descriptor
    /// number may belong to another file by now.
    private var isClosed = false

    // Group commit: frames up to `writtenSequence` are written, those up to
    // `syncedSequence` are durable, and one committer at a time flushes.
    private var writtenSequence: UInt64
    private var syncedSequence: UInt64
    /// Where the frames the last successful fsync covered end.
    private var syncedEnd: UInt64
    private var isSyncing = false
    /// A leader is waiting for more frames before its flush; writers wake it.
    private var isGathering = false
    /// How many frames the last flush covered: the leader expects about as
    /// many committers again, so it stops gathering once that many are in.
    private var lastBatchSize: UInt64 = 1
    /// Committers between entering `append` and writing their frame; a
    /// gathering leader waits for them too. Atomic, because they count
    /// themselves before they can take the lock.
    private let arriving = Atomic<Int>(0)

    // The store dictionary (FORMAT.md §5.3): small payloads compress poorly
    // alone (BENCHMARKS.md §4), so once enough of them were written, the next
    // frame carries their bytes as a dictionary for the ones after it.
    /// The dictionary in force, from the file or from this writer.
    private var dictionary: LZ4.PresetDictionary?
    /// Raw payloads of small frames written while there is no dictionary.
    private var dictionarySamples: [UInt8] = []
    /// Payloads up to this size are compressed against the dictionary;
    /// larger ones compress well enough alone.
    static let dictionaryPayloadLimit = 1 << 10
    /// The dictionary's size: the last this many bytes of small payloads.
    static let dictionarySize = 4 << 10

    /// The payload and frame being written, reused from save to save.
    private var rawBuffer = ByteWriter(capacity: 4096)
    private var frameBuffer = ByteWriter(capacity: 4096)
    /// The buffers are kept up to this capacity; a larger save's are let go
    /// once it is written, so that an idle store does not hold the memory
    /// of its largest save (about 100 MB after a million records).
    static let keptBufferCapacity = 8 << 20
    private var counters = JournalStatistics()

    init(origin: TailOrigin, durability: Durability, fileSystem: any FileSystem, compression: JournalOptions.Compression, endOffset: UInt64,
         reservedEnd: UInt64, preallocationSize: Int, lastSequence: UInt64, symbols: SymbolTable, dictionary: LZ4.PresetDictionary?) {
        self.origin = origin
        self.durability = durability
        self.fileSystem = fileSystem
        fileIdentity = try? origin.file.identity()
        compressor = compression == .lz4 ? LZ4.Compressor() : nil
        self.endOffset = endOffset
        self.reservedEnd = max(reservedEnd, endOffset)
        self.preallocationSize = UInt64(preallocationSize)
        self.nextSequence = lastSequence + 1
        self.writtenSequence = lastSequence
        // The opener made the file durable (Journal's init fsyncs it), so
        // every frame found there may be claimed durable.
        self.syncedSequence = lastSequence
        self.syncedEnd = endOffset
        self.symbols = symbols
        self.dictionary = dictionary
        flushed = Monitor.Condition(monitor)
        frameWritten = Monitor.Condition(monitor)
    }

    var statistics: JournalStatistics { locked { counters } }

    /// The capacity of the buffers kept for the next write.
    var heldBufferBytes: Int { locked { rawBuffer.capacity + frameBuffer.capacity } }
    var lastSequence: UInt64 { locked { nextSequence - 1 } }
    var validEnd: UInt64 { locked { endOffset } }
    /// Where the transactions start and end in the current file.
    var tail: (origin: TailOrigin, end: UInt64) { locked { (origin, endOffset) } }

    /// ``tail``, to read the transactions through its file: `.closed` once
    /// `close()` began, since the descriptor is closed, and its number may
    /// belong to another file, soon after.
    func readableTail() throws(LogStoreError) -> (origin: TailOrigin, end: UInt64) {
        try locked { () throws(LogStoreError) -> (origin: TailOrigin, end: UInt64) in
            if isClosing { throw closedError }
            return (origin, endOffset)
        }
    }

    /// What a compaction needs to start a snapshot at the last transaction
    /// written: its sequence number, the names frames up to it declared,
    /// the dictionary in force after it, and where the next frame goes.
    var snapshotPoint: (sequence: UInt64, names: [String], dictionary: [UInt8]?, end: UInt64) {
        locked { (nextSequence - 1, Array(symbols.names[..<symbols.persistedCount]), dictionary?.bytes, endOffset) }
    }

    /// Moves the journal to a new file: with no frame being written and no
    /// flush under way, calls `body` with the current file and where its
    /// frames end; `body` finishes the new file (copies the frames after
    /// what it already has, makes it durable, renames it into place) and
    /// returns its origin and end. Frames written before are durable then,
    /// in the new file. Returns the old file for the caller to close.
    ///
    /// If `body` throws, nothing changes: the journal goes on in the old file.
    ///
    /// `body` returns a failure of its own when the switch happened but its
    /// durability is in doubt (the directory fsync after the rename failed):
    /// the journal then goes on in the new file but, as after a failed
    /// fsync, acknowledges nothing more and refuses writes.
    func replaceFile(_ body: (_ file: any FileIO, _ end: UInt64) throws(LogStoreError) -> (TailOrigin, UInt64, LogStoreError?)) throws(LogStoreError) -> any FileIO {
        try locked { () throws(LogStoreError) -> any FileIO in
            while isSyncing { flushed.wait() }
            try checkWritable()
            let old = origin.file
            let (newOrigin, newEnd, doubt) = try body(old, endOffset)
            origin = newOrigin
            fileIdentity = try? newOrigin.file.identity()
            endOffset = newEnd
            reservedEnd = newEnd
            if let doubt {
                failure = failure ?? doubt
            } else {
                syncedSequence = writtenSequence
                syncedEnd = newEnd
            }
            flushed.broadcast()
            return old
        }
    }

    func symbol(for name: String) -> Symbol { locked { symbols.intern(name) } }
    func name(of symbol: Symbol) -> String? { locked { symbols.name(of: symbol) } }
    var symbolTable: SymbolTable { locked { symbols } }

    /// Writes one transaction frame and returns its sequence number once the
    /// durability mode's promise holds for it.
    /// Under `.fsyncEveryCommit` the lock is held from the write through
    /// the fsync, so at most one frame is ever unsynced (FORMAT.md §7).
    func append(_ changes: some PayloadChanges, at time: Date) throws(LogStoreError) -> UInt64 {
        arriving.add(1, ordering: .relaxed)
        monitor.lock()
        defer { monitor.unlock() }
        let sequence = try writeLocked(changes, at: time)
        try waitLocked(sequence)
        return sequence
    }

    /// Writes one transaction frame to the file (not yet durable) and returns
    /// its sequence number. Callers that hold a lock of their own while
    /// writing call ``waitUntilDurable(_:)`` after releasing it, so that
    /// concurrent saves can share a flush.
    ///
    /// `announced` says the caller already counted itself in with
    /// ``announceWrite()``, before waiting for a lock of its own: a flush
    /// being gathered then waits for it too, instead of going out while it
    /// queues behind that lock.
    func write(_ changes: some PayloadChanges, at time: Date, announced: Bool = false) throws(LogStoreError) -> UInt64 {
        if !announced { arriving.add(1, ordering: .relaxed) }
        return try locked { () throws(LogStoreError) in try writeLocked(changes, at: time) }
    }

    /// Counts a committer on its way to ``write(_:at:announced:)``; pair
    /// with that call, or with ``withdrawWrite()`` when it does not write.
    func announceWrite() { arriving.add(1, ordering: .relaxed) }

    /// Takes back an ``announceWrite()`` that no write follows, and wakes
    /// a leader gathering a flush, which may be waiting for this committer.
    func withdrawWrite() {
        arriving.subtract(1, ordering: .relaxed)
        locked { if isGathering { frameWritten.signal() } }
    }

    private func writeLocked(_ changes: some PayloadChanges, at time: Date) throws(LogStoreError) -> UInt64 {
        defer {
            arriving.subtract(1, ordering: .relaxed)
            // Written or not, this committer is in: a gathering leader
            // counts it no longer.
            if isGathering { frameWritten.signal() }
            if rawBuffer.capacity > Self.keptBufferCapacity { rawBuffer = ByteWriter(capacity: 4096) }
            if frameBuffer.capacity > Self.keptBufferCapacity { frameBuffer = ByteWriter(capacity: 4096) }
        }
        try checkWritable()
        if durability == .deferredToOS, ContinuousClock.now - nameCheckedAt >= Self.nameCheckInterval {
            do throws(LogStoreError) { try checkName() } catch {
                fail(error)
                throw error
            }
            nameCheckedAt = .now
        }
        let sequence = nextSequence
        // No frame may follow one numbered UInt64.max (Journal refuses to open such a file).
        guard sequence < .max else {
            throw LogStoreError(.corruptFrame, "\(file.path) has numbered its frames up to \(sequence - 1), so no frame can follow; LogStore never numbers frames so high, and the file was not written by it: nothing was written; restore it from a backup", path: file.path)
        }
        let carried = try encodeFrame(changes, sequence: sequence, time: time)
        let frameEnd = endOffset + UInt64(frameBuffer.count)
        if frameEnd > reservedEnd, frameEnd > nextReservationEnd { reserveSpace(beyond: frameEnd) }
        do throws(LogStoreError) {
            try frameBuffer.bytes.withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: endOffset) }
        } catch where error.isOutOfSpace {
            throw withdrawFrame(after: error)
        } catch {
            fail(error)
            throw error
        }
        endOffset = frameEnd
        reservedEnd = max(reservedEnd, endOffset)
        nextSequence += 1
        writtenSequence = sequence
        symbols.markAllPersisted()
        if let carried {
            dictionary = carried
            dictionarySamples = []
        }
        counters.framesWritten += 1
        counters.bytesWritten += UInt64(frameBuffer.count)
        counters.rawPayloadBytes += UInt64(rawBuffer.count)
        return sequence
    }

    /// Returns once the frame with `sequence` is as durable as the mode
    /// promises (at once for `.deferredToOS`).
    func waitUntilDurable(_ sequence: UInt64) throws(LogStoreError) {
        try locked { () throws(LogStoreError) in try waitLocked(sequence) }
    }

    private func waitLocked(_ sequence: UInt64) throws(LogStoreError) {
        switch durability {
        case .deferredToOS:
            break
        case .fsyncEveryCommit:
            if syncedSequence < sequence {
                try checkFlushable()
                try synchronize(through: writtenSequence)
            }
        case .groupCommit(let window):
            try waitUntilDurable(sequence, window: window)
        }
    }

    /// Closes the file. Appends after this fail with `.closed`.
    ///
    /// Under group commit, saves may have written their frame and not yet
    /// come back for their flush (the store lets go of its lock in
    /// between): close waits for a flush under way, then flushes what is
    /// left itself, so that those saves find their frame durable when they
    /// come back and never touch the closed descriptor. If that flush
    /// fails, they fail as after any failed flush.
    func close() {
        locked {
            guard !isClosing else { return }
            isClosing = true
            if isGathering { frameWritten.signal() }
            while isSyncing { flushed.wait() }
            // The space reserved and not used goes, in the same flush as
            // the last frames where one is due: a closed store's file ends
            // with its last frame.
            if failure == nil, reservedEnd > endOffset {
                try? file.truncate(to: endOffset)
                reservedEnd = endOffset
            }
            if durability != .deferredToOS, syncedSequence < writtenSequence, failure == nil {
                try? synchronize(through: writtenSequence)
            }
            isClosed = true
            file.close()
            flushed.broadcast()
        }
    }

    // MARK: - Encoding

    private func encodeFrame(_ changes: some PayloadChanges, sequence: UInt64, time: Date) throws(LogStoreError) -> LZ4.PresetDictionary? {
        rawBuffer.removeAll()
        let carried = dictionaryToCarry()
        if let carried { TransactionPayload.encodeDictionary(carried.bytes, into: &rawBuffer) }
        TransactionPayload.encode(changes, declaring: symbols.undeclared, deleteRuns: origin.deleteRuns, into: &rawBuffer)
        guard rawBuffer.count <= FrameLayout.maxPayloadSize else {
            throw LogStoreError(.transactionTooLarge, "a save of \(rawBuffer.count) encoded bytes is over the frame limit of \(FrameLayout.maxPayloadSize) bytes (FORMAT.md §3) and cannot be written to \(file.path); nothing was written. Save in smaller parts, or use BatchInsertRequest, BatchUpdateRequest or BatchDeleteRequest with Store.execute(_:), which commit in transactions below the limit", path: file.path)
        }
        let useDictionary = carried == nil && rawBuffer.count <= Self.dictionaryPayloadLimit ? dictionary : nil
        // What a power cut can no longer take (FORMAT.md §6): a hole below
        // it is damage, one above it an unfinished flush.
        let durableDistance = origin.recordsDurability ? FrameHeader.durableDistance(sequence: sequence, durable: syncedSequence) : 0
        rawBuffer.bytes.withUnsafeBytes { raw in
            FrameHeader.encodeFrame(
                kind: .transaction, sequence: sequence, timestampMicroseconds: Microseconds(time), payload: raw,
                compressor: compressor, dictionary: useDictionary, carriesDictionary: carried != nil,
                durableDistance: durableDistance, into: &frameBuffer)
            if compressor != nil, raw.count >= FrameHeader.smallestCompressedPayload, dictionary == nil, carried == nil, raw.count <= Self.dictionaryPayloadLimit {
                dictionarySamples.append(contentsOf: raw)
            }
        }
        return carried
    }

    /// A new dictionary for the next frame to carry, once enough small
    /// payloads were written without one.
    private func dictionaryToCarry() -> LZ4.PresetDictionary? {
        guard dictionary == nil, dictionarySamples.count >= Self.dictionarySize else { return nil }
        return LZ4.PresetDictionary(Array(dictionarySamples.suffix(Self.dictionarySize)))
    }

    // MARK: - Reserved space

    /// Reserves file space from the writer's end to `preallocationSize`
    /// bytes past `end`, where the next frame ends (FORMAT.md §7,
    /// *Reserved space*). Best effort: where it fails (a full disk, a file
    /// system that cannot allocate), the frame appends past the end as it
    /// would without it, and a full disk is reported by that write.
    private func reserveSpace(beyond end: UInt64) {
        guard preallocationSize > 0 else { return }
        let target = end + preallocationSize
        do throws(LogStoreError) {
            try file.reserve(reservedEnd..<target)
            reservedEnd = target
            counters.reservations += 1
        } catch {
            // A reservation that failed part way may have grown the file
            // with zeros: reserved space that close does not know of, which
            // the next open finds and writes into (FORMAT.md §6).
            nextReservationEnd = target
        }
    }

    // MARK: - Durability

    private func synchronize(through sequence: UInt64) throws(LogStoreError) {
        do throws(LogStoreError) {
            try checkName()
            try file.synchronize()
        } catch {
            fail(error)
            throw error
        }
        counters.syncs += 1
        syncedSequence = max(syncedSequence, sequence)
        syncedEnd = endOffset
    }

    /// After a write that found the disk or the quota full: cuts off what
    /// it left of its frame, so the file ends with the last whole frame,
    /// as before the write, and returns the `.diskFull` error for the save.
    /// Nothing else changes: the frame got no sequence number, the names
    /// it declared are declared again by the next frame, and frames written
    /// before it stay, for the flush their committers wait for (a full
    /// disk refuses new blocks; it does not lose written ones). Later
    /// writes go on once space is free. Should the cut fail, the file may
    /// end in a torn frame, and writes stop as after any failure.
    private func withdrawFrame(after error: LogStoreError) -> LogStoreError {
        do throws(LogStoreError) {
            try file.truncate(to: endOffset)
            reservedEnd = endOffset
        } catch {
            fail(error)
            return error
        }
        let what = error.errno == EDQUOT ? "the user's disk quota on the disk holding \(file.path) is used up" : "the disk holding \(file.path) is full"
        return LogStoreError(.diskFull, "\(what), so this save was not written; the store is as it was before it, with every earlier save. Free some space, then save again", path: file.path, errno: error.errno, details: [error])
    }

    /// Stops writes after a failed fsync, or a failed write that did not
    /// just find the disk full (``withdrawFrame(after:)``), and cuts the file back to
    /// what is known to be on disk: the end of the last successful fsync
    /// (under `.deferredToOS`, which never fsyncs, the end of the last whole
    /// frame). What is cut was never acknowledged. Without the cut, a
    /// reopen would read those frames from the page cache, where Linux
    /// keeps pages it failed to write but marks clean, so they never reach
    /// the disk: saves acknowledged after the reopen would stand behind a
    /// hole after a power cut. If the cut fails too, writes stay refused.
    ///
    /// A group commit's flush may be under way, without the lock, for
    /// frames written before the failure: the cut waits for it, or it would
    /// take away frames that flush is about to acknowledge.
    private func fail(_ error: LogStoreError) {
        if failure == nil { failure = error }
        while isSyncing { flushed.wait() }
        let keep = durability == .deferredToOS ? endOffset : syncedEnd
        do throws(LogStoreError) {
            try file.truncate(to: keep)
            reservedEnd = keep
            try file.synchronize()
            endOffset = keep
            if durability != .deferredToOS {
                writtenSequence = syncedSequence
                nextSequence = syncedSequence + 1
            }
        } catch {
            // The reopen finds what the file holds, as after a crash.
        }
    }

    /// Waits, with the lock held, until a flush covers `sequence`.
    ///
    /// The first waiter with no flush under way leads. It gathers: it waits,
    /// at most `window`, until as many frames are unsynced as the previous
    /// flush covered (committers that just returned usually come back with
    /// their next save), then flushes without the lock so others keep
    /// writing meanwhile. A lone committer thus never waits, and a steady
    /// crowd of N shares one flush per N commits.
    private func waitUntilDurable(_ sequence: UInt64, window: Duration) throws(LogStoreError) {
        while syncedSequence < sequence {
            try checkFlushable()
            if isSyncing {
                flushed.wait()
                continue
            }
            isSyncing = true
            if window > .zero { gather(until: .monotonic(after: window.timeInterval)) }
            let target = writtenSequence, targetEnd = endOffset
            // A compaction replaces the file only while no flush is under way.
            let syncing = file, identity = fileIdentity
            monitor.unlock()
            let result = Result { () throws(LogStoreError) in
                try fileSystem.checkStillNamed(syncing, identity: identity)
                try syncing.synchronize()
            }
            monitor.lock()
            isSyncing = false
            switch result {
            case .success:
                counters.syncs += 1
                lastBatchSize = max(1, target - syncedSequence)
                syncedSequence = max(syncedSequence, target)
                syncedEnd = max(syncedEnd, targetEnd)
            case .failure(let error):
                fail(error)
            }
            flushed.broadcast()
        }
    }

    /// Waits, until `deadline` at most, for every committer already on its
    /// way in to write its frame, and for as many frames as the last flush
    /// covered (committers that just returned usually come back at once).
    private func gather(until deadline: timespec) {
        isGathering = true
        defer { isGathering = false }
        while arriving.load(ordering: .relaxed) > 0 || writtenSequence - syncedSequence < lastBatchSize, failure == nil, !isClosing {
            if !frameWritten.wait(until: deadline) { break }
        }
    }

    /// Throws `.storeReplaced` when the store's path no longer names the
    /// file (``FileSystem/checkStillNamed(_:identity:)``). Its callers then
    /// fail the writer: frames written since the last fsync are cut off, as
    /// after a failed fsync, and none is acknowledged in a file no one
    /// opening the store would read.
    private func checkName() throws(LogStoreError) {
        try fileSystem.checkStillNamed(file, identity: fileIdentity)
    }

    private func checkWritable() throws(LogStoreError) {
        if isClosing { throw closedError }
        if let failure { throw refusal(after: failure) }
    }

    /// Whether a flush for an unsynced frame may start: not after a
    /// failure, and never once the file is closed (`close()` flushed every
    /// frame written before it, so this only refuses a frame it never saw).
    private func checkFlushable() throws(LogStoreError) {
        if let failure { throw refusal(after: failure) }
        if isClosed { throw closedError }
    }

    private var closedError: LogStoreError {
        LogStoreError(.closed, "\(file.path) was closed; open it again to write", path: file.path)
    }

    private func refusal(after failure: LogStoreError) -> LogStoreError {
        // Nothing failed to write: the file lost its name, and says so.
        if failure.kind == .storeReplaced { return failure }
        return LogStoreError(.writeFailed, "an earlier write to \(file.path) failed, so it refuses writes to never acknowledge a save it has not written; reopen the store once the cause is fixed. The first failure: \(failure.message)", path: file.path, errno: failure.errno, details: [failure])
    }

    private func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T { try monitor.withLock(body) }
}

/// Counters of what a journal has written since it was opened.
public struct JournalStatistics: Sendable, Hashable {
    /// Transaction frames written.
    public var framesWritten = 0
    /// Bytes written, headers included.
    public var bytesWritten: UInt64 = 0
    /// Payload bytes before compression.
    public var rawPayloadBytes: UInt64 = 0
    /// `fdatasync` calls that succeeded.
    public var syncs = 0
    /// Times the writer reserved file space ahead of its frames
    /// (``JournalOptions/preallocationSize``).
    public var reservations = 0
}

extension Duration {
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
