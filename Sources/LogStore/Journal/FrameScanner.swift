// Reads frames in order from a store file and classifies where they stop:
// FORMAT.md §6, the damage table, row by row.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A valid frame, as the scanner hands it to its caller.
struct ScannedFrame {
    var header: FrameHeader
    /// Where the frame starts in the file.
    var offset: UInt64
    /// 1 for the first frame after the file header.
    var number: Int
}

/// How a scan ended (FORMAT.md §6).
enum ScanEnd: Sendable, Equatable {
    /// The last valid frame ends exactly at the end of the file.
    case clean
    /// An append cut short: bytes after the last valid frame that are not a
    /// valid frame, and no valid frame after them records the missing frame
    /// as durable (a power cut in the middle of a flush).
    case tornTail(offset: UInt64, byteCount: UInt64, reason: String)
    /// A damaged frame that no crash can explain: a valid frame after it
    /// records it durable (or records nothing, as frames before format
    /// version 4 do), or it declares an impossible size, or its checksum
    /// matches but its contents are invalid.
    case damage(offset: UInt64, frameNumber: Int, reason: String)
}

/// What a scan found.
struct ScanSummary: Sendable {
    var end: ScanEnd = .clean
    var frameCount = 0
    /// The offset just past the last valid frame: where the next frame goes.
    var validEnd = UInt64(FileLayout.headerSize)
    var firstSequence: UInt64?
    var lastSequence: UInt64?
    var lastTimestampMicroseconds: Int64?
    var storedPayloadBytes: UInt64 = 0
    var rawPayloadBytes: UInt64 = 0
    /// With a `.tornTail` end: the valid frames found after the bad bytes,
    /// none of which records the missing frame as durable, so they are
    /// frames of an unfinished flush cut off with it (FORMAT.md §6).
    var unsyncedFramesAfterEnd = 0
    /// Where the last frame ends that a frame read records as durable (a
    /// frame that records nothing counts as durable itself, as frames of
    /// files before format version 4 and frames a compaction copied were
    /// written durable): the most a writer could still cut back to after a
    /// failed flush (FORMAT.md §7), and how many frames it counts.
    var durableEnd = UInt64(FileLayout.headerSize)
    var durableFrameCount = 0
    /// With a `.clean` end: the zero bytes from ``validEnd`` to the end of
    /// the file, space a writer reserved for its next frames (FORMAT.md §7,
    /// *Reserved space*); 0 when the last frame ends the file.
    var reservedByteCount: UInt64 = 0

    /// The bytes of a file of `size` bytes, scanned to its end, that are
    /// neither valid frames nor reserved space: a torn tail or damage.
    func unreadableBytes(fileSize size: UInt64) -> UInt64 { size - validEnd - reservedByteCount }
}

/// Reads frames sequentially through a sliding buffer, checking each
/// against the validity rule before handing it on.
///
/// Reads are large (``chunkSize``) so a scan runs at the speed of the disk
/// and CRC32C, not of system calls. The buffer grows for a large frame only
/// after the frame's declared size was checked against the limit and against
/// the bytes the file actually has.
struct FrameScanner {
    let file: any FileIO
    /// Scan up to here (the file size, or a writer's end offset).
    let limit: UInt64
    /// Whether zero bytes running from where a frame should start to the
    /// limit end the scan cleanly, as a writer's reserved space (FORMAT.md
    /// §6): true for a store's transactions, whose writer reserves space
    /// ahead of them; false for a snapshot's runs, which end where their
    /// handles say, so that zeros there are damage.
    let allowsReservedSpace: Bool
    static let chunkSize = 4 << 20

    private var buffer: [UInt8] = []
    /// File offset of `buffer[0]`.
    private var bufferStart: UInt64 = 0
    /// The bytes this scanner has looked at, counted again each time it
    /// looks again: the work a scan did, which tests bound by the file's
    /// size (FORMAT.md §6: the work is linear for any input).
    private(set) var examinedByteCount: UInt64 = 0

    init(file: any FileIO, limit: UInt64, allowsReservedSpace: Bool = false) {
        self.file = file
        self.limit = limit
        self.allowsReservedSpace = allowsReservedSpace
    }

