// The catalog frame of a paged snapshot (FORMAT.md §13.4): what its runs'
// records and the journal after its root are read with.

/// The names, recorded model and store dictionary at a sequence number, and
/// each entity's slots: what a run's blocks are read with, and what the
/// transactions after the root that names it start from.
///
/// It grows with the model, never with the records, and a root names it by
/// handle, so a snapshot of any size reads it in one frame.
struct SnapshotCatalog: Sendable, Equatable {
    /// An entity as the runs store it.
    struct Entity: Sendable, Equatable {
        var name: String
        /// Its slots in the order of a record's values: attributes, then
        /// relationships.
        var slots: [String]
        /// Per slot, the position of the entity a relationship points to;
        /// nil for an attribute.
        var destinations: [Int?]
    }

    /// The last transaction it describes: the frame's sequence field.
    var sequence: UInt64
    /// The recorded model (FORMAT.md §5.4), empty if none.
    var schema: [UInt8] = []
    /// The store dictionary in force (FORMAT.md §5.3).
    var dictionary: [UInt8]?
    /// The names declared up to ``sequence``, in symbol order.
    var symbols: [String] = []
    var entities: [Entity] = []

    init(sequence: UInt64, schema: [UInt8], dictionary: [UInt8]?, symbols: [String], entities: [Entity]) {
        self.sequence = sequence
        self.schema = schema
        self.dictionary = dictionary
        self.symbols = symbols
        self.entities = entities
    }

    func encoded() -> ByteWriter {
        var writer = ByteWriter(capacity: 256 + schema.count + (dictionary?.count ?? 0))
        writer.appendVarint(sequence)
        SnapshotIndex.appendSchemaDictionaryNames(schema, dictionary, symbols, to: &writer)
        writer.appendVarint(UInt64(entities.count))
        for entity in entities {
            writer.appendLengthPrefixed(entity.name)
            BlockContext.appendSlots(entity.slots, entity.destinations, to: &writer)
        }
        // No extensions in version 5.
        writer.appendVarint(0)
        return writer
    }

    /// Decodes and checks a catalog payload: every count against the bytes
    /// left, the names distinct, each destination an entity listed.
    init(decoding raw: UnsafeRawBufferPointer) throws(DecodeFailure) {
        var reader = ByteReader(raw)
        sequence = try reader.readVarint()
        (schema, dictionary, symbols) = try SnapshotIndex.readSchemaDictionaryNames(&reader)
        let entityCount = try reader.readCount(minimumItemSize: 2)
        for _ in 0..<entityCount {
            let name = try reader.readString()
            let (slots, destinations) = try BlockContext.readSlots(&reader, of: name, entityCount: entityCount)
            entities.append(Entity(name: name, slots: slots, destinations: destinations))
        }
        guard Set(entities.map(\.name)).count == entities.count else { throw DecodeFailure("an entity is listed twice") }
        try SnapshotRoot.skipExtensions(&reader)
        guard reader.isAtEnd else { throw DecodeFailure("\(reader.remaining) bytes follow the catalog's extensions") }
    }

    /// The context each data block of a run with this catalog repeats
    /// (FORMAT.md §13.5): the run's last sequence, and the root's next keys.
    func blockContext(sequence: UInt64, nextKeys: [UInt64]) -> BlockContext {
        BlockContext(sequence: sequence, symbols: symbols, entities: zip(entities, nextKeys).map {
            BlockContext.Entity(name: $0.name, slots: $0.slots, destinations: $0.destinations, nextKey: $1)
        })
    }
}
