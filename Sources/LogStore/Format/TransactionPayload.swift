// The payload of a transaction frame (FORMAT.md §5.1): new names, then changes.

/// Change tags in a transaction payload. Stable: files depend on them.
enum ChangeTag: UInt8 {
    case insert = 1
    case update = 2
    case delete = 3
    /// Consecutive keys of one entity deleted (format version 7 on).
    case deleteRun = 4
}

/// Encodes and decodes the raw (uncompressed) payload of a transaction frame:
///
/// ```
/// payload      = [dictionary] declarations changes
/// dictionary   = varint(length) bytes      (only when the frame's flags bit 0 is set)
/// declarations = varint(count) { varint(symbol) varint(length) utf8 }
/// changes      = varint(count) { change }
/// change       = 1 id fields | 2 id fields | 3 id | 4 id varint(count)
/// fields       = varint(count) { varint(attribute) value }
/// ```
enum TransactionPayload {
    /// Appends the payload for `changes`, declaring `newNames` (the symbols
    /// from `firstNewSymbol` on) first; with `deleteRuns` (a file of format
    /// version 7 or later), deletes of consecutive keys as delete runs.
    static func encode(
        _ changes: some PayloadChanges, declaring newNames: ArraySlice<String>, deleteRuns: Bool, into writer: inout ByteWriter
    ) {
        writer.appendVarint(UInt64(newNames.count))
        for (symbol, name) in zip(newNames.indices, newNames) {
            writer.appendVarint(UInt64(symbol))
            writer.appendLengthPrefixed(name)
        }
        writer.appendVarint(UInt64(changes.encodedCount(deleteRuns: deleteRuns)))
        changes.encodeChanges(into: &writer, deleteRuns: deleteRuns)
    }

    /// Appends a delete run: `count` (at least 2) keys of `first`'s entity
    /// from its key.
    static func encodeDeleteRun(_ first: RecordID, count: UInt64, into writer: inout ByteWriter) {
        writer.append(ChangeTag.deleteRun.rawValue)
        writer.append(first)
        writer.appendVarint(count)
    }

    /// Appends the start of a change: its tag and record, and for an insert
    /// or update the number of fields that follow (each appended with
    /// ``encodeField(_:_:into:)``).
    static func encodeChange(_ tag: ChangeTag, _ id: RecordID, fieldCount: Int, into writer: inout ByteWriter) {
        writer.append(tag.rawValue)
        writer.append(id)
        if tag == .insert || tag == .update { writer.appendVarint(UInt64(fieldCount)) }
    }

    /// Appends one field of an insert or update.
    static func encodeField(_ attribute: Symbol, _ value: StoredValue, into writer: inout ByteWriter) {
        writer.appendVarint(UInt64(attribute.rawValue))
        writer.append(value)
    }

    /// Appends a store dictionary, for a frame that carries one (§5.3).
    static func encodeDictionary(_ bytes: [UInt8], into writer: inout ByteWriter) {
        bytes.withUnsafeBytes { writer.appendLengthPrefixed($0) }
    }

    /// Reads the declarations into `symbols` and leaves `reader` at the changes.
    static func readDeclarations(from reader: inout ByteReader, into symbols: inout SymbolTable) throws(DecodeFailure) {
        // A declaration takes at least three bytes: symbol, length, one character.
        let count = try reader.readCount(minimumItemSize: 3)
        for _ in 0..<count {
            let symbol = try reader.readVarint()
            try symbols.declare(symbol, try reader.readString())
        }
    }

    /// Reads the changes that follow the declarations. Every symbol used must
    /// be declared, here or in an earlier frame; delete runs are read only
    /// with `deleteRuns` (a file of format version 7 or later), and are
    /// damage otherwise.
    static func readChanges(from reader: inout ByteReader, symbols: SymbolTable, deleteRuns: Bool) throws(DecodeFailure) -> [RecordChange] {
        try walkChanges(from: &reader, symbols: symbols, deleteRuns: deleteRuns, keepingValues: true)
    }

    /// Checks the changes that follow the declarations exactly as
    /// ``readChanges(from:symbols:deleteRuns:)`` does, without building
    /// them: what open does to every frame, where copying each blob out
    /// would cost more than checking it.
    static func checkChanges(from reader: inout ByteReader, symbols: SymbolTable, deleteRuns: Bool) throws(DecodeFailure) {
        _ = try walkChanges(from: &reader, symbols: symbols, deleteRuns: deleteRuns, keepingValues: false)
    }

    private static func walkChanges(from reader: inout ByteReader, symbols: SymbolTable, deleteRuns: Bool, keepingValues keep: Bool) throws(DecodeFailure) -> [RecordChange] {
        // A delete, the smallest change, takes three bytes.
        let count = try reader.readCount(minimumItemSize: 3)
        var changes: [RecordChange] = []
        if keep { changes.reserveCapacity(count) }
        for _ in 0..<count {
            let tagByte = try reader.readByte()
            guard let tag = ChangeTag(rawValue: tagByte), tag != .deleteRun || deleteRuns else {
                throw DecodeFailure("unknown change tag \(tagByte) at byte \(reader.position - 1)\(tagByte == ChangeTag.deleteRun.rawValue ? " (a delete run, which only a file of format version \(FileLayout.deleteRunVersion) or later holds)" : "")")
            }
            let id = try reader.readRecordID()
            try check(id.entity, in: symbols, at: reader.position)
            let change: RecordChange
            switch tag {
            case .insert: change = .insert(id, try readFields(from: &reader, symbols: symbols, keepingValues: keep))
            case .update: change = .update(id, try readFields(from: &reader, symbols: symbols, keepingValues: keep))
            case .delete: change = .delete(id)
            case .deleteRun:
                let runCount = try reader.readVarint()
                // The last key is below the limit, like every key; the
                // subtraction cannot wrap, since id.key is below it too.
                guard runCount >= 2, runCount - 1 < RecordID.keyLimit - id.key else {
                    throw DecodeFailure("a delete run of \(runCount) keys from key \(id.key) before byte \(reader.position) \(runCount < 2 ? "has fewer than 2 keys" : "runs past the key limit of 2^62")")
                }
                change = .deleteRun(id, count: runCount)
            }
            if keep { changes.append(change) }
        }
        guard reader.isAtEnd else { throw DecodeFailure("\(reader.remaining) unexpected bytes after the last change") }
        return changes
    }