    /// Scans every frame from the end of the file header, calling `body` with
    /// each valid frame and its stored payload (valid only during the call).
    /// `body` throws ``DecodeFailure`` when the payload does not decode; the
    /// scan then ends with `.damage` at that frame.
    ///
    /// `start` and `lastSequence` let a verifier resume after damage at the
    /// next valid frame; frame numbers then count from `firstNumber`.
    /// Without `checksSequence`, frames need not number themselves one
    /// after another (a paged snapshot's run, FORMAT.md §13.3).
    mutating func scan(
        from start: UInt64 = UInt64(FileLayout.headerSize), lastSequence: UInt64? = nil, firstNumber: Int = 1, checksSequence: Bool = true,
        _ body: (ScannedFrame, UnsafeRawBufferPointer) throws(DecodeFailure) -> Void
    ) throws(LogStoreError) -> ScanSummary {
        var summary = ScanSummary()
        summary.validEnd = start
        summary.durableEnd = start
        summary.lastSequence = lastSequence
        // Frames past the durable point so far (from `firstUndurable` on):
        // sequence, end, count. Each leaves once, so the bookkeeping is linear.
        var undurable: [(sequence: UInt64, end: UInt64, count: Int)] = [], firstUndurable = 0
        var offset = start
        while true {
            let number = firstNumber + summary.frameCount
            let remaining = limit - offset
            if remaining == 0 { summary.end = .clean; break }
            if remaining < UInt64(FrameLayout.headerSize) {
                summary.end = try classify(offset, number, "the frame header is cut short", summary: &summary)
                break
            }
            // The header slice must not outlive this statement: a live slice
            // would make the next buffer refill copy the whole buffer.
            let declared = try bytes(at: offset, count: FrameLayout.headerSize).withUnsafeBytes { FrameHeader.declaredPayloadSize($0) }
            let storedSize: UInt32
            switch declared {
            case .success(let size): storedSize = size
            case .failure(.impossibleSize(let reason)):
                summary.end = .damage(offset: offset, frameNumber: number, reason: "the frame \(reason)")
                return summary
            case .failure(let problem):
                summary.end = try classify(offset, number, describe(problem), summary: &summary)
                return summary
            }
            let frameSize = UInt64(FrameLayout.headerSize) + UInt64(storedSize)
            if frameSize > remaining {
                summary.end = try classify(offset, number, "the frame's payload is cut short (\(remaining - UInt64(FrameLayout.headerSize)) of \(storedSize) bytes)", summary: &summary)
                return summary
            }
            let frame = try bytes(at: offset, count: Int(frameSize))
            var outcome: ScanEnd?
            try frame.withBytes { (raw) throws(LogStoreError) in
                let head = UnsafeRawBufferPointer(rebasing: raw[0..<FrameLayout.headerSize])
                let payload = UnsafeRawBufferPointer(rebasing: raw[FrameLayout.headerSize...])
                guard FrameHeader.checksumMatches(header: head, payload: payload) else {
                    outcome = try classify(offset, number, "the frame fails its checksum", summary: &summary)
                    return
                }
                let parsed: FrameHeader
                switch FrameHeader.parse(head) {
                case .success(let value): parsed = value
                case .failure(let problem):
                    outcome = .damage(offset: offset, frameNumber: number, reason: "the frame's checksum matches but it \(describe(problem))")
                    return
                }
                if checksSequence, let last = summary.lastSequence, parsed.sequence != last &+ 1 {
                    outcome = .damage(offset: offset, frameNumber: number, reason: "the frame has sequence number \(parsed.sequence) where \(last &+ 1) must follow")
                    return
                }
                do throws(DecodeFailure) {
                    try body(ScannedFrame(header: parsed, offset: offset, number: number), payload)
                } catch {
                    outcome = .damage(offset: offset, frameNumber: number, reason: "the frame's payload does not decode: \(error.reason)")
                    return
                }
                summary.frameCount += 1
                summary.firstSequence = summary.firstSequence ?? parsed.sequence
                summary.lastSequence = parsed.sequence
                summary.lastTimestampMicroseconds = parsed.timestampMicroseconds
                summary.storedPayloadBytes += UInt64(parsed.storedSize)
                summary.rawPayloadBytes += UInt64(parsed.rawSize)
                undurable.append((parsed.sequence, offset + frameSize, summary.frameCount))
                let vouched = parsed.durableSequence ?? parsed.sequence
                while firstUndurable < undurable.count, undurable[firstUndurable].sequence <= vouched {
                    (summary.durableEnd, summary.durableFrameCount) = (undurable[firstUndurable].end, undurable[firstUndurable].count)
                    firstUndurable += 1
                }
                if firstUndurable > 1024, firstUndurable * 2 > undurable.count {
                    undurable.removeFirst(firstUndurable)
                    firstUndurable = 0
                }
            }
            if let outcome {
                summary.end = outcome
                return summary
            }
            offset += frameSize
            summary.validEnd = offset
        }
        return summary
    }

