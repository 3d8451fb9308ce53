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

/// Streams live records into a new file's snapshot.
///
/// Records go in sorted by entity, then key; a block is compressed and
/// written as soon as it reaches the target size, so memory holds one block
/// and the index (which grows by the few bytes of each record's key), never
/// the records themselves. The header is written last: until then the file
/// does not claim to be a store.
struct SnapshotWriter {
    private let file: any FileIO
    private let compressor = LZ4.Compressor()
    private let timestamp: Int64
    private(set) var index: SnapshotIndex
    private(set) var progress = CompactionProgress()
    private var block = ByteWriter(capacity: SnapshotLayout.defaultBlockSize + 4096)
    private var blockEntry: SnapshotIndex.Block?
    private var frame = ByteWriter(capacity: SnapshotLayout.defaultBlockSize + 4096)
    /// Where the next frame goes.
    private var offset = UInt64(FileLayout.headerSize)

    /// The context every block starts with (FORMAT.md §11.2).
    private let context: ByteWriter

    /// A writer of a snapshot at `sequence` whose blocks start with
    /// `context` (whose sequence it must be), into `file`.
    init(file: any FileIO, context: BlockContext, blockSize: Int, time: Date, totalRecords: Int) {
        self.file = file
        timestamp = Microseconds(time)
        index = SnapshotIndex(sequence: context.sequence, blockSize: max(blockSize, 1))
        index.blocksHaveContext = true
        var encoded = ByteWriter(capacity: 1024)
        context.encode(into: &encoded)
        self.context = encoded
        progress.totalRecords = totalRecords
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
        precondition(entity >= 0 && index.entities[entity].keys.last.map { key > $0 } ?? true, "records out of order")
        if blockEntry == nil { block.append(contentsOf: context.bytes) }
        SnapshotBlock.append(entity: entity, key: key, version: version, values: values, to: &block)
        index.entities[entity].keys.append(key)
        if blockEntry == nil {
            blockEntry = SnapshotIndex.Block(offset: offset, storedSize: 0, rawSize: 0, checksum: 0, recordCount: 0, firstEntity: entity, firstKey: key, lastEntity: entity, lastKey: key)
        }
        blockEntry?.recordCount += 1
        blockEntry?.lastEntity = entity
        blockEntry?.lastKey = key
        progress.records += 1
        progress.rawBytes += UInt64(values.count)
        // blockSize counts the records' bytes: the context is the same in every block.
        if block.count - context.count >= index.blockSize { try writeBlock() }
    }

    /// Writes the last block, the index and the header, and makes the file
    /// durable. Returns where the index frame starts, and where the journal
    /// frames after the snapshot go.
    mutating func finish(header: FileHeader, schema: [UInt8], dictionary: [UInt8]?, symbols: [String], indexes: [SnapshotIndex.Index], pointers: [SnapshotIndex.Pointers]) throws(LogStoreError) -> (indexOffset: UInt64, tailStart: UInt64) {
        try writeBlock()
        index.schema = schema
        index.dictionary = dictionary
        index.symbols = symbols
        index.indexes = indexes
        index.pointers = pointers
        let indexOffset = offset
        let payload = index.encoded()
        payload.bytes.withUnsafeBytes { raw in
            _ = FrameHeader.encodeFrame(kind: .snapshotIndex, sequence: index.sequence, timestampMicroseconds: timestamp, payload: raw, compressor: compressor, into: &frame)
        }
        try write(frame)
        let header = FileHeader(storeID: header.storeID, createdAt: header.createdAt, snapshotIndexOffset: indexOffset)
        try header.encoded().withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: 0) }
        try file.synchronize()
        return (indexOffset, offset)
    }

    private mutating func writeBlock() throws(LogStoreError) {
        guard var entry = blockEntry else { return }
        let sequence = UInt64(index.blocks.count + 1)
        let header = block.bytes.withUnsafeBytes { raw in
            FrameHeader.encodeFrame(kind: .snapshotBlock, sequence: sequence, timestampMicroseconds: timestamp, payload: raw, compressor: compressor, into: &frame)
        }
        entry.storedSize = header.storedSize
        entry.rawSize = header.rawSize
        entry.checksum = header.checksum
        try write(frame)
        index.blocks.append(entry)
        blockEntry = nil
        block.removeAll()
    }

    private mutating func write(_ bytes: ByteWriter) throws(LogStoreError) {
        try bytes.bytes.withBytes { (raw) throws(LogStoreError) in try file.write(raw, at: offset) }
        offset += UInt64(bytes.count)
        progress.fileBytes = offset
    }
}
