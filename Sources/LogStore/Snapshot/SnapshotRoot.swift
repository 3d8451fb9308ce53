// The root frame of a paged snapshot (FORMAT.md §13.4): its runs, their
// tables, and where the journal after it starts.

/// The top of a paged snapshot. It grows with the entities, runs and
/// tables, never with the records: every table is a tree of index blocks
/// it names by handle.
struct SnapshotRoot: Sendable, Equatable {
    /// One table of a run, as the root lists it.
    struct Table: Sendable, Equatable {
        /// ``PagedTableType``'s raw value; a type this version does not know
        /// is kept (table numbers are positions) and not read.
        var type: UInt64
        /// A position in the run's catalog; 0 for the key directory.
        var entity: Int
        /// The attribute or relationship; empty for the key directory.
        var name: String
        var height: Int
        var entryCount: UInt64
        var top: FrameHandle

        /// The tree of run `run`'s table at `position`, if of a known type.
        func tree(run: UInt64, position: Int) -> PagedTree? {
            PagedTableType(rawValue: type).map {
                PagedTree(type: $0, run: run, table: position, height: height, entryCount: entryCount, top: top)
            }
        }
    }

    /// The changes of a range of transactions: data blocks and tables.
    struct Run: Sendable, Equatable {
        /// The sequence field of the run's frames.
        var number: UInt64
        var firstSequence: UInt64
        var lastSequence: UInt64
        /// Every version newer than it is kept (FORMAT.md §13.11);
        /// lastSequence when the run keeps no history.
        var historyFrom: UInt64
        /// Every frame of the run lies in `extentStart ..< extentEnd`.
        var extentStart: UInt64
        var extentEnd: UInt64
        var catalog: FrameHandle
        /// Records (tombstones and older versions included), tombstones,
        /// and the bytes of its data and index frames: informative.
        var recordCount: UInt64
        var tombstoneCount: UInt64
        var dataBytes: UInt64
        var indexBytes: UInt64
        /// The key directory first, then the other tables by entity and name.
        var tables: [Table]
    }

    /// *L*: the runs hold every transaction up to it.
    var sequence: UInt64
    /// 1 in a base root, else the replaced root's plus one.
    var generation: UInt64
    /// The replaced root's offset, 0 in a base root.
    var previousRoot: UInt64
    /// Where replay of the journal starts.
    var journalOffset: UInt64
    var catalog: FrameHandle
    /// Per entity of the catalog, the next key it gives out.
    var nextKeys: [UInt64]
    /// Newest first.
    var runs: [Run]
    var nextRun: UInt64
    /// Bytes before the root's end it no longer needs: informative.
    var deadBytes: UInt64

    // MARK: - Encoding

    func encoded() -> ByteWriter {
        var writer = ByteWriter(capacity: 512)
        writer.appendVarint(sequence)
        writer.appendVarint(generation)
        writer.appendVarint(previousRoot)
        writer.appendVarint(journalOffset)
        writer.append(catalog)
        writer.appendVarint(UInt64(nextKeys.count))
        for key in nextKeys { writer.appendVarint(key) }
        writer.appendVarint(UInt64(runs.count))
        for run in runs {
            for field in [run.number, run.firstSequence, run.lastSequence, run.historyFrom, run.extentStart, run.extentEnd] {
                writer.appendVarint(field)
            }
            writer.append(run.catalog)
            for field in [run.recordCount, run.tombstoneCount, run.dataBytes, run.indexBytes] { writer.appendVarint(field) }
            writer.appendVarint(UInt64(run.tables.count))
            for table in run.tables {
                writer.appendVarint(table.type)
                writer.appendVarint(UInt64(table.entity))
                writer.appendLengthPrefixed(table.name)
                writer.appendVarint(UInt64(table.height))
                writer.appendVarint(table.entryCount)
                writer.append(table.top)
            }
        }
        writer.appendVarint(nextRun)
        writer.appendVarint(deadBytes)
        // No extensions in version 5.
        writer.appendVarint(0)
        return writer
    }
}

// Decoding, in an extension to keep the memberwise initializer.
extension SnapshotRoot {

