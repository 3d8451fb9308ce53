// Appends transaction frames: encode, compress, checksum, write, and make durable.

import Foundation

/// The single writer of a store file.
///
/// `@unchecked Sendable`: every mutable property is read and written only
/// while `condition` is locked. Encoding happens under the lock too, so frames
/// get consecutive sequence numbers in file order and each frame declares
/// exactly the names no earlier frame declared.
final class JournalWriter: @unchecked Sendable {
    private let file: any FileIO
    private let durability: Durability
    private let condition = NSCondition()

    private var endOffset: UInt64
    private var nextSequence: UInt64
    private var symbols: SymbolTable
    /// The first write or fsync error; once set, every append is refused.
    private var failure: LogStoreError?
    private var isClosed = false

    // Group commit: frames up to `writtenSequence` are written, those up to
    // `syncedSequence` are durable, and one committer at a time flushes.
    private var writtenSequence: UInt64
    private var syncedSequence: UInt64
    private var isSyncing = false

    private var rawBuffer = ByteWriter(capacity: 4096)
    private var frameBuffer = ByteWriter(capacity: 4096)
    private var counters = JournalStatistics()

    init(file: any FileIO, durability: Durability, endOffset: UInt64, lastSequence: UInt64, symbols: SymbolTable) {
        self.file = file
        self.durability = durability
        self.endOffset = endOffset
        self.nextSequence = lastSequence + 1
        self.writtenSequence = lastSequence
        self.syncedSequence = lastSequence
        self.symbols = symbols
    }

    var statistics: JournalStatistics { locked { counters } }
    var lastSequence: UInt64 { locked { nextSequence - 1 } }
    var validEnd: UInt64 { locked { endOffset } }

    func symbol(for name: String) -> Symbol { locked { symbols.intern(name) } }
    func name(of symbol: Symbol) -> String? { locked { symbols.name(of: symbol) } }
    var symbolTable: SymbolTable { locked { symbols } }

    /// Writes one transaction frame and returns its sequence number once the
    /// durability mode's promise holds for it.
    func append(_ changes: [RecordChange], at time: Date) throws(LogStoreError) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        try checkWritable()
        let sequence = nextSequence
        try encodeFrame(changes, sequence: sequence, time: time)
        do throws(LogStoreError) {
            try frameBuffer.bytes.withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: endOffset) }
        } catch {
            failure = error
            throw error
        }
        endOffset += UInt64(frameBuffer.count)
        nextSequence += 1
        writtenSequence = sequence
        symbols.markAllPersisted()
        counters.framesWritten += 1
        counters.bytesWritten += UInt64(frameBuffer.count)
        counters.rawPayloadBytes += UInt64(rawBuffer.count)

        switch durability {
        case .deferredToOS:
            break
        case .fsyncEveryCommit:
            try synchronize(through: sequence)
        case .groupCommit(let window):
            try waitUntilDurable(sequence, window: window)
        }
        return sequence
    }

    /// Closes the file. Appends after this fail with `.closed`.
    func close() {
        locked {
            guard !isClosed else { return }
            while isSyncing { condition.wait() }
            isClosed = true
            file.close()
        }
    }

    // MARK: - Encoding

    private func encodeFrame(_ changes: [RecordChange], sequence: UInt64, time: Date) throws(LogStoreError) {
        rawBuffer.removeAll()
        TransactionPayload.encode(changes, declaring: symbols.undeclared, into: &rawBuffer)
        guard rawBuffer.count <= FrameLayout.maxPayloadSize else {
            throw LogStoreError(.transactionTooLarge, "a transaction of \(rawBuffer.count) bytes exceeds the frame limit of \(FrameLayout.maxPayloadSize) bytes in \(file.path); split the save into smaller ones", path: file.path)
        }
        frameBuffer.removeAll()
        frameBuffer.append(contentsOf: repeatElement(0, count: FrameLayout.headerSize))
        var codec = PayloadCodec.lz4Block
        rawBuffer.bytes.withUnsafeBytes { raw in
            // Keep LZ4 only when it saves bytes; it never pays below a few dozen.
            frameBuffer.appendUninitialized(count: LZ4.compressBound(raw.count)) { destination in
                let size = raw.count >= 32 ? LZ4.compress(raw, into: destination) : 0
                return size > 0 && size < raw.count ? size : 0
            }
            if frameBuffer.count == FrameLayout.headerSize {
                codec = .raw
                frameBuffer.append(raw)
            }
        }
        var header = FrameHeader(
            checksum: 0, storedSize: UInt32(frameBuffer.count - FrameLayout.headerSize),
            rawSize: UInt32(rawBuffer.count), sequence: sequence,
            timestampMicroseconds: Microseconds(time), kind: .transaction, codec: codec)
        frameBuffer.withUnsafeMutableBytes { header.write(into: $0) }
    }

    // MARK: - Durability

    private func synchronize(through sequence: UInt64) throws(LogStoreError) {
        do throws(LogStoreError) {
            try file.synchronize()
        } catch {
            failure = error
            throw error
        }
        counters.syncs += 1
        syncedSequence = max(syncedSequence, sequence)
    }

    /// Waits, with the lock held, until a flush covers `sequence`. The first
    /// waiter with no flush under way leads: it waits `window` for more frames,
    /// then flushes without the lock so others keep writing meanwhile.
    private func waitUntilDurable(_ sequence: UInt64, window: Duration) throws(LogStoreError) {
        while syncedSequence < sequence {
            if let failure { throw refusal(after: failure) }
            if isSyncing {
                condition.wait()
                continue
            }
            isSyncing = true
            if window > .zero {
                condition.unlock()
                Thread.sleep(forTimeInterval: window.timeInterval)
                condition.lock()
            }
            let target = writtenSequence
            condition.unlock()
            let result = Result { () throws(LogStoreError) in try file.synchronize() }
            condition.lock()
            isSyncing = false
            switch result {
            case .success:
                counters.syncs += 1
                syncedSequence = max(syncedSequence, target)
            case .failure(let error):
                if failure == nil { failure = error }
            }
            condition.broadcast()
        }
    }

    private func checkWritable() throws(LogStoreError) {
        if isClosed {
            throw LogStoreError(.closed, "\(file.path) was closed; open it again to write", path: file.path)
        }
        if let failure { throw refusal(after: failure) }
    }

    private func refusal(after failure: LogStoreError) -> LogStoreError {
        LogStoreError(.writeFailed, "an earlier write to \(file.path) failed, so it refuses writes to never acknowledge a save it has not written; reopen the store once the cause is fixed. The first failure: \(failure.message)", path: file.path, errno: failure.errno, details: [failure])
    }

    private func locked<T>(_ body: () throws(LogStoreError) -> T) throws(LogStoreError) -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
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
}

extension Duration {
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
