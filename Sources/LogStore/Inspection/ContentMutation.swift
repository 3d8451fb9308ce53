// Store files whose content is hostile but whose checksums all match, for
// the store-content fuzz target (Fuzz/) and its regression tests. Not part
// of the public API.

import Foundation

/// Changes what a store file says while keeping it well formed: decodes
/// its frames (transaction payloads, snapshot blocks and index), changes
/// their contents, encodes them again, and recomputes every checksum, the
/// snapshot directory and the header.
///
/// A CRC32C is no signature: anyone can write a file whose checksums match
/// and whose keys, counts, offsets and lengths are anything at all. Every
/// such file must open, or fail with a typed error, without a trap and
/// without allocating more than its bytes justify. Decisions come from
/// `choose`, which returns a number below the bound it is given, so that a
/// fuzzer's input bytes steer each one.
@_spi(Fuzzing)
public enum ContentMutation {
    /// Numbers at the edges of every width a file's integers are read into.
    public static let extremes: [UInt64] = [
        0, 1, 2, 127, 128, 255, 1 << 16, (1 << 31) - 1, 1 << 31, 1 << 32, 1 << 40,
        (1 << 62) - 1, 1 << 62, (1 << 63) - 1, 1 << 63, .max - 1, .max,
    ]

    /// `file` with up to `rounds` changes to its content, each frame's
    /// checksum, the snapshot directory and the header made to match; the
    /// file unchanged when its frames do not decode.
    public static func mutate(_ file: [UInt8], rounds: Int, choose: (Int) -> Int) -> [UInt8] {
        guard var content = Content(file) else { return file }
        var keepsDirectory = false
        for _ in 0..<rounds {
            guard !content.frames.isEmpty else { break }
            if choose(8) == 0 {
                content.renumberTransactions(from: extreme(choose))
                continue
            }
            let frame = choose(content.frames.count)
            switch content.frames[frame].kind {
            case .transaction: content.mutateTransaction(frame, choose)
            case .snapshotIndex: keepsDirectory = content.mutateIndex(frame, choose) || keepsDirectory
            case .root: keepsDirectory = content.mutateRoot(frame, choose) || keepsDirectory
            case .snapshotBlock, .indexBlock, .catalog: content.spliceNumber(into: frame, choose)
            }
        }
        return content.encoded(fixingDirectory: !keepsDirectory)
    }

    /// An extreme number, or one next to it.
    static func extreme(_ choose: (Int) -> Int) -> UInt64 {
        let base = extremes[choose(extremes.count)]
        switch choose(4) {
        case 0: return base &- 1
        case 1: return base &+ 1
        default: return base
        }
    }

    /// A store file taken apart into raw frame payloads.
    struct Content {
        struct Frame {
            var kind: FrameKind
            var sequence: UInt64
            var timestamp: Int64
            var carriesDictionary: Bool
            /// The raw payload; for a payload compressed against the store
            /// dictionary, which this does not rebuild, the stored one.
            var payload: [UInt8]
            var storedCodec: PayloadCodec
            var rawSize: UInt32
            /// Where it was in the file taken apart: what handles name it by.
            var offset: UInt64 = 0
        }

        var header: FileHeader
        var frames: [Frame] = []
        /// The names declared before each frame, by the frames before it.
        var namesBefore: [[String]] = []

