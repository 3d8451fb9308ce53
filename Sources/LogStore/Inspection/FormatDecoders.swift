// Each decoder of the file format, callable on arbitrary bytes, for the fuzz
// targets (Fuzz/) and their regression tests. Not part of the public API.

import Foundation

/// Runs one decoder of the file format on arbitrary bytes.
///
/// A decoder must throw on bad input: never trap, read outside its buffer,
/// loop, or allocate more than the bytes it was given justify. Where one
/// succeeds, what it decoded must survive a round trip: encoded and decoded
/// again, it encodes to the same bytes. A broken round trip is a bug that
/// would corrupt data on the next write, so it traps, and the fuzzer records
/// the input.
@_spi(Fuzzing)
public enum FormatDecoders {
    /// The structures a fuzz input can be decoded as; the input's first byte
    /// picks one (modulo the number of cases).
    public enum Structure: UInt8, CaseIterable, Sendable {
        /// A run of values (FORMAT.md §5.2), each round-tripped.
        case values
        /// A transaction payload: declarations, then changes (§5.1); the
        /// full decode and open's check must agree, and the changes round-trip.
        case transaction
        /// An LZ4 block: two bytes of declared size (in units of 16 bytes),
        /// then the block. Also compresses the bytes and checks they come back.
        case lz4Block
        /// The 64-byte file header (§3), round-tripped.
        case fileHeader
        /// A 40-byte frame header (§4).
        case frameHeader
        /// The stored model (§6).
        case schema
        /// A snapshot index payload (§11), round-tripped.
        case snapshotIndex
        /// An index block of a paged table (§13.5): a byte choosing the
        /// table's type, then the block's payload, round-tripped.
        case pagedBlock
        /// A paged snapshot's catalog payload (§13.4), round-tripped.
        case catalog
        /// A paged snapshot's root payload (§13.4), round-tripped.
        case root
    }

    /// Decodes `input` after its first byte as the structure the first byte names.
    public static func decode(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let structure = Structure.allCases[Int(first) % Structure.allCases.count]
        decode(UnsafeRawBufferPointer(rebasing: input.dropFirst()), as: structure)
    }

    /// Decodes `bytes` as `structure`, trapping only on a broken round trip.
    public static func decode(_ bytes: UnsafeRawBufferPointer, as structure: Structure) {
        switch structure {
        case .values: values(bytes)
        case .transaction: transaction(bytes)
        case .lz4Block: lz4Block(bytes)
        case .fileHeader: fileHeader(bytes)
        case .frameHeader: frameHeader(bytes)
        case .schema: _ = try? StoredSchema.decode(Data(bytes), path: "fuzz input")
        case .snapshotIndex: snapshotIndex(bytes)
        case .pagedBlock: pagedBlock(bytes)
        case .catalog: catalog(bytes)
        case .root: root(bytes)
        }
    }

