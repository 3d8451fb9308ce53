// Turns a frame's stored payload back into its raw bytes, reusing one buffer.

/// Decompresses frame payloads into a buffer it keeps between frames, so a
/// scan of many small frames allocates once.
struct PayloadDecoder {
    private var buffer: [UInt8] = []

    /// Calls `body` with the raw payload of `frame` (valid only during the call).
    mutating func withRawPayload<R>(
        of header: FrameHeader, stored: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws(DecodeFailure) -> R
    ) throws(DecodeFailure) -> R {
        switch header.codec {
        case .raw:
            return try body(stored)
        case .lz4Block:
            // The header check bounded rawSize by the limit and by what LZ4
            // can produce from storedSize, so this allocation is bounded too.
            let rawSize = Int(header.rawSize)
            if buffer.count < rawSize { buffer = [UInt8](repeating: 0, count: rawSize) }
            return try buffer.withMutableBytes { (all) throws(DecodeFailure) -> R in
                let raw = UnsafeMutableRawBufferPointer(rebasing: all[0..<rawSize])
                try LZ4.decompress(stored, into: raw)
                return try body(UnsafeRawBufferPointer(raw))
            }
        }
    }
}

extension PayloadDecoder {
    /// Decodes a transaction frame's changes, declaring its new names in `symbols` first.
    mutating func decodeTransaction(_ header: FrameHeader, stored: UnsafeRawBufferPointer, symbols: inout SymbolTable) throws(DecodeFailure) -> [RecordChange] {
        try withRawPayload(of: header, stored: stored) { (raw) throws(DecodeFailure) in
            var reader = ByteReader(raw)
            try TransactionPayload.readDeclarations(from: &reader, into: &symbols)
            return try TransactionPayload.readChanges(from: &reader, symbols: symbols)
        }
    }

    /// Checks that a transaction frame decodes, as ``decodeTransaction(_:stored:symbols:)``
    /// would, declaring its new names in `symbols`, without building its changes.
    mutating func checkTransaction(_ header: FrameHeader, stored: UnsafeRawBufferPointer, symbols: inout SymbolTable) throws(DecodeFailure) {
        try withRawPayload(of: header, stored: stored) { (raw) throws(DecodeFailure) in
            var reader = ByteReader(raw)
            try TransactionPayload.readDeclarations(from: &reader, into: &symbols)
            try TransactionPayload.checkChanges(from: &reader, symbols: symbols)
        }
    }
}
