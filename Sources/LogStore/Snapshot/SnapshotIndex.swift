// The snapshot index: block directory, entity layouts and keys, secondary
// indexes and relationship pointers (FORMAT.md §11.3).

/// What a snapshot holds besides its records, decoded from its index frame.
///
/// Open reads it instead of replaying history: it says where every live
/// record is (by entity, key list and block), and carries what would
/// otherwise have to be rebuilt from every record (secondary indexes and
/// the reverse of stored relationships), and what the journal frames after
/// the snapshot depend on (the names they use, the store dictionary).
struct SnapshotIndex: Sendable, Equatable {
    /// An entity's records in the snapshot.
    struct Entity: Sendable, Equatable {
        var name: String
        /// The names of its slots, in the order of each record's values:
        /// attributes (transient ones hold nil), then relationships.
        var slots: [String]
        /// The next key the store gives out for this entity.
        var nextKey: UInt64
        /// Its live records' keys, increasing; empty when `inSnapshot` holds them.
        var keys: [UInt64]
        /// Its live records' keys and where each is, when the reader
        /// located them, or found the leaves that do, instead of listing
        /// them: a store's open of a paged snapshot
        /// (``SnapshotFile/openPaged(_:rootOffset:fileSize:cacheCapacity:checkingDataBlocks:readingWholeIndexes:)``).
        var inSnapshot: SnapshotKeys? = nil
    }

    /// One block's entry in the directory.
    struct Block: Sendable, Equatable {
        /// Where the block's frame starts in the file.
        var offset: UInt64
        var storedSize: UInt32
        var rawSize: UInt32
        /// The frame's CRC32C, as its header holds it.
        var checksum: UInt32
        var recordCount: Int
        /// The first and last record, as (entity position, key).
        var firstEntity: Int
        var firstKey: UInt64
        var lastEntity: Int
        var lastKey: UInt64
        /// The positions of records that are not live, increasing: in a
        /// paged snapshot, tombstones and older versions (FORMAT.md §13.5).
        var skipped: [Int] = []

        var frameSize: UInt64 { UInt64(FrameLayout.headerSize) + UInt64(storedSize) }
    }

    /// One secondary index: keys grouped by value, in value order.
    struct Index: Sendable, Equatable {
        var entity: Int
        var attribute: String
        var values: [StoredValue]
        /// How many keys each value has (in `keys`, one run per value).
        var counts: [Int]
        var keys: [UInt64]
    }

    /// The reverse of one stored relationship: for each target key, the
    /// keys of the records pointing at it.
    struct Pointers: Sendable, Equatable {
        var entity: Int
        var relationship: String
        var targets: [UInt64]
        var counts: [Int]
        var sources: [UInt64]
    }

    /// The last transaction the snapshot includes.
    var sequence: UInt64
    /// The raw size blocks were filled to.
    var blockSize: Int
    /// The stored model at `sequence` (FORMAT.md §5.4), empty if none.
    var schema: [UInt8] = []
    /// The store dictionary in force at `sequence` (FORMAT.md §5.3).
    var dictionary: [UInt8]?
    /// The names declared by frames up to `sequence`, in symbol order.
    var symbols: [String] = []
    var entities: [Entity] = []
    var blocks: [Block] = []
    var indexes: [Index] = []
    var pointers: [Pointers] = []
    /// Whether its blocks start with a ``BlockContext`` (format version 4
    /// on): said by the file's header, not by the index payload.
    var blocksHaveContext = false
    /// Whether it was read from a paged snapshot (format version 5), whose
    /// blocks give each record's length plus one (FORMAT.md §13.5).
    var isPaged = false

    var recordCount: Int { entities.reduce(0) { $0 + ($1.inSnapshot?.count ?? $1.keys.count) } }

    /// An empty index, for a writer to fill.
    init(sequence: UInt64, blockSize: Int) {
        self.sequence = sequence
        self.blockSize = blockSize
    }

    // MARK: - Encoding

