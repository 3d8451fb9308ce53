// The payload of a transaction frame (FORMAT.md §5.1): new names, then changes.

/// Change tags in a transaction payload. Stable: files depend on them.
enum ChangeTag: UInt8 {
    case insert = 1
    case update = 2
    case delete = 3
}

/// Encodes and decodes the raw (uncompressed) payload of a transaction frame:
///
/// ```
/// payload      = [dictionary] declarations changes
/// dictionary   = varint(length) bytes      (only when the frame's flags bit 0 is set)
/// declarations = varint(count) { varint(symbol) varint(length) utf8 }
/// changes      = varint(count) { change }
/// change       = 1 id fields | 2 id fields | 3 id
/// fields       = varint(count) { varint(attribute) value }
/// ```
enum TransactionPayload {
    /// Appends the payload for `changes`, declaring `newNames` (the symbols
    /// from `firstNewSymbol` on) first.
    static func encode(
        _ changes: some PayloadChanges, declaring newNames: ArraySlice<String>, into writer: inout ByteWriter
    ) {
        writer.appendVarint(UInt64(newNames.count))
        for (symbol, name) in zip(newNames.indices, newNames) {
            writer.appendVarint(UInt64(symbol))
            writer.appendLengthPrefixed(name)
        }
        writer.appendVarint(UInt64(changes.changeCount))
        changes.encodeChanges(into: &writer)
    }

    /// Appends the start of a change: its tag and record, and for an insert
    /// or update the number of fields that follow (each appended with
    /// ``encodeField(_:_:into:)``).
    static func encodeChange(_ tag: ChangeTag, _ id: RecordID, fieldCount: Int, into writer: inout ByteWriter) {
        writer.append(tag.rawValue)
        writer.append(id)
        if tag != .delete { writer.appendVarint(UInt64(fieldCount)) }
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
    /// be declared, here or in an earlier frame.
    static func readChanges(from reader: inout ByteReader, symbols: SymbolTable) throws(DecodeFailure) -> [RecordChange] {
        try walkChanges(from: &reader, symbols: symbols, keepingValues: true)
    }

    /// Checks the changes that follow the declarations exactly as
    /// ``readChanges(from:symbols:)`` does, without building them: what open
    /// does to every frame, where copying each blob out would cost more than
    /// checking it.
    static func checkChanges(from reader: inout ByteReader, symbols: SymbolTable) throws(DecodeFailure) {
        _ = try walkChanges(from: &reader, symbols: symbols, keepingValues: false)
    }

    private static func walkChanges(from reader: inout ByteReader, symbols: SymbolTable, keepingValues keep: Bool) throws(DecodeFailure) -> [RecordChange] {
        // A delete, the smallest change, takes three bytes.
        let count = try reader.readCount(minimumItemSize: 3)
        var changes: [RecordChange] = []
        if keep { changes.reserveCapacity(count) }
        for _ in 0..<count {
            let tagByte = try reader.readByte()
            guard let tag = ChangeTag(rawValue: tagByte) else {
                throw DecodeFailure("unknown change tag \(tagByte) at byte \(reader.position - 1)")
            }
            let id = try reader.readRecordID()
            try check(id.entity, in: symbols, at: reader.position)
            let change: RecordChange
            switch tag {
            case .insert: change = .insert(id, try readFields(from: &reader, symbols: symbols, keepingValues: keep))
            case .update: change = .update(id, try readFields(from: &reader, symbols: symbols, keepingValues: keep))
            case .delete: change = .delete(id)
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
/// values, without building a `RecordChange` per record first.
protocol PayloadChanges {
    var changeCount: Int { get }
    func encodeChanges(into writer: inout ByteWriter)
}

extension Array: PayloadChanges where Element == RecordChange {
    var changeCount: Int { count }

    func encodeChanges(into writer: inout ByteWriter) {
        for change in self {
            switch change {
            case .insert(let id, let fields), .update(let id, let fields):
                TransactionPayload.encodeChange(change.tag, id, fieldCount: fields.count, into: &writer)
                for field in fields { TransactionPayload.encodeField(field.attribute, field.value, into: &writer) }
            case .delete(let id):
                TransactionPayload.encodeChange(.delete, id, fieldCount: 0, into: &writer)
            }
        }
    }
}

extension RecordChange {
    var tag: ChangeTag {
        switch self {
        case .insert: .insert
        case .update: .update
        case .delete: .delete
        }
    }
}