    /// Seed inputs for every structure, taken from a real store file's
    /// bytes (its header, and each frame's header and payload) and from the
    /// model it was written with. Each seed starts with its structure's byte.
    public static func seeds(fromStore file: [UInt8], model: Model) -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        func seed(_ structure: Structure, _ bytes: some Sequence<UInt8>) { seeds.append([structure.rawValue] + bytes) }
        seed(.fileHeader, file.prefix(FileLayout.headerSize))
        seed(.schema, StoredSchema(model).encoded())
        let fileHeader = file.withUnsafeBytes { try? FileHeader.decode(UnsafeRawBufferPointer(rebasing: $0.prefix(FileLayout.headerSize)), path: "seed") }
        var offset = Int(fileHeader?.framesStart ?? UInt64(FileLayout.headerSize))
        while offset + FrameLayout.headerSize <= file.count {
            let headerBytes = Array(file[offset..<offset + FrameLayout.headerSize])
            guard case .success(let header) = headerBytes.withUnsafeBytes(FrameHeader.parse) else { break }
            let end = offset + FrameLayout.headerSize + Int(header.storedSize)
            guard end <= file.count else { break }
            let stored = Array(file[offset + FrameLayout.headerSize..<end])
            seed(.frameHeader, file[offset..<end])
            offset = end
            var raw = stored
            switch header.codec {
            case .raw: break
            case .lz4BlockWithDictionary: continue
            case .lz4Block:
                let size = Int(header.rawSize)
                seed(.lz4Block, [UInt8(truncatingIfNeeded: size >> 4), UInt8(truncatingIfNeeded: size >> 12)] + stored)
                raw = [UInt8](repeating: 0, count: size)
                let decompressed: Void? = stored.withUnsafeBytes { source in raw.withUnsafeMutableBytes { try? LZ4.decompress(source, into: $0) } }
                guard decompressed != nil else { continue }
            }
            switch header.kind {
            case .transaction where !header.carriesDictionary:
                seed(.transaction, raw)
                var symbols = SymbolTable()
                let changes = raw.withUnsafeBytes { bytes -> [RecordChange] in
                    var reader = ByteReader(bytes)
                    guard (try? TransactionPayload.readDeclarations(from: &reader, into: &symbols)) != nil else { return [] }
                    return (try? TransactionPayload.readChanges(from: &reader, symbols: symbols, deleteRuns: true)) ?? []
                }
                var values = ByteWriter()
                for case .insert(_, let fields) in changes { for field in fields { values.append(field.value) } }
                if !values.bytes.isEmpty { seed(.values, values.bytes) }
            case .snapshotIndex:
                seed(.snapshotIndex, raw)
            case .catalog:
                seed(.catalog, raw)
            case .root:
                seed(.root, raw)
            default:
                break
            }
        }
        for (type, block) in pagedBlockSeeds() { seed(.pagedBlock, [UInt8(type.rawValue)] + block) }
        return seeds
    }

    /// Blocks of small tables of each type, leaves and branches, written
    /// by ``PagedTreeWriter`` with tiny blocks.
    private static func pagedBlockSeeds() -> [(PagedTableType, [UInt8])] {
        let values: [StoredValue] = [.null, .int64(-3), .double(2.5), .string("Lamp"), .string(String(repeating: "é", count: 600)), .data(Data(count: 1_500)), .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))]
        var blocks: [(PagedTableType, [UInt8])] = []
        for type in [PagedTableType.keys, .values, .targets] {
            var writer = PagedTreeWriter(type: type, run: 3, table: 1, blockSize: 40) { block in
                blocks.append((type, block.encoded(as: type)))
                return FrameHandle(offset: 0x3000 + UInt64(blocks.count) * 100, storedSize: 80, rawSize: 90, checksum: UInt32(blocks.count))
            }
            switch type {
            case .keys:
                for block in 0..<6 {
                    let records = (1...4).map { (entity: block / 3, entry: PagedEntry(key: UInt64(block * 4 + $0), state: $0 == 2 ? .tombstone : .present)) }
                    try? writer.append(dataBlock: FrameHandle(offset: 0x3000 + UInt64(block) * 64, storedSize: 24, rawSize: 30, checksum: 7), records: records)
                }
            case .values:
                let groups = values.map(PagedGroup.indexing).sorted { PagedGroup.order($0, $1) == .orderedAscending }
                for (position, group) in groups.enumerated() {
                    for key in 1...3 { try? writer.append(group, PagedEntry(key: UInt64(position * 3 + key), state: key == 3 ? .tombstone : .present)) }
                }
            case .targets:
                for target in 1...8 { try? writer.append(.target(UInt64(target)), PagedEntry(key: UInt64(target * 2), state: .present)) }
            }
            _ = try? writer.finish()
        }
        return blocks
    }

    private static func values(_ bytes: UnsafeRawBufferPointer) {
        var reader = ByteReader(bytes)
        while !reader.isAtEnd, let value = try? reader.readValue() {
            var first = ByteWriter()
            first.append(value)
            let again = first.bytes.withUnsafeBytes { raw in
                var reader = ByteReader(raw)
                return try? reader.readValue()
            }
            var second = ByteWriter()
            if let again { second.append(again) }
            precondition(again != nil && first.bytes == second.bytes, "value \(value) does not survive a round trip")
        }
    }

    private static func transaction(_ bytes: UnsafeRawBufferPointer) {
        var symbols = SymbolTable()
        var reader = ByteReader(bytes)
        guard (try? TransactionPayload.readDeclarations(from: &reader, into: &symbols)) != nil else { return }
        var checker = reader
        // As a file of the newest version: delete runs decode too.
        let checked = (try? TransactionPayload.checkChanges(from: &checker, symbols: symbols, deleteRuns: true)) != nil
        let changes = try? TransactionPayload.readChanges(from: &reader, symbols: symbols, deleteRuns: true)
        precondition(checked == (changes != nil), "checking a payload's changes and decoding them disagree")
        guard let changes else { return }
        func encode(_ changes: [RecordChange]) -> [UInt8] {
            var writer = ByteWriter()
            // Each change as decoded: deletes are not joined into runs.
            TransactionPayload.encode(changes, declaring: symbols.names[...], deleteRuns: false, into: &writer)
            return writer.bytes
        }
        let encoded = encode(changes)
        let decodedAgain = encoded.withUnsafeBytes { raw -> [RecordChange]? in
            var reader = ByteReader(raw)
            var symbols = SymbolTable()
            guard (try? TransactionPayload.readDeclarations(from: &reader, into: &symbols)) != nil else { return nil }
            return try? TransactionPayload.readChanges(from: &reader, symbols: symbols, deleteRuns: true)
        }
        precondition(decodedAgain.map(encode) == encoded, "a transaction payload does not survive a round trip")
    }

    private static func lz4Block(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 2 else { return }
        // At most 1 MiB: the declared size of a real frame is bounded by what
        // LZ4 can expand its stored bytes to, checked before this is reached.
        let declared = Int(bytes[0]) << 4 | Int(bytes[1]) << 12
        let block = UnsafeRawBufferPointer(rebasing: bytes.dropFirst(2))
        var output = [UInt8](repeating: 0, count: declared)
        output.withUnsafeMutableBytes { destination in _ = try? LZ4.decompress(block, into: destination) }

        var compressed = [UInt8](repeating: 0, count: LZ4.compressBound(block.count))
        let size = compressed.withUnsafeMutableBytes { LZ4.compress(block, into: $0) }
        guard size > 0 else { return }
        var restored = [UInt8](repeating: 0, count: block.count)
        let back: Void? = compressed.prefix(size).withUnsafeBytes { source in
            restored.withUnsafeMutableBytes { destination in try? LZ4.decompress(source, into: destination) }
        }
        precondition(back != nil && restored.elementsEqual(block), "LZ4 does not give back the \(block.count) bytes it compressed")
    }

    private static func fileHeader(_ bytes: UnsafeRawBufferPointer) {
        guard let header = try? FileHeader.decode(bytes, path: "fuzz input") else { return }
        let encoded = header.encoded()
        let again = encoded.withUnsafeBytes { try? FileHeader.decode($0, path: "fuzz input") }
        precondition(again?.encoded() == encoded, "a file header does not survive a round trip")
    }

    private static func frameHeader(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= FrameLayout.headerSize else { return }
        let header = UnsafeRawBufferPointer(rebasing: bytes.prefix(FrameLayout.headerSize))
        _ = FrameHeader.parse(header)
        _ = FrameHeader.checksumMatches(header: header, payload: UnsafeRawBufferPointer(rebasing: bytes.dropFirst(FrameLayout.headerSize)))
    }

    private static func pagedBlock(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return }
        let type = [PagedTableType.keys, .values, .targets][Int(first) % 3]
        let payload = UnsafeRawBufferPointer(rebasing: bytes.dropFirst())
        let block = try? PagedBlock(decoding: payload, as: type)
        if type == .keys {
            // Open reads a key directory's leaves as runs: the same leaves,
            // the same entries.
            let runs = try? KeyDirectoryLeaf(decoding: payload)
            precondition(runs == block.flatMap { $0.isLeaf ? KeyDirectoryLeaf($0) : nil }, "a key-directory leaf read as runs differs from the same leaf read whole")
        }
        guard let block else { return }
        let encoded = block.encoded(as: type)
        let again = encoded.withUnsafeBytes { try? PagedBlock(decoding: $0, as: type) }
        precondition(again?.encoded(as: type) == encoded, "a paged index block does not survive a round trip")
    }

    private static func catalog(_ bytes: UnsafeRawBufferPointer) {
        guard let catalog = try? SnapshotCatalog(decoding: bytes) else { return }
        let encoded = catalog.encoded().bytes
        let again = encoded.withUnsafeBytes { try? SnapshotCatalog(decoding: $0) }
        precondition(again?.encoded().bytes == encoded, "a catalog does not survive a round trip")
    }

    private static func root(_ bytes: UnsafeRawBufferPointer) {
        guard let root = try? SnapshotRoot(decoding: bytes) else { return }
        let encoded = root.encoded().bytes
        let again = encoded.withUnsafeBytes { try? SnapshotRoot(decoding: $0) }
        precondition(again?.encoded().bytes == encoded, "a root does not survive a round trip")
    }

    private static func snapshotIndex(_ bytes: UnsafeRawBufferPointer) {
        guard let index = try? SnapshotIndex(decoding: bytes) else { return }
        let encoded = index.encoded().bytes
        let again = encoded.withUnsafeBytes { try? SnapshotIndex(decoding: $0) }
        precondition(again?.encoded().bytes == encoded, "a snapshot index does not survive a round trip")
    }
}