    private func describe(_ problem: FrameHeaderProblem) -> String {
        switch problem {
        case .badMagic: "does not start with the frame magic \"LSFR\""
        case .impossibleSize(let reason), .unknownField(let reason): reason
        }
    }

    /// A frame that is not valid is a torn tail unless a valid frame after
    /// it proves it was once durable (FORMAT.md §6): one that records the
    /// missing sequence number as durable, or records nothing (a frame of a
    /// file before format version 4, or of a snapshot). Valid frames that
    /// record less stand where no save was acknowledged yet: a flush whose
    /// pages a power cut wrote in part. They go with the torn tail.
    ///
    /// Zeros from `offset` to the limit, where the scanner allows reserved
    /// space, end the scan cleanly: no frame starts with zeros, so they
    /// hold neither a torn frame's first bytes nor a later frame.
    private mutating func classify(_ offset: UInt64, _ number: Int, _ reason: String, summary: inout ScanSummary) throws(LogStoreError) -> ScanEnd {
        if allowsReservedSpace, try isZero(from: offset) {
            summary.reservedByteCount = limit - offset
            return .clean
        }
        let missing = (summary.lastSequence ?? 0) &+ 1
        var proof: (offset: UInt64, header: FrameHeader)?
        var unsynced = 0
        try sweepValidFrames(after: offset, sequenceAbove: summary.lastSequence, firstOnly: false) { next, header in
            if let durable = header.durableSequence, durable < missing {
                unsynced += 1
                return true
            }
            proof = (next, header)
            return false
        }
        if let (next, header) = proof {
            guard let durable = header.durableSequence else {
                return .damage(offset: offset, frameNumber: number, reason: "\(reason), and a valid frame follows at offset \(next)")
            }
            return .damage(offset: offset, frameNumber: number, reason: "\(reason), and the valid frame at offset \(next) (sequence \(header.sequence)) records sequence \(durable) as durable, so the frame here was on disk once")
        }
        summary.unsyncedFramesAfterEnd = unsynced
        if unsynced > 0 {
            return .tornTail(offset: offset, byteCount: limit - offset, reason: "\(reason), and none of the \(unsynced) valid frames after it records sequence \(missing) as durable: frames of a flush a power cut interrupted, none of them acknowledged")
        }
        return .tornTail(offset: offset, byteCount: limit - offset, reason: reason)
    }

