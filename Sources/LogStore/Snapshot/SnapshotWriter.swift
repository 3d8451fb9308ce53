// Writes a snapshot into a new store file: blocks as they fill, then the
// index, then the header that points at it (FORMAT.md §11).

import Foundation

/// How far a compaction has got, for a progress bar or a log line.
public struct CompactionProgress: Sendable, Hashable {
    /// Records written into the snapshot so far.
    public var records = 0
    /// Of how many live records.
    public var totalRecords = 0
    /// Raw (uncompressed) record bytes written.
    public var rawBytes: UInt64 = 0
    /// Bytes written to the new file.
    public var fileBytes: UInt64 = 0

    /// The part done, from 0 to 1.
    public var fraction: Double { totalRecords == 0 ? 1 : Double(records) / Double(totalRecords) }
}

/// How a compaction lays out the snapshot it writes.
enum SnapshotFormat: Sendable, Hashable {
    /// Blocks, then one index frame (FORMAT.md §11): format version 4.
    case indexFrame
    /// One run of data blocks and paged tables, a catalog and a base root
    /// (FORMAT.md §13): format version 7, whose leaves may hold runs of
    /// keys (§13.5) and whose transactions delete runs (§5.1).
    case paged
    /// Version 5's paged snapshot, whose leaves hold no run words: kept for
    /// the tests of version 5 files, as `indexFrame` is for version 4's.
    case pagedVersion5

    /// The format version of the files a compaction writes in it.
    var fileVersion: UInt16 {
        switch self {
        case .indexFrame: FileLayout.indexFrameVersion
        case .paged: FileLayout.pagedWriteVersion
        case .pagedVersion5: FileLayout.pagedSnapshotVersion
        }
    }

    var isPaged: Bool { self != .indexFrame }
}

/// Appends frames to a new file from an offset on: the snapshot writer's
/// blocks, and the index blocks its tables' writers hand back.
///
/// A reference, so that the table writers' closures and the snapshot
/// writer append to the one file position.
final class FrameAppender {
    private let file: any FileIO
    private let compressor: LZ4.Compressor?
    private let timestamp: Int64
    private var frame = ByteWriter(capacity: SnapshotLayout.defaultBlockSize + 4096)
    /// Where the next frame goes.
    private(set) var offset: UInt64

    /// An appender at `offset` of `file`, compressing each payload with LZ4
    /// when that makes it smaller unless `compression` is `.none`.
    init(file: any FileIO, at offset: UInt64, time: Date, compression: JournalOptions.Compression) {
        self.file = file
        compressor = compression == .lz4 ? LZ4.Compressor() : nil
        self.offset = offset
        timestamp = Microseconds(time)
    }

    /// Appends a frame of `kind` holding `payload`, compressed when that
    /// makes it smaller; returns its handle.
    @discardableResult
    func append(_ kind: FrameKind, sequence: UInt64, _ payload: [UInt8]) throws(LogStoreError) -> FrameHandle {
        let header = payload.withUnsafeBytes { raw in
            FrameHeader.encodeFrame(kind: kind, sequence: sequence, timestampMicroseconds: timestamp, payload: raw, compressor: compressor, into: &frame)
        }
        let handle = FrameHandle(offset: offset, storedSize: header.storedSize, rawSize: header.rawSize, checksum: header.checksum)
        try frame.bytes.withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: offset) }
        offset += UInt64(frame.count)
        return handle
    }

    /// Writes `header` at the start of the file and makes everything durable.
    func finish(header: FileHeader) throws(LogStoreError) {
        try header.encoded().withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: 0) }
        try file.synchronize()
    }
}