    func encoded() -> ByteWriter {
        var writer = ByteWriter(capacity: 1024 + recordCount * 2)
        writer.appendVarint(sequence)
        writer.appendVarint(UInt64(blockSize))
        Self.appendSchemaDictionaryNames(schema, dictionary, symbols, to: &writer)
        writer.appendVarint(UInt64(entities.count))
        for entity in entities {
            writer.appendLengthPrefixed(entity.name)
            Self.appendStrings(entity.slots, to: &writer)
            writer.appendVarint(entity.nextKey)
            Self.appendIncreasing(entity.keys, to: &writer)
        }
        writer.appendVarint(UInt64(blocks.count))
        for block in blocks {
            writer.appendVarint(block.offset)
            writer.appendVarint(UInt64(block.storedSize))
            writer.appendVarint(UInt64(block.rawSize))
            writer.appendFixed(block.checksum)
            writer.appendVarint(UInt64(block.recordCount))
            writer.appendVarint(UInt64(block.firstEntity))
            writer.appendVarint(block.firstKey)
            writer.appendVarint(UInt64(block.lastEntity))
            writer.appendVarint(block.lastKey)
        }
        writer.appendVarint(UInt64(indexes.count))
        for index in indexes {
            writer.appendVarint(UInt64(index.entity))
            writer.appendLengthPrefixed(index.attribute)
            writer.appendVarint(UInt64(index.values.count))
            var start = 0
            for (value, count) in zip(index.values, index.counts) {
                writer.append(value)
                Self.appendIncreasing(index.keys[start..<(start + count)], to: &writer)
                start += count
            }
        }
        writer.appendVarint(UInt64(pointers.count))
        for pointers in pointers {
            writer.appendVarint(UInt64(pointers.entity))
            writer.appendLengthPrefixed(pointers.relationship)
            Self.appendIncreasing(pointers.targets, to: &writer)
            var start = 0
            for count in pointers.counts {
                Self.appendIncreasing(pointers.sources[start..<(start + count)], to: &writer)
                start += count
            }
        }
        return writer
    }

    /// A count, then increasing numbers as differences: the first from 0,
    /// each later one from the one before (never 0: they strictly increase).
    private static func appendIncreasing(_ numbers: some Collection<UInt64>, to writer: inout ByteWriter) {
        writer.appendVarint(UInt64(numbers.count))
        var previous: UInt64 = 0
        for (position, number) in numbers.enumerated() {
            writer.appendVarint(position == 0 ? number : number - previous)
            previous = number
        }
    }

    // MARK: - Decoding

    /// Decodes and checks an index payload. Every count is checked against
    /// the bytes left before anything is allocated for it, and every
    /// reference (an entity position, a block's records) against what the
    /// index declares.
    init(decoding raw: UnsafeRawBufferPointer) throws(DecodeFailure) {
        var reader = ByteReader(raw)
        sequence = try reader.readVarint()
        blockSize = Int(clamping: try reader.readVarint())
        (schema, dictionary, symbols) = try Self.readSchemaDictionaryNames(&reader)

        let entityCount = try reader.readCount()
        for _ in 0..<entityCount {
            let name = try reader.readString()
            let slots = try Self.readStrings(&reader)
            let nextKey = try reader.readVarint()
            let keys = try Self.readIncreasing(&reader)
            guard nextKey <= RecordID.keyLimit else { throw DecodeFailure("entity \(name) gives out key \(nextKey) next, past the limit of 2^62") }
            guard keys.last.map({ $0 < nextKey }) ?? true else {
                throw DecodeFailure("entity \(name) has key \(keys.last ?? 0) but gives out \(nextKey) next")
            }
            entities.append(Entity(name: name, slots: slots, nextKey: nextKey, keys: keys))
        }
        guard Set(entities.map(\.name)).count == entities.count else { throw DecodeFailure("an entity is listed twice") }

        let blockCount = try reader.readCount(minimumItemSize: 13)
        blocks.reserveCapacity(blockCount)
        for _ in 0..<blockCount {
            let block = Block(
                offset: try reader.readVarint(), storedSize: try Self.readSize(&reader), rawSize: try Self.readSize(&reader),
                checksum: try reader.readFixed(UInt32.self), recordCount: Int(clamping: try reader.readVarint()),
                firstEntity: Int(clamping: try reader.readVarint()), firstKey: try reader.readVarint(),
                lastEntity: Int(clamping: try reader.readVarint()), lastKey: try reader.readVarint())
            // No block holds more records than the entities list, so their sum cannot overflow.
            guard block.recordCount > 0, block.recordCount <= recordCount, block.firstEntity < entityCount, block.lastEntity < entityCount else {
                throw DecodeFailure("block \(blocks.count + 1) is empty or names an entity the snapshot does not have")
            }
            blocks.append(block)
        }
        // Each count at most the keys listed, and fewer blocks than bytes: the sum stays far below Int.max.
        let keyCount = recordCount
        guard blocks.allSatisfy({ $0.recordCount <= keyCount }), blocks.reduce(0, { $0 + $1.recordCount }) == keyCount else {
            throw DecodeFailure("the blocks' record counts do not add up to the \(keyCount) keys the entities list")
        }

        let indexCount = try reader.readCount()
        for _ in 0..<indexCount {
            let entity = try Self.readEntity(&reader, entityCount)
            let attribute = try reader.readString()
            let groupCount = try reader.readCount(minimumItemSize: 2)
            var index = Index(entity: entity, attribute: attribute, values: [], counts: [], keys: [])
            for _ in 0..<groupCount {
                index.values.append(try reader.readValue())
                let keys = try Self.readIncreasing(&reader)
                index.counts.append(keys.count)
                index.keys += keys
            }
            indexes.append(index)
        }

        let pointerCount = try reader.readCount()
        for _ in 0..<pointerCount {
            let entity = try Self.readEntity(&reader, entityCount)
            let relationship = try reader.readString()
            let targets = try Self.readIncreasing(&reader)
            var pointers = Pointers(entity: entity, relationship: relationship, targets: targets, counts: [], sources: [])
            for _ in targets {
                let sources = try Self.readIncreasing(&reader)
                pointers.counts.append(sources.count)
                pointers.sources += sources
            }
            self.pointers.append(pointers)
        }
        guard reader.isAtEnd else { throw DecodeFailure("\(reader.remaining) bytes follow the index's last section") }
    }