        init?(_ file: [UInt8]) {
            guard let header = file.withUnsafeBytes({ try? FileHeader.decode(UnsafeRawBufferPointer(rebasing: $0.prefix(FileLayout.headerSize)), path: "content") }) else { return nil }
            self.header = header
            var offset = Int(header.framesStart)
            var names: [String] = []
            while offset + FrameLayout.headerSize <= file.count {
                let parsed = file.withUnsafeBytes { FrameHeader.parse(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + FrameLayout.headerSize])) }
                guard case .success(let frameHeader) = parsed else { return nil }
                let start = offset + FrameLayout.headerSize, end = start + Int(frameHeader.storedSize)
                guard end <= file.count else { return nil }
                var payload = Array(file[start..<end])
                if frameHeader.codec == .lz4Block {
                    var raw = [UInt8](repeating: 0, count: Int(frameHeader.rawSize))
                    let decompressed: Void? = payload.withUnsafeBytes { source in raw.withUnsafeMutableBytes { try? LZ4.decompress(source, into: $0) } }
                    guard decompressed != nil else { return nil }
                    payload = raw
                }
                namesBefore.append(names)
                if frameHeader.kind == .transaction, frameHeader.codec != .lz4BlockWithDictionary, !frameHeader.carriesDictionary {
                    names = Self.declarations(payload, after: names, deleteRuns: header.holdsDeleteRuns)?.names ?? names
                }
                frames.append(Frame(
                    kind: frameHeader.kind, sequence: frameHeader.sequence, timestamp: frameHeader.timestampMicroseconds,
                    carriesDictionary: frameHeader.carriesDictionary, payload: payload, storedCodec: frameHeader.codec, rawSize: frameHeader.rawSize,
                    offset: UInt64(offset)))
                offset = end
            }
        }

        /// The names `payload` declares after `names`, and its changes.
        static func declarations(_ payload: [UInt8], after names: [String], deleteRuns: Bool) -> (names: [String], changes: [RecordChange])? {
            payload.withUnsafeBytes { bytes in
                var symbols = SymbolTable()
                for name in names { _ = symbols.intern(name) }
                var reader = ByteReader(bytes)
                guard (try? TransactionPayload.readDeclarations(from: &reader, into: &symbols)) != nil,
                      let changes = try? TransactionPayload.readChanges(from: &reader, symbols: symbols, deleteRuns: deleteRuns) else { return nil }
                return (symbols.names, changes)
            }
        }

        // MARK: - Transactions

        mutating func mutateTransaction(_ number: Int, _ choose: (Int) -> Int) {
            let frame = frames[number]
            guard frame.storedCodec != .lz4BlockWithDictionary, !frame.carriesDictionary,
                  let decoded = Self.declarations(frame.payload, after: namesBefore[number], deleteRuns: header.holdsDeleteRuns) else {
                spliceNumber(into: number, choose)
                return
            }
            let before = namesBefore[number]
            var declared = Array(decoded.names[before.count...])
            var changes = decoded.changes
            let symbolCount = UInt32(decoded.names.count)
            switch choose(8) {
            case 0 where !changes.isEmpty:
                // A record key at an edge.
                let index = choose(changes.count)
                changes[index] = Self.rekeyed(changes[index], to: ContentMutation.extreme(choose))
            case 1 where !changes.isEmpty:
                // A field's value replaced: an extreme number, another
                // type, or a reference to an extreme key.
                let index = choose(changes.count)
                changes[index] = Self.withField(changes[index], symbolCount: symbolCount, choose)
            case 2 where !declared.isEmpty:
                // A name declared twice, or a name of another.
                let index = choose(declared.count)
                declared[index] = choose(2) == 0 ? (decoded.names.randomElement(choose) ?? "x") : String(repeating: "n", count: 1 + choose(300))
            case 3 where !changes.isEmpty:
                // A change repeated, or its tag turned into another.
                let index = choose(changes.count)
                let change = changes[index]
                switch choose(4) {
                case 0: changes.insert(change, at: choose(changes.count + 1))
                case 1: changes[index] = .delete(change.recordID)
                // A delete run of any length from the change's key, up to
                // past the key limit: written as it is, in any version.
                case 2: changes[index] = .deleteRun(change.recordID, count: ContentMutation.extreme(choose))
                default: changes[index] = .update(change.recordID, Self.fields(of: change))
                }
            case 4 where !changes.isEmpty:
                changes.remove(at: choose(changes.count))
            case 5:
                // A record of an extreme key, or a key reservation of one.
                let entity = Symbol(rawValue: UInt32(choose(Int(max(symbolCount, 1)))))
                let attribute = Symbol(rawValue: UInt32(choose(Int(max(symbolCount, 1)))))
                let value = StoredValue.int64(Int64(bitPattern: ContentMutation.extreme(choose)))
                changes.append(choose(2) == 0
                    ? .insert(RecordID(entity: entity, key: ContentMutation.extreme(choose)), [Field(attribute, value)])
                    : .update(RecordID(entity: entity, key: 1), [Field(attribute, value)]))
            default:
                spliceNumber(into: number, choose)
                return
            }
            var writer = ByteWriter()
            writer.appendVarint(UInt64(declared.count))
            for (offset, name) in declared.enumerated() {
                writer.appendVarint(UInt64(before.count + offset))
                writer.appendLengthPrefixed(name)
            }
            writer.appendVarint(UInt64(changes.count))
            changes.encodeChanges(into: &writer, deleteRuns: false)
            frames[number].payload = writer.bytes
        }

        static func rekeyed(_ change: RecordChange, to key: UInt64) -> RecordChange {
            let id = RecordID(entity: change.recordID.entity, key: key)
            switch change {
            case .insert(_, let fields): return .insert(id, fields)
            case .update(_, let fields): return .update(id, fields)
            case .delete: return .delete(id)
            case .deleteRun(_, let count): return .deleteRun(id, count: count)
            }
        }

        static func fields(of change: RecordChange) -> [Field] {
            switch change {
            case .insert(_, let fields), .update(_, let fields): fields
            case .delete, .deleteRun: []
            }
        }

        static func withField(_ change: RecordChange, symbolCount: UInt32, _ choose: (Int) -> Int) -> RecordChange {
            var fields = fields(of: change)
            let number = ContentMutation.extreme(choose)
            let target = RecordID(entity: Symbol(rawValue: UInt32(choose(Int(max(symbolCount, 1))))), key: number)
            let values: [StoredValue] = [
                .int64(Int64(bitPattern: number)), .int32(Int32(truncatingIfNeeded: number)), .int16(Int16(truncatingIfNeeded: number)),
                .double(Double(bitPattern: number)), .float(.nan), .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: number))),
                .string(String(repeating: "s", count: choose(2_000))), .data(Data(count: choose(4_000))), .null, .bool(true),
                .reference(target), .references(Array(repeating: target, count: 1 + choose(64))), .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
                .decimal(Decimal(string: "1e\(choose(200))") ?? 0),
            ]
            let value = values[choose(values.count)]
            if fields.isEmpty || choose(3) == 0 {
                fields.append(Field(Symbol(rawValue: UInt32(choose(Int(max(symbolCount, 1))))), value))
            } else {
                fields[choose(fields.count)].value = value
            }
            switch change {
            case .insert(let id, _): return .insert(id, fields)
            case .update(let id, _), .delete(let id), .deleteRun(let id, _): return .update(id, fields)
            }
        }

        /// Numbers the transaction frames in order from `first` (wrapping
        /// past the largest number, as only a hostile file does).
        mutating func renumberTransactions(from first: UInt64) {
            var next = first
            for index in frames.indices where frames[index].kind == .transaction {
                frames[index].sequence = next
                next &+= 1
            }
        }

        // MARK: - Any frame

        /// Overwrites the bytes at a chosen place of the raw payload with
        /// the varint of an extreme number: a count, length, key, symbol or
        /// offset wherever one stood.
        mutating func spliceNumber(into number: Int, _ choose: (Int) -> Int) {
            guard !frames[number].payload.isEmpty else { return }
            var writer = ByteWriter()
            writer.appendVarint(ContentMutation.extreme(choose))
            let payload = frames[number].payload
            let start = choose(payload.count)
            let replaced = min(payload.count - start, 1 + choose(10))
            frames[number].payload = Array(payload[..<start]) + writer.bytes + payload[(start + replaced)...]
        }

        // MARK: - The snapshot index

        /// Changes a field of the index; returns whether the change is to
        /// the directory, which ``encoded(fixingDirectory:)`` must then keep.
        mutating func mutateIndex(_ number: Int, _ choose: (Int) -> Int) -> Bool {
            guard var index = frames[number].payload.withUnsafeBytes({ try? SnapshotIndex(decoding: $0) }) else {
                spliceNumber(into: number, choose)
                return false
            }
            var directory = false
            let number64 = ContentMutation.extreme(choose)
            // Counts and positions decode as `Int(clamping:)`, so never below
            // zero; the encoder may rely on that.
            switch choose(7) {
            case 0 where !index.entities.isEmpty:
                index.entities[choose(index.entities.count)].nextKey = number64
            case 1 where !index.entities.isEmpty:
                let entity = choose(index.entities.count)
                if index.entities[entity].keys.last.map({ $0 < number64 }) ?? true { index.entities[entity].keys.append(number64) }
                index.entities[entity].nextKey = max(index.entities[entity].nextKey, number64 &+ 1)
            case 2 where !index.blocks.isEmpty:
                let block = choose(index.blocks.count)
                switch choose(6) {
                case 0: index.blocks[block].offset = number64
                case 1: index.blocks[block].storedSize = UInt32(truncatingIfNeeded: number64)
                case 2: index.blocks[block].recordCount = Int(clamping: number64)
                case 3: index.blocks[block].firstKey = number64
                case 4: index.blocks[block].lastEntity = Int(clamping: number64)
                default: index.blocks[block].rawSize = UInt32(truncatingIfNeeded: number64)
                }
                directory = true
            case 3 where !index.indexes.isEmpty:
                let section = choose(index.indexes.count)
                if index.indexes[section].keys.last.map({ $0 < number64 }) ?? true, !index.indexes[section].counts.isEmpty {
                    index.indexes[section].keys.append(number64)
                    index.indexes[section].counts[index.indexes[section].counts.count - 1] += 1
                } else {
                    index.indexes[section].entity = Int(clamping: number64)
                }
            case 4 where !index.pointers.isEmpty:
                let section = choose(index.pointers.count)
                if index.pointers[section].targets.last.map({ $0 < number64 }) ?? true {
                    index.pointers[section].targets.append(number64)
                    index.pointers[section].counts.append(1)
                    index.pointers[section].sources.append(number64)
                }
            case 5:
                index.symbols.append(index.symbols.randomElement(choose) ?? "n")
            default:
                spliceNumber(into: number, choose)
                return false
            }
            frames[number].payload = index.encoded().bytes
            return directory
        }

        // MARK: - Encoding

        /// The file again: each frame stored raw (or as it was stored, when
        /// compressed against the dictionary), numbered offsets in the
        /// snapshot directory and the header, every checksum recomputed.
        func encoded(fixingDirectory: Bool) -> [UInt8] {
            if header.readVersion >= FileLayout.pagedSnapshotVersion { return encodedPaged(fixingHandles: fixingDirectory) }
            var blocks: [(offset: UInt64, header: FrameHeader)] = []
            var body: [UInt8] = []
            var indexOffset: UInt64?
            var indexFrame: Int?
            for (number, frame) in frames.enumerated() {
                let offset = UInt64(FileLayout.headerSize + body.count)
                if frame.kind == .snapshotIndex, indexOffset == nil {
                    indexOffset = offset
                    indexFrame = number
                    body += [UInt8](repeating: 0, count: FrameLayout.headerSize)  // replaced below
                    continue
                }
                let header = Self.append(frame, to: &body)
                if frame.kind == .snapshotBlock { blocks.append((offset, header)) }
            }
            if let indexOffset, let indexFrame {
                var frame = frames[indexFrame]
                if fixingDirectory, var index = frame.payload.withUnsafeBytes({ try? SnapshotIndex(decoding: $0) }) {
                    for (position, block) in blocks.enumerated() where position < index.blocks.count {
                        index.blocks[position].offset = block.offset
                        index.blocks[position].storedSize = block.header.storedSize
                        index.blocks[position].rawSize = block.header.rawSize
                        index.blocks[position].checksum = block.header.checksum
                    }
                    frame.payload = index.encoded().bytes
                }
                var indexBytes: [UInt8] = []
                Self.append(frame, to: &indexBytes)
                let start = Int(indexOffset) - FileLayout.headerSize
                body.replaceSubrange(start..<(start + FrameLayout.headerSize), with: indexBytes)
            }
            var header = self.header
            header.snapshotIndexOffset = indexOffset ?? header.snapshotIndexOffset.map { _ in 0 }
            return header.encoded() + body
        }

        /// A version 5 file again: the anchor pages zero, each frame stored
        /// raw, and (with `fixingHandles`) every handle in index blocks and
        /// the base root naming the frame it named before, at its new place.
        private func encodedPaged(fixingHandles: Bool) -> [UInt8] {
            let start = FileLayout.pagedFramesStart
            let rootNumber = frames.firstIndex { $0.kind == .root && $0.offset == self.header.snapshotRootOffset }
            let root = rootNumber.flatMap { number in frames[number].payload.withUnsafeBytes { try? SnapshotRoot(decoding: $0) } }
            // Each run's tables' types, by run number and position: index blocks do not say theirs.
            var types: [UInt64: [PagedTableType?]] = [:]
            for run in root?.runs ?? [] { types[run.number] = run.tables.map { PagedTableType(rawValue: $0.type) } }
            var moved: [UInt64: FrameHandle] = [:]
            func fixed(_ handle: FrameHandle) -> FrameHandle { fixingHandles ? moved[handle.offset] ?? handle : handle }

            var body: [UInt8] = []
            var rootOffset: UInt64?
            for (number, frame) in frames.enumerated() {
                var frame = frame
                let offset = UInt64(start + body.count)
                if frame.kind == .indexBlock, fixingHandles, frame.storedCodec != .lz4BlockWithDictionary {
                    frame.payload = frame.payload.withUnsafeBytes { raw -> [UInt8] in
                        var reader = ByteReader(raw)
                        guard let run = try? reader.readVarint(), let table = try? reader.readVarint(), table < UInt64(Int.max),
                              let type = types[run]?.indices.contains(Int(table)) == true ? types[run]?[Int(table)] : nil,
                              var block = try? PagedBlock(decoding: raw, as: type) else { return frame.payload }
                        for position in block.dataBlocks.indices { block.dataBlocks[position].handle = fixed(block.dataBlocks[position].handle) }
                        for position in block.children.indices { block.children[position].handle = fixed(block.children[position].handle) }
                        // A version 5 file's leaves stay as that version wrote them.
                        return block.encoded(as: type, runWords: self.header.readVersion > FileLayout.pagedSnapshotVersion)
                    }
                }
                if number == rootNumber, fixingHandles, var root {
                    root.catalog = fixed(root.catalog)
                    for run in root.runs.indices {
                        root.runs[run].catalog = fixed(root.runs[run].catalog)
                        root.runs[run].extentStart = UInt64(start)
                        root.runs[run].extentEnd = offset
                        for table in root.runs[run].tables.indices { root.runs[run].tables[table].top = fixed(root.runs[run].tables[table].top) }
                    }
                    if root.generation == 1 { root.journalOffset = offset }
                    frame.payload = root.encoded().bytes
                }
                if number == rootNumber { rootOffset = offset }
                let written = Self.append(frame, to: &body)
                moved[frame.offset] = FrameHandle(offset: offset, storedSize: written.storedSize, rawSize: written.rawSize, checksum: written.checksum)
            }
            var header = self.header
            if let rootOffset { header.snapshotRootOffset = rootOffset }
            return header.encoded() + [UInt8](repeating: 0, count: start - FileLayout.headerSize) + body
        }

        // MARK: - A paged snapshot's root

        /// Changes a field of the base root; returns whether the change is
        /// to a handle, which encoding must then leave as it is.
        mutating func mutateRoot(_ number: Int, _ choose: (Int) -> Int) -> Bool {
            guard var root = frames[number].payload.withUnsafeBytes({ try? SnapshotRoot(decoding: $0) }), !root.runs.isEmpty else {
                spliceNumber(into: number, choose)
                return false
            }
            let number64 = ContentMutation.extreme(choose)
            var handles = false
            let run = choose(root.runs.count)
            let table = root.runs[run].tables.isEmpty ? 0 : choose(root.runs[run].tables.count)
            switch choose(8) {
            case 0 where !root.nextKeys.isEmpty: root.nextKeys[choose(root.nextKeys.count)] = number64
            case 1 where !root.runs[run].tables.isEmpty: root.runs[run].tables[table].entryCount = number64
            case 2 where !root.runs[run].tables.isEmpty: root.runs[run].tables[table].height = Int(clamping: number64 % 80)
            case 3 where !root.runs[run].tables.isEmpty: root.runs[run].tables[table].entity = Int(clamping: number64)
            case 4 where !root.runs[run].tables.isEmpty:
                root.runs[run].tables[table].top.offset = number64
                handles = true
            case 5:
                root.catalog.offset = number64
                root.runs[run].catalog = root.catalog
                handles = true
            case 6:
                root.sequence = number64
                root.runs[run].lastSequence = min(root.runs[run].lastSequence, number64)
            case 7 where root.runs[run].tables.count > 1:
                root.runs[run].tables.swapAt(table, choose(root.runs[run].tables.count))
            default:
                spliceNumber(into: number, choose)
                return false
            }
            frames[number].payload = root.encoded().bytes
            return handles
        }

        @discardableResult
        static func append(_ frame: Frame, to body: inout [UInt8]) -> FrameHeader {
            var writer = ByteWriter()
            if frame.storedCodec == .lz4BlockWithDictionary {
                // Kept as stored: its checksum is recomputed over the same bytes.
                var header = FrameHeader(
                    checksum: 0, storedSize: UInt32(frame.payload.count), rawSize: frame.rawSize, sequence: frame.sequence,
                    timestampMicroseconds: frame.timestamp, kind: frame.kind, codec: .lz4BlockWithDictionary, carriesDictionary: frame.carriesDictionary)
                writer.append(contentsOf: repeatElement(0, count: FrameLayout.headerSize))
                writer.append(contentsOf: frame.payload)
                writer.withUnsafeMutableBytes { header.write(into: $0) }
                body += writer.bytes
                return header
            }
            let header = frame.payload.withUnsafeBytes { raw in
                FrameHeader.encodeFrame(
                    kind: frame.kind, sequence: frame.sequence, timestampMicroseconds: frame.timestamp, payload: raw,
                    compressor: nil, carriesDictionary: frame.carriesDictionary, into: &writer)
            }
            body += writer.bytes
            return header
        }
    }
}

extension Array {
    /// An element picked by `choose`, or nil when empty.
    fileprivate func randomElement(_ choose: (Int) -> Int) -> Element? {
        isEmpty ? nil : self[choose(count)]
    }
}