    /// The fields of one change; empty unless `keep`.
    private static func readFields(from reader: inout ByteReader, symbols: SymbolTable, keepingValues keep: Bool) throws(DecodeFailure) -> [Field] {
        // A field takes at least two bytes: attribute and type code.
        let count = try reader.readCount(minimumItemSize: 2)
        var fields: [Field] = []
        if keep { fields.reserveCapacity(count) }
        for _ in 0..<count {
            let attribute = try reader.readSymbol()
            try check(attribute, in: symbols, at: reader.position)
            let position = reader.position
            let checkTarget = { (target: RecordID) throws(DecodeFailure) in try check(target.entity, in: symbols, at: position) }
            if keep {
                let value = try reader.readValue()
                switch value {
                case .reference(let target): try checkTarget(target)
                case .references(let targets): for target in targets { try checkTarget(target) }
                default: break
                }
                fields.append(Field(attribute, value))
            } else {
                try reader.skipValue(checkingReferences: checkTarget)
            }
        }
        return fields
    }

    private static func check(_ symbol: Symbol, in symbols: SymbolTable, at position: Int) throws(DecodeFailure) {
        guard Int(symbol.rawValue) < symbols.count else {
            throw DecodeFailure("uses undeclared name \(symbol) before byte \(position)")
        }
    }
}

/// Changes that encode themselves as the `changes` of a payload (after its
/// count), through ``TransactionPayload``'s change and field encoders: the
/// journal's ``RecordChange``s, or a store's save straight from its objects'
/// values, without building a `RecordChange` per record first. Deletes of
/// consecutive keys of one entity, one after another, are written as one
/// delete run where the file allows (``encodeChanges(into:deleteRuns:)``),
/// by one rule for every kind of changes.
protocol PayloadChanges {
    /// How many changes there are, each delete counted by itself.
    var count: Int { get }
    /// The record change `position` deletes by itself (tag 3); nil for any
    /// other change, a delete run included.
    func deletedRecord(at position: Int) -> RecordID?
    /// Appends change `position` as it is.
    func encodeChange(at position: Int, into writer: inout ByteWriter)
}

extension PayloadChanges {
    /// How many changes from `start` on delete consecutive keys of one
    /// entity, one after another: 1 where change `start` is not a delete or
    /// the next one does not go on from it.
    func deleteRunLength(from start: Int) -> Int {
        // Keys at the limit or past it (only a caller of the raw journal
        // API writes one) stay single deletes, so a run never wraps.
        guard let first = deletedRecord(at: start), first.key < RecordID.keyLimit else { return 1 }
        var end = start + 1
        while end < count, let next = deletedRecord(at: end), next.entity == first.entity, next.key < RecordID.keyLimit,
              next.key == first.key + UInt64(end - start) {
            end += 1
        }
        return end - start
    }

    /// How many changes the payload holds: with `deleteRuns`, a run of
    /// deletes counts once.
    func encodedCount(deleteRuns: Bool) -> Int {
        guard deleteRuns else { return count }
        var encoded = 0, position = 0
        while position < count {
            position += deleteRunLength(from: position)
            encoded += 1
        }
        return encoded
    }

    /// Appends every change, in order; with `deleteRuns`, each run of two
    /// or more deletes of consecutive keys as one delete run.
    func encodeChanges(into writer: inout ByteWriter, deleteRuns: Bool) {
        var position = 0
        while position < count {
            let length = deleteRuns ? deleteRunLength(from: position) : 1
            if length > 1, let first = deletedRecord(at: position) {
                TransactionPayload.encodeDeleteRun(first, count: UInt64(length), into: &writer)
            } else {
                encodeChange(at: position, into: &writer)
            }
            position += length
        }
    }
}

extension Array: PayloadChanges where Element == RecordChange {
    func deletedRecord(at position: Int) -> RecordID? {
        if case .delete(let id) = self[position] { id } else { nil }
    }

    func encodeChange(at position: Int, into writer: inout ByteWriter) {
        let change = self[position]
        switch change {
        case .insert(let id, let fields), .update(let id, let fields):
            TransactionPayload.encodeChange(change.tag, id, fieldCount: fields.count, into: &writer)
            for field in fields { TransactionPayload.encodeField(field.attribute, field.value, into: &writer) }
        case .delete(let id):
            TransactionPayload.encodeChange(.delete, id, fieldCount: 0, into: &writer)
        case .deleteRun(let id, let count):
            TransactionPayload.encodeDeleteRun(id, count: count, into: &writer)
        }
    }
}

extension RecordChange {
    var tag: ChangeTag {
        switch self {
        case .insert: .insert
        case .update: .update
        case .delete: .delete
        case .deleteRun: .deleteRun
        }
    }
}