/// Streams live records into a new file's snapshot.
///
/// Records go in sorted by entity, then key; a block is compressed and
/// written as soon as it reaches the target size, so memory holds one block
/// and what indexes the blocks, never the records themselves: in
/// ``SnapshotFormat/indexFrame``, the index, which grows by the few bytes of
/// each record's key; in ``SnapshotFormat/paged``, one open block per level
/// of the key directory. The header is written last: until then the file
/// does not claim to be a store.
struct SnapshotWriter {
    let format: SnapshotFormat
    private let appender: FrameAppender
    private let time: Date
    private(set) var index: SnapshotIndex
    private(set) var progress = CompactionProgress()
    private var block = ByteWriter(capacity: SnapshotLayout.defaultBlockSize + 4096)
    /// The open block's records: how many, its first and last (entity,
    /// key). Plain values, not an optional directory entry, since they
    /// change at every record.
    private var blockCount = 0
    private var blockFirst = (entity: 0, key: UInt64(0))
    private var blockLast = (entity: 0, key: UInt64(0))

    /// The context every block starts with (FORMAT.md §11.2, §13.5), as
    /// given and encoded.
    private let context: BlockContext
    private let encodedContext: ByteWriter

    // A paged snapshot's key directory, and the records of the open block.
    private var keyDirectory: PagedTreeWriter?
    private var blockRecords: [(entity: Int, entry: PagedEntry)] = []
    private var entityKeys: [(entity: Int, last: UInt64)] = []
    private var dataBytes: UInt64 = 0

    /// The run a compaction's paged snapshot holds: the first.
    static let baseRun: UInt64 = 1
    /// The payload size index blocks are filled to (FORMAT.md §13.5).
    static let indexBlockSize = 16 << 10
    /// This writer's: ``indexBlockSize`` unless a test asks for less, to
    /// make tables of many leaves from few records.
    private let indexBlockSize: Int

    /// The size a compaction fills data blocks to when asked for
    /// `requested`: at least three times the encoded `context`, which every
    /// block repeats, so that a model of many entities and slots keeps its
    /// context to at most a quarter of each block's raw bytes.
    static func dataBlockSize(_ requested: Int, repeating context: BlockContext) -> Int {
        var encoded = ByteWriter(capacity: 1024)
        context.encode(into: &encoded)
        return max(requested, 3 * encoded.count)
    }

    /// A writer of a snapshot at `sequence` whose blocks start with
    /// `context` (whose sequence it must be), into `file`.
    init(file: any FileIO, format: SnapshotFormat = .indexFrame, compression: JournalOptions.Compression = .lz4, context: BlockContext, blockSize: Int,
         indexBlockSize: Int = Self.indexBlockSize, time: Date, totalRecords: Int) {
        self.format = format
        self.indexBlockSize = indexBlockSize
        self.time = time
        let start = format.isPaged ? FileLayout.pagedFramesStart : FileLayout.headerSize
        appender = FrameAppender(file: file, at: UInt64(start), time: time, compression: compression)
        index = SnapshotIndex(sequence: context.sequence, blockSize: max(blockSize, 1))
        index.blocksHaveContext = true
        index.isPaged = format.isPaged
        var encoded = ByteWriter(capacity: 1024)
        context.encode(into: &encoded)
        self.context = context
        encodedContext = encoded
        progress.totalRecords = totalRecords
        if format.isPaged {
            let runWords = format == .paged
            keyDirectory = PagedTreeWriter(type: .keys, run: Self.baseRun, table: 0, blockSize: indexBlockSize, runWords: runWords) { [appender] (block) throws(LogStoreError) in
                try appender.append(.indexBlock, sequence: Self.baseRun, block.encoded(as: .keys, runWords: runWords))
            }
        }
    }

    /// Starts the records of an entity, after those of every entity added
    /// before it; returns its position, which records, indexes and
    /// pointers name it by.
    mutating func addEntity(name: String, slots: [String], nextKey: UInt64) -> Int {
        index.entities.append(SnapshotIndex.Entity(name: name, slots: slots, nextKey: nextKey, keys: []))
        return index.entities.count - 1
    }