    /// Whether every byte from `offset` to the limit is zero, read in
    /// chunks apart from the scan's buffer.
    private mutating func isZero(from offset: UInt64) throws(LogStoreError) -> Bool {
        var position = offset
        var chunk = [UInt8](repeating: 0, count: Int(min(UInt64(1 << 16), limit - offset)))
        while position < limit {
            let count = Int(min(UInt64(chunk.count), limit - position))
            let got = try chunk.withMutableBytes { (raw) throws(LogStoreError) -> Int in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<count]), at: position)
            }
            examinedByteCount += UInt64(got)
            guard got == count else {
                throw shrank(expected: count, at: position, got: got)
            }
            guard chunk[..<count].allSatisfy({ $0 == 0 }) else { return false }
            position += UInt64(count)
        }
        return true
    }

    /// The error for a read that found the file shorter than the limit:
    /// `EAGAIN`, for a reader that reads again (``Journal``'s read-only open).
    private func shrank(expected count: Int, at offset: UInt64, got: Int) -> LogStoreError {
        LogStoreError(.io, "\(file.path) shrank while it was read (expected \(count) bytes at offset \(offset), got \(got)); another process may be closing, compacting or repairing it: try again", path: file.path, offset: offset, errno: EAGAIN)
    }

    /// The offset of the first valid frame that starts after `offset`, or nil.
    /// Only frames with a later sequence number count: bytes that happen to
    /// look like an older frame (a store file kept as a value, say) do not.
    mutating func nextValidFrame(after offset: UInt64, sequenceAbove lastSequence: UInt64?) throws(LogStoreError) -> UInt64? {
        var first: UInt64?
        try sweepValidFrames(after: offset, sequenceAbove: lastSequence, firstOnly: true) { next, _ in
            first = min(first ?? next, next)
            return true
        }
        return first
    }

    /// A frame that may be valid: its header passed every check but the
    /// checksum, which is known once the sweep reaches its end.
    fileprivate struct Candidate {
        var start: UInt64
        var end: UInt64
        var checksum: UInt32
        /// The CRC32C of the bytes from the sweep's start to `start + 8`,
        /// where the frame's checksummed bytes begin.
        var prefixChecksum: UInt32 = 0
    }

    /// Calls `found` with every valid frame that starts after `offset` and
    /// has a sequence number above `lastSequence`, in the order their ends
    /// come, until it returns false. With `firstOnly`, stops once the frame
    /// that starts first is known (`found` may see a few others before it).
    ///
    /// One pass, linear in the bytes after `offset` whatever they hold
    /// (FORMAT.md §6): checking each place a frame magic appears on its own
    /// would read its whole declared frame, so a file with a magic every few
    /// bytes, each declaring a large frame, would cost the square of its
    /// size. Instead a running CRC32C covers the bytes once, each
    /// candidate's checksum comes from the running values at its two ends
    /// (``CRC32C/suffixChecksum(whole:prefix:suffixCount:)``), and memory
    /// grows with the candidates still open (24 bytes each), not their sizes.
    private mutating func sweepValidFrames(
        after offset: UInt64, sequenceAbove lastSequence: UInt64?, firstOnly: Bool,
        _ found: (UInt64, FrameHeader) throws(LogStoreError) -> Bool
    ) throws(LogStoreError) {
        let base = offset + 1
        var cursor = base, running = CRC32C()
        /// Discovered candidates, in offset order, waiting for the sweep to
        /// reach where their checksummed bytes begin.
        var waiting: [Candidate] = [], nextWaiting = 0
        /// Candidates whose start the sweep passed, by end.
        var open = CandidateHeap()
        var discovered = base, discovering = true
        var first: UInt64?

        func advance(to target: UInt64) throws(LogStoreError) {
            while cursor < target {
                let piece = try bytes(at: cursor, count: Int(min(target - cursor, UInt64(Self.chunkSize))))
                piece.withUnsafeBytes { running.update($0) }
                cursor += UInt64(piece.count)
            }
        }

        while true {
            if discovering {
                if discovered + UInt64(FrameLayout.headerSize) > limit {
                    discovering = false
                } else {
                    let windowEnd = min(discovered + UInt64(Self.chunkSize), limit)
                    try discoverCandidates(in: discovered..<windowEnd, sequenceAbove: lastSequence, into: &waiting)
                    // Overlap windows so a magic split across two of them is seen.
                    discovered = windowEnd == limit ? limit : windowEnd - 3
                }
            }
            // The sweep may go as far as no undiscovered candidate's
            // checksummed bytes begin.
            let horizon = discovering ? discovered + UInt64(FrameLayout.checksummedHeaderStart) : .max
            while true {
                let nextStart = nextWaiting < waiting.count ? waiting[nextWaiting].start + UInt64(FrameLayout.checksummedHeaderStart) : .max
                let nextEnd = open.minimum?.end ?? .max
                let next = min(nextStart, nextEnd)
                guard next != .max, next <= horizon else { break }
                try advance(to: next)
                if nextStart <= nextEnd {
                    var candidate = waiting[nextWaiting]
                    nextWaiting += 1
                    candidate.prefixChecksum = running.value
                    open.insert(candidate)
                    continue
                }
                let candidate = open.removeMinimum()
                let checksum = CRC32C.suffixChecksum(whole: running.value, prefix: candidate.prefixChecksum, suffixCount: candidate.end - candidate.start - UInt64(FrameLayout.checksummedHeaderStart))
                guard checksum == candidate.checksum, let header = try headerIfParses(at: candidate.start, sequenceAbove: lastSequence) else { continue }
                guard try found(candidate.start, header) else { return }
                if firstOnly, candidate.start < first ?? .max {
                    // Every candidate that starts earlier is discovered
                    // already; only those can still come first.
                    first = candidate.start
                    discovering = false
                    waiting.removeSubrange(..<nextWaiting)
                    waiting.removeAll { $0.start > candidate.start }
                    nextWaiting = 0
                    open.removeAll { $0.start > candidate.start }
                }
            }
            if nextWaiting > 4096, nextWaiting * 2 > waiting.count {
                waiting.removeSubrange(..<nextWaiting)
                nextWaiting = 0
            }
            if !discovering, nextWaiting == waiting.count, open.minimum == nil { return }
        }
    }

    /// Appends to `candidates` every frame magic that starts in `range`
    /// whose header passes the validity rule's checks but the checksum, with
    /// a sequence number above `lastSequence` and an end within the limit.
    private mutating func discoverCandidates(in range: Range<UInt64>, sequenceAbove lastSequence: UInt64?, into candidates: inout [Candidate]) throws(LogStoreError) {
        let magic = FrameLayout.magic.littleEndian
        let limit = limit
        func candidate(at start: UInt64, header raw: UnsafeRawBufferPointer) -> Candidate? {
            guard case .success(let parsed) = FrameHeader.parse(raw), lastSequence.map({ parsed.sequence > $0 }) ?? true,
                  start + parsed.frameSize <= limit else { return nil }
            return Candidate(start: start, end: start + parsed.frameSize, checksum: parsed.checksum)
        }
        // Headers that run past the window, checked once it is let go.
        var straddling: [UInt64] = [], parsedInPlace: UInt64 = 0
        defer { examinedByteCount += parsedInPlace * UInt64(FrameLayout.headerSize) }
        try bytes(at: range.lowerBound, count: Int(range.count)).withUnsafeBytes { raw in
            guard raw.count >= MemoryLayout<UInt32>.size else { return }
            for index in 0...(raw.count - MemoryLayout<UInt32>.size) where raw.loadUnaligned(fromByteOffset: index, as: UInt32.self) == magic {
                let start = range.lowerBound + UInt64(index)
                guard start + UInt64(FrameLayout.headerSize) <= limit else { continue }
                if index + FrameLayout.headerSize <= raw.count {
                    parsedInPlace += 1
                    if let found = candidate(at: start, header: UnsafeRawBufferPointer(rebasing: raw[index..<(index + FrameLayout.headerSize)])) {
                        candidates.append(found)
                    }
                } else {
                    straddling.append(start)
                }
            }
        }
        for start in straddling {
            if let found = try header(at: start).withUnsafeBytes({ candidate(at: start, header: $0) }) { candidates.append(found) }
        }
    }

    /// The 40 header bytes at `offset`, from the buffer when it has them
    /// (a header that straddles the buffer's end is read alone, so that the
    /// sweep's buffer stays where it is).
    private mutating func header(at offset: UInt64) throws(LogStoreError) -> [UInt8] {
        let count = FrameLayout.headerSize
        if offset >= bufferStart, offset + UInt64(count) <= bufferStart + UInt64(buffer.count) {
            return Array(try bytes(at: offset, count: count))
        }
        examinedByteCount += UInt64(count)
        let head = try file.read(count: count, at: offset)
        guard head.count == count else {
            throw shrank(expected: count, at: offset, got: head.count)
        }
        return head
    }

    /// The parsed header at `offset` when it has a sequence number above `lastSequence`.
    private mutating func headerIfParses(at offset: UInt64, sequenceAbove lastSequence: UInt64?) throws(LogStoreError) -> FrameHeader? {
        guard case .success(let parsed) = try header(at: offset).withUnsafeBytes({ FrameHeader.parse($0) }),
              lastSequence.map({ parsed.sequence > $0 }) ?? true else { return nil }
        return parsed
    }

    /// `count` bytes at `offset`, from the buffer when it has them. The
    /// caller has checked that `offset + count <= limit`.
    private mutating func bytes(at offset: UInt64, count: Int) throws(LogStoreError) -> ArraySlice<UInt8> {
        examinedByteCount += UInt64(count)
        let end = offset + UInt64(count)
        if offset >= bufferStart, end <= bufferStart + UInt64(buffer.count) {
            let start = Int(offset - bufferStart)
            return buffer[start..<(start + count)]
        }
        let want = Int(min(UInt64(max(count, Self.chunkSize)), limit - offset))
        if buffer.count != want { buffer = [UInt8](repeating: 0, count: want) }
        let got = try buffer.withMutableBytes { (raw) throws(LogStoreError) -> Int in try file.read(into: raw, at: offset) }
        bufferStart = offset
        if got < count {
            throw shrank(expected: count, at: offset, got: got)
        }
        if got < buffer.count { buffer.removeLast(buffer.count - got) }
        return buffer[0..<count]
    }
}