    /// Decodes a root payload and checks the rules of FORMAT.md §13.4 that
    /// need nothing else: the generation, the runs' numbers and ranges, and
    /// the order of each run's tables. The catalog's entity count, the
    /// frame's offset and the file's size are the caller's to check.
    init(decoding raw: UnsafeRawBufferPointer) throws(DecodeFailure) {
        var reader = ByteReader(raw)
        sequence = try reader.readVarint()
        generation = try reader.readVarint()
        previousRoot = try reader.readVarint()
        journalOffset = try reader.readVarint()
        catalog = try reader.readHandle()
        guard generation >= 1, (generation == 1) == (previousRoot == 0) else {
            throw DecodeFailure("generation \(generation) with a previous root at \(previousRoot): a base root has generation 1 and no previous root, any other both")
        }
        let keyCount = try reader.readCount()
        nextKeys = []
        nextKeys.reserveCapacity(keyCount)
        for _ in 0..<keyCount {
            let key = try reader.readVarint()
            guard key <= RecordID.keyLimit else { throw DecodeFailure("an entity gives out key \(key) next, past the limit of 2^62") }
            nextKeys.append(key)
        }
        // A run takes at least 6 + 7 + 4 + 1 bytes.
        let runCount = try reader.readCount(minimumItemSize: 18)
        runs = []
        for _ in 0..<runCount {
            runs.append(try Self.readRun(&reader))
        }
        nextRun = try reader.readVarint()
        deadBytes = try reader.readVarint()
        try Self.skipExtensions(&reader)
        guard reader.isAtEnd else { throw DecodeFailure("\(reader.remaining) bytes follow the root's extensions") }

        var newer: Run?
        for run in runs {
            guard run.number >= 1, run.number < nextRun else {
                throw DecodeFailure("run \(run.number) is numbered outside 1 ..< \(nextRun), the next run's number")
            }
            guard run.firstSequence <= run.lastSequence, run.lastSequence <= sequence else {
                throw DecodeFailure("run \(run.number) covers transactions \(run.firstSequence) to \(run.lastSequence), outside 1 to \(sequence)")
            }
            guard run.historyFrom <= run.lastSequence, run.historyFrom >= run.firstSequence - min(run.firstSequence, 1) else {
                throw DecodeFailure("run \(run.number) keeps history from \(run.historyFrom), outside its transactions")
            }
            guard run.extentStart <= run.extentEnd else { throw DecodeFailure("run \(run.number) has an extent that ends before it starts") }
            if let newer, newer.firstSequence <= run.lastSequence {
                throw DecodeFailure("run \(run.number) overlaps run \(newer.number), listed before it as newer")
            }
            newer = run
        }
        guard Set(runs.map(\.number)).count == runs.count else { throw DecodeFailure("a run number is listed twice") }
    }

    private static func readRun(_ reader: inout ByteReader) throws(DecodeFailure) -> Run {
        var run = Run(
            number: try reader.readVarint(), firstSequence: try reader.readVarint(), lastSequence: try reader.readVarint(),
            historyFrom: try reader.readVarint(), extentStart: try reader.readVarint(), extentEnd: try reader.readVarint(),
            catalog: try reader.readHandle(), recordCount: try reader.readVarint(), tombstoneCount: try reader.readVarint(),
            dataBytes: try reader.readVarint(), indexBytes: try reader.readVarint(), tables: [])
        // A table takes at least 5 bytes and a handle.
        let tableCount = try reader.readCount(minimumItemSize: 5 + FrameHandle.minimumEncodedSize)
        for position in 0..<tableCount {
            let table = Table(
                type: try reader.readVarint(), entity: Int(clamping: try reader.readVarint()), name: try reader.readString(),
                height: Int(clamping: try reader.readVarint()), entryCount: try reader.readVarint(), top: try reader.readHandle())
            guard table.height < PagedTree.maximumHeight else {
                throw DecodeFailure("table \(position) of run \(run.number) claims a height of \(table.height)")
            }
            if position == 0 {
                guard table.type == PagedTableType.keys.rawValue, table.entity == 0, table.name.isEmpty else {
                    throw DecodeFailure("run \(run.number) does not list its key directory first")
                }
            } else {
                let previous = run.tables[position - 1]
                // Names compare as UTF-8 bytes, as the writer orders them.
                let ordered = previous.entity != table.entity ? previous.entity < table.entity : previous.name.utf8.lexicographicallyPrecedes(table.name.utf8)
                guard table.type != PagedTableType.keys.rawValue, position == 1 || ordered else {
                    throw DecodeFailure("table \(position) of run \(run.number) is out of order, or a second key directory")
                }
            }
            run.tables.append(table)
        }
        guard !run.tables.isEmpty else { throw DecodeFailure("run \(run.number) has no key directory") }
        return run
    }

    /// Skips a list of extensions (FORMAT.md §13.4): version 5 defines none,
    /// and a reader skips every tag.
    static func skipExtensions(_ reader: inout ByteReader) throws(DecodeFailure) {
        let count = try reader.readCount(minimumItemSize: 2)
        for _ in 0..<count {
            _ = try reader.readVarint()
            _ = try reader.readLengthPrefixed()
        }
    }
}