    /// Adds a record of the entity added last, with a key above the previous one's.
    mutating func append(key: UInt64, version: UInt64, values: UnsafeRawBufferPointer) throws(LogStoreError) {
        let entity = index.entities.count - 1
        if format.isPaged {
            precondition(entity >= 0 && (entityKeys.last.map { $0.entity < entity || key > $0.last } ?? true), "records out of order")
            if entityKeys.last?.entity == entity { entityKeys[entityKeys.count - 1].last = key } else { entityKeys.append((entity, key)) }
            blockRecords.append((entity, PagedEntry(key: key, state: .present)))
        } else {
            precondition(entity >= 0 && index.entities[entity].keys.last.map { key > $0 } ?? true, "records out of order")
            index.entities[entity].keys.append(key)
        }
        if blockCount == 0 {
            block.append(contentsOf: encodedContext.bytes)
            blockFirst = (entity, key)
        }
        SnapshotBlock.append(entity: entity, key: key, version: version, values: values, paged: format.isPaged, to: &block)
        blockCount += 1
        blockLast = (entity, key)
        progress.records += 1
        progress.rawBytes += UInt64(values.count)
        // blockSize counts the records' bytes: the context is the same in every
        // block. A paged block's records are entries of one key-directory leaf.
        if block.count - encodedContext.count >= index.blockSize || (format.isPaged && blockCount == PagedBlock.maximumLeafEntries) {
            try writeBlock()
        }
    }

    /// Writes the last block, the index and the header, and makes the file
    /// durable. Returns where the index frame starts, and where the journal
    /// frames after the snapshot go.
    mutating func finish(header: FileHeader, schema: [UInt8], dictionary: [UInt8]?, symbols: [String], indexes: [SnapshotIndex.Index], pointers: [SnapshotIndex.Pointers]) throws(LogStoreError) -> (indexOffset: UInt64, tailStart: UInt64) {
        precondition(format == .indexFrame)
        try writeBlock()
        index.schema = schema
        index.dictionary = dictionary
        index.symbols = symbols
        index.indexes = indexes
        index.pointers = pointers
        let indexOffset = appender.offset
        try appender.append(.snapshotIndex, sequence: index.sequence, index.encoded().bytes)
        progress.fileBytes = appender.offset
        try appender.finish(header: FileHeader(storeID: header.storeID, createdAt: header.createdAt, version: FileLayout.indexFrameVersion, snapshotIndexOffset: indexOffset))
        return (indexOffset, appender.offset)
    }

