// Where a store file's transactions start, and what they depend on there.

/// The start of the journal in the current store file: where a file
/// without a snapshot starts its frames (after the header, and from format
/// version 5 the anchor pages: FORMAT.md §13.2), right after the snapshot
/// in one with (§11, §13). Frames there may use names declared and the
/// dictionary carried before it, so a reader starts from those.
struct TailOrigin: @unchecked Sendable {
    // @unchecked: `file` is a FileIO (Sendable) and SymbolTable is a value;
    // the dictionary is immutable.
    var file: any FileIO
    /// The offset of the first transaction frame.
    var start = UInt64(FileLayout.headerSize)
    /// The sequence number the first frame follows: the snapshot's, or nil
    /// in a file without one (its first frame may carry any number).
    var sequenceBefore: UInt64?
    /// Names declared before `start`.
    var symbols = SymbolTable()
    /// The store dictionary in force at `start`.
    var dictionary: LZ4.PresetDictionary?
    /// Frames appended here record what their writer knew durable
    /// (FORMAT.md §3): true in a file of format version 4 or later, which
    /// every new file and every compaction's file is; a writer appending to
    /// an older file leaves the field 0, as that version's readers require.
    var recordsDurability = true
    /// Its transactions may hold delete runs (FORMAT.md §5.1): the file's
    /// readVersion is 7 or later (``FileHeader/holdsDeleteRuns``). Every
    /// origin is made with it: read as false, a file's runs would be damage.
    var deleteRuns: Bool

    init(file: any FileIO, deleteRuns: Bool) {
        self.file = file
        self.deleteRuns = deleteRuns
    }

    /// The origin after `snapshot`, whose decoded index is `index`.
    init(file: any FileIO, after snapshot: SnapshotFile, index: SnapshotIndex, deleteRuns: Bool) throws(LogStoreError) {
        try self.init(file: file, start: snapshot.tailStart, index: index, deleteRuns: deleteRuns)
    }

    /// The origin at `start`, just after the snapshot index `index`.
    init(file: any FileIO, start: UInt64, index: SnapshotIndex, deleteRuns: Bool) throws(LogStoreError) {
        self.file = file
        self.deleteRuns = deleteRuns
        self.start = start
        sequenceBefore = index.sequence
        do throws(DecodeFailure) {
            for (number, name) in index.symbols.enumerated() { try symbols.declare(UInt64(number), name) }
        } catch {
            throw LogStoreError(.corruptSnapshot, "the snapshot index of \(file.path) has a bad name table: \(error.reason); restore the file from a backup", path: file.path, offset: start)
        }
        dictionary = index.dictionary.map(LZ4.PresetDictionary.init)
    }

    /// Scans the transactions from `start` to `limit`, checking that each
    /// decodes (not only its checksum: a frame whose contents do not decode
    /// is damage, found here rather than at a later read). Returns where
    /// they end (zeros after them are the writer's reserved space), and the
    /// names and dictionary in force after them.
    func checkTransactions(limit: UInt64) throws(LogStoreError) -> (summary: ScanSummary, symbols: SymbolTable, dictionary: LZ4.PresetDictionary?) {
        var symbols = symbols
        var decoder = PayloadDecoder(dictionary: dictionary, deleteRuns: deleteRuns)
        var scanner = FrameScanner(file: file, limit: limit, allowsReservedSpace: true)
        let summary = try scanner.scan(from: start, lastSequence: sequenceBefore) { (frame, stored) throws(DecodeFailure) in
            try Journal.checkKind(frame.header)
            try decoder.checkTransaction(frame.header, stored: stored, symbols: &symbols)
        }
        return (summary, symbols, decoder.dictionary)
    }
}
