// Turns a frame's stored payload back into its raw bytes, reusing one buffer,
// and keeps the store dictionary that later frames are compressed against.

/// Decompresses frame payloads in file order.
///
/// Frames must be fed in order: a frame can carry a new store dictionary
/// (FORMAT.md §5.3), and the frames after it are compressed against it. The
/// buffer is kept between frames, so a scan of many small frames allocates once.
struct PayloadDecoder {
    private var buffer: [UInt8] = []
    /// The dictionary in force: the latest one a frame fed so far carried.
    private(set) var dictionary: LZ4.PresetDictionary?

    /// Whether the file's transactions may hold delete runs (format
    /// version 7 on, FORMAT.md §5.1); in an older file one is damage.
    let deleteRuns: Bool

    /// A decoder for frames after a snapshot, whose dictionary is in force,
    /// in a file whose transactions may hold delete runs or not.
    init(dictionary: LZ4.PresetDictionary? = nil, deleteRuns: Bool) {
        self.dictionary = dictionary
        self.deleteRuns = deleteRuns
    }

    /// Calls `body` with the raw payload of `frame` (valid only during the call).
    mutating func withRawPayload<R>(
        of header: FrameHeader, stored: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws(DecodeFailure) -> R
    ) throws(DecodeFailure) -> R {
        let dictionary: LZ4.PresetDictionary?
        switch header.codec {
        case .raw:
            return try body(stored)
        case .lz4Block:
            dictionary = nil
        case .lz4BlockWithDictionary:
            guard let current = self.dictionary else {
                throw DecodeFailure("the payload is compressed against a store dictionary, but no earlier frame carries one")
            }
            dictionary = current
        }
        // The header check bounded rawSize by the limit and by what LZ4
        // can produce from storedSize, so this allocation is bounded too.
        let rawSize = Int(header.rawSize)
        if buffer.count < rawSize { buffer = [UInt8](repeating: 0, count: rawSize) }
        return try buffer.withMutableBytes { (all) throws(DecodeFailure) -> R in
            let raw = UnsafeMutableRawBufferPointer(rebasing: all[0..<rawSize])
            try LZ4.decompress(stored, into: raw, dictionary: dictionary)
            return try body(UnsafeRawBufferPointer(raw))
        }
    }

    /// Calls `body` with a reader at the transaction in `frame`'s payload,
    /// after taking the dictionary the frame carries, if any.
    private mutating func withTransaction<R>(
        of header: FrameHeader, stored: UnsafeRawBufferPointer,
        _ body: (inout ByteReader) throws(DecodeFailure) -> R
    ) throws(DecodeFailure) -> R {
        var carried: [UInt8]?
        let result = try withRawPayload(of: header, stored: stored) { (raw) throws(DecodeFailure) -> R in
            var reader = ByteReader(raw)
            if header.carriesDictionary { carried = try reader.readDictionary() }
            return try body(&reader)
        }
        if let carried { dictionary = LZ4.PresetDictionary(carried) }
        return result
    }

    /// Decodes a transaction frame's changes, declaring its new names in
    /// `symbols` first. `symbols` changes only when the whole frame decodes.
    mutating func decodeTransaction(_ header: FrameHeader, stored: UnsafeRawBufferPointer, symbols: inout SymbolTable) throws(DecodeFailure) -> [RecordChange] {
        let deleteRuns = deleteRuns
        return try withTransaction(of: header, stored: stored, symbols: &symbols) { (reader, declared) throws(DecodeFailure) in
            try TransactionPayload.readChanges(from: &reader, symbols: declared, deleteRuns: deleteRuns)
        }
    }

    /// Checks that a transaction frame decodes, as ``decodeTransaction(_:stored:symbols:)``
    /// would, declaring its new names in `symbols`, without building its changes.
    mutating func checkTransaction(_ header: FrameHeader, stored: UnsafeRawBufferPointer, symbols: inout SymbolTable) throws(DecodeFailure) {
        let deleteRuns = deleteRuns
        try withTransaction(of: header, stored: stored, symbols: &symbols) { (reader, declared) throws(DecodeFailure) in
            try TransactionPayload.checkChanges(from: &reader, symbols: declared, deleteRuns: deleteRuns)
        }
    }

    /// Reads a transaction's declarations into a copy of `symbols`, then
    /// calls `body` with the reader at its changes and that copy; the copy
    /// replaces `symbols` only once `body` returns. A frame that does not
    /// decode is not part of the file (open stops before it, salvage cuts
    /// it off), so the names it declares must not be: a writer taking them
    /// as already written would use names no frame in the file declares.
    private mutating func withTransaction<R>(
        of header: FrameHeader, stored: UnsafeRawBufferPointer, symbols: inout SymbolTable,
        _ body: (inout ByteReader, SymbolTable) throws(DecodeFailure) -> R
    ) throws(DecodeFailure) -> R {
        var declared = symbols
        let result = try withTransaction(of: header, stored: stored) { (reader) throws(DecodeFailure) in
            try TransactionPayload.readDeclarations(from: &reader, into: &declared)
            return try body(&reader, declared)
        }
        symbols = declared
        return result
    }
}