    /// Writes the last block, then the run's other tables, its catalog, the
    /// base root and the header (FORMAT.md §13.7, a rewrite), and makes the
    /// file durable. Returns where the root starts, and where the journal
    /// frames after the snapshot go.
    mutating func finishPaged(header: FileHeader, schema: [UInt8], dictionary: [UInt8]?, symbols: [String], indexes: [SnapshotIndex.Index], pointers: [SnapshotIndex.Pointers]) throws(LogStoreError) -> (rootOffset: UInt64, tailStart: UInt64) {
        precondition(format.isPaged)
        try writeBlock()
        let run = Self.baseRun
        guard var keyDirectory else { preconditionFailure("a paged writer has a key directory") }
        let keyTree = try keyDirectory.finish()
        var tables = [SnapshotRoot.Table(type: PagedTableType.keys.rawValue, entity: 0, name: "", height: keyTree.height, entryCount: keyTree.entryCount, top: keyTree.top)]

        // The other tables by entity, then name (as UTF-8 bytes).
        enum Source { case index(SnapshotIndex.Index), pointers(SnapshotIndex.Pointers) }
        let sources = (indexes.map { (entity: $0.entity, name: $0.attribute, source: Source.index($0)) }
            + pointers.map { (entity: $0.entity, name: $0.relationship, source: Source.pointers($0)) })
            .sorted { $0.entity != $1.entity ? $0.entity < $1.entity : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        for (entity, name, source) in sources {
            let position = tables.count
            let type: PagedTableType
            switch source {
            case .index: type = .values
            case .pointers: type = .targets
            }
            let runWords = format == .paged
            var writer = PagedTreeWriter(type: type, run: run, table: position, blockSize: indexBlockSize, runWords: runWords) { [appender] (block) throws(LogStoreError) in
                try appender.append(.indexBlock, sequence: run, block.encoded(as: type, runWords: runWords))
            }
            switch source {
            case .index(let index): try Self.appendEntries(of: index, to: &writer)
            case .pointers(let pointers):
                var start = 0
                for (target, count) in zip(pointers.targets, pointers.counts) {
                    try writer.append(.target(target), presentKeys: pointers.sources[start..<(start + count)])
                    start += count
                }
            }
            let tree = try writer.finish()
            tables.append(SnapshotRoot.Table(type: type.rawValue, entity: entity, name: name, height: tree.height, entryCount: tree.entryCount, top: tree.top))
        }

        let catalog = SnapshotCatalog(
            sequence: index.sequence, schema: schema, dictionary: dictionary, symbols: symbols,
            entities: context.entities.map { SnapshotCatalog.Entity(name: $0.name, slots: $0.slots, destinations: $0.destinations) })
        let catalogHandle = try appender.append(.catalog, sequence: index.sequence, catalog.encoded().bytes)
        let rootOffset = appender.offset
        let start = UInt64(FileLayout.pagedFramesStart)
        let indexBytes: UInt64 = rootOffset - start - dataBytes - catalogHandle.frameSize
        let baseRun = SnapshotRoot.Run(
            number: run, firstSequence: min(1, index.sequence), lastSequence: index.sequence, historyFrom: index.sequence,
            extentStart: start, extentEnd: rootOffset, catalog: catalogHandle, recordCount: UInt64(progress.records), tombstoneCount: 0,
            dataBytes: dataBytes, indexBytes: indexBytes, tables: tables)
        let nextKeys: [UInt64] = context.entities.map(\.nextKey)
        let root = SnapshotRoot(
            sequence: index.sequence, generation: 1, previousRoot: 0, journalOffset: rootOffset, catalog: catalogHandle,
            nextKeys: nextKeys, runs: [baseRun], nextRun: run + 1, deadBytes: 0)
        try appender.append(.root, sequence: index.sequence, root.encoded().bytes)
        progress.fileBytes = appender.offset
        try appender.finish(header: FileHeader(storeID: header.storeID, createdAt: header.createdAt, version: format.fileVersion, snapshotRootOffset: rootOffset))
        return (rootOffset, appender.offset)
    }

    /// A secondary index's entries in the order of its table: values whose
    /// index entries are cut to the same prefix (FORMAT.md §13.5) share a
    /// group, their keys merged in order.
    private static func appendEntries(of index: SnapshotIndex.Index, to writer: inout PagedTreeWriter) throws(LogStoreError) {
        var group: PagedGroup?
        var keys: [UInt64] = []
        var merged = false
        func flush(_ writer: inout PagedTreeWriter) throws(LogStoreError) {
            guard let group else { return }
            if merged { keys.sort() }
            try writer.append(group, presentKeys: keys)
        }
        var start = 0
        for (value, count) in zip(index.values, index.counts) {
            let next = PagedGroup.indexing(value)
            let groupKeys = index.keys[start..<(start + count)]
            start += count
            if let group, PagedGroup.order(group, next) == .orderedSame {
                keys += groupKeys
                merged = true
                continue
            }
            try flush(&writer)
            group = next
            keys = Array(groupKeys)
            merged = false
        }
        try flush(&writer)
    }

    private mutating func writeBlock() throws(LogStoreError) {
        guard blockCount > 0 else { return }
        let sequence = format.isPaged ? Self.baseRun : UInt64(index.blocks.count + 1)
        let handle = try appender.append(.snapshotBlock, sequence: sequence, block.bytes)
        progress.fileBytes = appender.offset
        if format.isPaged {
            dataBytes += handle.frameSize
            try keyDirectory?.append(dataBlock: handle, records: blockRecords)
            blockRecords.removeAll(keepingCapacity: true)
        } else {
            index.blocks.append(SnapshotIndex.Block(
                offset: handle.offset, storedSize: handle.storedSize, rawSize: handle.rawSize, checksum: handle.checksum, recordCount: blockCount,
                firstEntity: blockFirst.entity, firstKey: blockFirst.key, lastEntity: blockLast.entity, lastKey: blockLast.key))
        }
        blockCount = 0
        block.removeAll()
    }
}