    /// What the frames after a snapshot depend on: the recorded model, the
    /// store dictionary (empty when none) and the name table, as an index
    /// (FORMAT.md §11.3) and a catalog (§13.4) hold them.
    static func appendSchemaDictionaryNames(_ schema: [UInt8], _ dictionary: [UInt8]?, _ symbols: [String], to writer: inout ByteWriter) {
        schema.withUnsafeBytes { writer.appendLengthPrefixed($0) }
        (dictionary ?? []).withUnsafeBytes { writer.appendLengthPrefixed($0) }
        appendStrings(symbols, to: &writer)
    }

    /// Reads what ``appendSchemaDictionaryNames(_:_:_:to:)`` writes: the
    /// dictionary within its limit, the names distinct and not empty.
    static func readSchemaDictionaryNames(_ reader: inout ByteReader) throws(DecodeFailure) -> (schema: [UInt8], dictionary: [UInt8]?, symbols: [String]) {
        let schema = Array(try reader.readLengthPrefixed())
        let dictionary = try reader.readLengthPrefixed()
        guard dictionary.count <= FrameLayout.maxDictionarySize else {
            throw DecodeFailure("the store dictionary has \(dictionary.count) bytes, over \(FrameLayout.maxDictionarySize)")
        }
        let symbols = try readStrings(&reader)
        guard Set(symbols).count == symbols.count, !symbols.contains("") else {
            throw DecodeFailure("the name table repeats a name or holds an empty one")
        }
        return (schema, dictionary.isEmpty ? nil : Array(dictionary), symbols)
    }

    /// A count, then that many length-prefixed strings (a name table, slot names).
    static func appendStrings(_ strings: [String], to writer: inout ByteWriter) {
        writer.appendVarint(UInt64(strings.count))
        for string in strings { writer.appendLengthPrefixed(string) }
    }

    /// Reads what ``appendStrings(_:to:)`` writes, the count checked against the bytes left.
    static func readStrings(_ reader: inout ByteReader) throws(DecodeFailure) -> [String] {
        let count = try reader.readCount()
        var strings: [String] = []
        strings.reserveCapacity(count)
        for _ in 0..<count { strings.append(try reader.readString()) }
        return strings
    }

    private static func readIncreasing(_ reader: inout ByteReader) throws(DecodeFailure) -> [UInt64] {
        let count = try reader.readCount()
        var numbers: [UInt64] = []
        numbers.reserveCapacity(count)
        var previous: UInt64 = 0
        for position in 0..<count {
            let step = try reader.readVarint()
            guard position == 0 || step > 0, case (let next, false) = previous.addingReportingOverflow(step) else {
                throw DecodeFailure("a list of keys that does not strictly increase, at byte \(reader.position)")
            }
            numbers.append(next)
            previous = next
        }
        return numbers
    }

    private static func readSize(_ reader: inout ByteReader) throws(DecodeFailure) -> UInt32 {
        let size = try reader.readVarint()
        guard size <= UInt64(FrameLayout.maxPayloadSize) else { throw DecodeFailure("a block size of \(size) bytes, over the frame limit") }
        return UInt32(size)
    }

    private static func readEntity(_ reader: inout ByteReader, _ count: Int) throws(DecodeFailure) -> Int {
        let entity = try reader.readVarint()
        guard entity < UInt64(count) else { throw DecodeFailure("a section names entity #\(entity), but the snapshot has \(count)") }
        return Int(entity)
    }
}