extension FrameScanner {
    /// The frame at `offset`, read alone and checked against the validity
    /// rule (FORMAT.md §3) but not against its neighbours: how a snapshot's
    /// index and blocks are read, found through the header and the
    /// directory rather than by scanning.
    ///
    /// Returns the header and the stored payload, or why the bytes there are
    /// not a valid frame ending by `limit`; throws only when reading fails.
    /// With `filling`, the frame must end exactly at `limit`, as a handle
    /// that gives its size says, and is read in one call: a cold read then
    /// asks the disk for the frame's bytes at once, and the kernel sizes its
    /// read-ahead to them instead of to a 40-byte header.
    static func readFrame(in file: any FileIO, at offset: UInt64, limit: UInt64, filling: Bool = false) throws(LogStoreError) -> Result<(FrameHeader, ArraySlice<UInt8>), DecodeFailure> {
        guard offset >= UInt64(FileLayout.headerSize), offset <= limit, limit - offset >= UInt64(FrameLayout.headerSize) else {
            return .failure(DecodeFailure("no frame fits at offset \(offset) (the region ends at \(limit))"))
        }
        let headerSize = FrameLayout.headerSize
        let whole: [UInt8]?
        if filling {
            guard limit - offset <= UInt64(headerSize + FrameLayout.maxPayloadSize) else {
                return .failure(DecodeFailure("\(limit - offset) bytes is larger than any frame"))
            }
            let bytes = try file.read(count: Int(limit - offset), at: offset)
            guard bytes.count == Int(limit - offset) else { return .failure(DecodeFailure("the file ends inside the frame")) }
            whole = bytes
        } else {
            whole = nil
        }
        // Slices of one read when `filling`: a snapshot block is read
        // once, not copied into a header and a payload.
        let head: ArraySlice<UInt8>
        if let whole { head = whole[..<headerSize] } else { head = try file.read(count: headerSize, at: offset)[...] }
        guard head.count == headerSize else { return .failure(DecodeFailure("the file ends inside the frame header")) }
        let storedSize: UInt32
        switch head.withUnsafeBytes({ FrameHeader.declaredPayloadSize($0) }) {
        case .success(let size): storedSize = size
        case .failure(.badMagic): return .failure(DecodeFailure("no frame magic \"LSFR\" at offset \(offset)"))
        case .failure(.impossibleSize(let reason)), .failure(.unknownField(let reason)): return .failure(DecodeFailure("the frame \(reason)"))
        }
        let region = limit - offset - UInt64(headerSize)
        guard UInt64(storedSize) <= region else {
            return .failure(DecodeFailure("the frame declares \(storedSize) bytes of payload, past the end of its region"))
        }
        guard !filling || UInt64(storedSize) == region else {
            return .failure(DecodeFailure("the frame declares \(storedSize) bytes of payload where \(region) were expected"))
        }
        let payload: ArraySlice<UInt8>
        if let whole { payload = whole[headerSize...] } else { payload = try file.read(count: Int(storedSize), at: offset + UInt64(headerSize))[...] }
        guard payload.count == Int(storedSize) else { return .failure(DecodeFailure("the file ends inside the frame's payload")) }
        let matches = head.withUnsafeBytes { header in payload.withUnsafeBytes { FrameHeader.checksumMatches(header: header, payload: $0) } }
        guard matches else { return .failure(DecodeFailure("the frame fails its checksum")) }
        switch head.withUnsafeBytes({ FrameHeader.parse($0) }) {
        case .success(let header): return .success((header, payload))
        case .failure(.badMagic): return .failure(DecodeFailure("no frame magic"))
        case .failure(.impossibleSize(let reason)), .failure(.unknownField(let reason)): return .failure(DecodeFailure("the frame's checksum matches but it \(reason)"))
        }
    }
}

/// A binary min-heap of candidates by end offset: the sweep's open frames.
private struct CandidateHeap {
    private var items: [FrameScanner.Candidate] = []

    var minimum: FrameScanner.Candidate? { items.first }

    mutating func insert(_ item: FrameScanner.Candidate) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].end < items[parent].end else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeMinimum() -> FrameScanner.Candidate {
        items.swapAt(0, items.count - 1)
        let minimum = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, items[left].end < items[smallest].end { smallest = left }
            if right < items.count, items[right].end < items[smallest].end { smallest = right }
            guard smallest != parent else { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return minimum
    }

    /// Removes the candidates `shouldRemove` picks, keeping the heap order.
    mutating func removeAll(where shouldRemove: (FrameScanner.Candidate) -> Bool) {
        let kept = items.filter { !shouldRemove($0) }
        items = []
        for item in kept { insert(item) }
    }
}
