// The value and transaction payload encoding (FORMAT.md §1, §5): every value
// case and change kind round-trips bit for bit, through the codec alone and
// through a journal file; prefixes never decode; names are written once.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Value codec")
struct ValueCodecTests {
    // MARK: - Round trips

    @Test("Every sample value round-trips bit for bit on its own, in an insert and in an update")
    func everySampleValueRoundTrips() throws {
        for (label, value) in Samples.values + Samples.longValues {
            let id = RecordID(entity: Symbol(rawValue: 0), key: 7)
            let changes: [RecordChange] = [.insert(id, [Field(Symbol(rawValue: 1), value)]), .update(id, [Field(Symbol(rawValue: 2), value)])]
            let decoded = try Codec.roundTrip(changes, names: Samples.names)
            #expect(decoded.map(Bitwise.change) == changes.map(Bitwise.change), "\(label)")
        }
    }

    @Test("One transaction with every operation kind: an insert of every value, an update of changed values, deletes")
    func everyOperationKindRoundTrips() throws {
        let changes = Samples.everyOperation()
        let payload = Codec.encode(changes, declaring: Samples.names[...])
        var symbols = SymbolTable()
        let decoded = try Codec.decode(payload, symbols: &symbols)
        #expect(decoded.map(Bitwise.change) == changes.map(Bitwise.change))
        #expect(symbols.names == Samples.names)
    }

    @Test("Data of several MiB round-trips, compressible or not")
    func largeDataRoundTrips() throws {
        let megabytes = 5 << 20
        for (label, data) in [("noise", Data(JournalFixtures.noise(count: megabytes, seed: 5))), ("zeros", Data(count: megabytes))] {
            let changes: [RecordChange] = [.insert(RecordID(entity: Symbol(rawValue: 0), key: 1), [Field(Symbol(rawValue: 1), .data(data))])]
            #expect(try Codec.roundTrip(changes, names: Samples.names) == changes, "\(label)")
        }
    }

    @Test("Every value and operation, and a 5 MiB value, survive a journal append, a reopen and transactions()")
    func journalRoundTrip() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/values.logstore"
            let journal = try Journal(path: path)
            let symbols = Samples.names.map { journal.symbol(for: $0) }
            #expect(symbols.map(\.rawValue) == Array(0..<UInt32(Samples.names.count)))
            let noise: [RecordChange] = [.insert(RecordID(entity: symbols[0], key: 100), [Field(symbols[1], .data(Data(JournalFixtures.noise(count: 5 << 20, seed: 6))))])]
            let written = [Samples.everyOperation(), noise, [.delete(RecordID(entity: symbols[0], key: 100))]]
            for changes in written { try journal.append(changes) }
            journal.close()

            let reopened = try Journal(path: path, options: JournalOptions(access: .readOnly))
            defer { reopened.close() }
            #expect(reopened.recovery.outcome == .clean)
            let read = try reopened.transactions()
            #expect(read.map(\.sequence) == [1, 2, 3])
            #expect(read.map { $0.changes.map(Bitwise.change) } == written.map { $0.map(Bitwise.change) })
            #expect(symbols.map { reopened.name(of: $0) } == Samples.names)
        }
    }

    @Test("A few thousand seeded random transactions round-trip through the codec")
    func randomTransactionsRoundTrip() throws {
        var random = RandomTransactions(seed: 0x5EED_0001)
        var symbols = SymbolTable()
        for number in 1...3000 {
            let (changes, newNames) = random.next()
            let payload = Codec.encode(changes, declaring: newNames)
            let decoded = try Codec.decode(payload, symbols: &symbols)
            #expect(decoded.map(Bitwise.change) == changes.map(Bitwise.change), "transaction \(number)")
            if decoded.map(Bitwise.change) != changes.map(Bitwise.change) { break }
        }
        #expect(symbols.names == random.names)
    }

    @Test("Seeded random transactions round-trip through a journal file")
    func randomTransactionsThroughJournal() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/random.logstore"
            var random = RandomTransactions(seed: 0x5EED_0002)
            let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            var written: [[RecordChange]] = []
            for _ in 0..<300 {
                let (changes, newNames) = random.next()
                for name in newNames { _ = journal.symbol(for: name) }
                try journal.append(changes)
                written.append(changes)
            }
            journal.close()
            let reopened = try Journal(path: path, options: JournalOptions(access: .readOnly))
            defer { reopened.close() }
            let read = try reopened.transactions()
            #expect(read.count == written.count)
            for (index, (got, expected)) in zip(read, written).enumerated() {
                #expect(got.changes.map(Bitwise.change) == expected.map(Bitwise.change), "transaction \(index + 1)")
            }
        }
    }

    // MARK: - Damage inside a payload

    @Test("Every strict prefix of a payload fails to decode, with DecodeFailure")
    func everyPrefixFails() throws {
        let changes = Samples.everyOperation(long: false)
        let payload = Codec.encode(changes, declaring: Samples.names[...])
        var symbols = SymbolTable()
        #expect(try Codec.decode(payload, symbols: &symbols).map(Bitwise.change) == changes.map(Bitwise.change))
        for length in 0..<payload.count {
            var fresh = SymbolTable()
            #expect(throws: DecodeFailure.self, "prefix of \(length) of \(payload.count) bytes") {
                try Codec.decode(Array(payload.prefix(length)), symbols: &fresh)
            }
        }
    }

    @Test("A payload with a byte left over after the last change fails to decode")
    func trailingByteFails() {
        for extra: [UInt8] in [[0], [1], [0xFF, 0xFF]] {
            var symbols = SymbolTable()
            #expect(throws: DecodeFailure.self) {
                try Codec.decode(Codec.encode(Samples.everyOperation(), declaring: Samples.names[...]) + extra, symbols: &symbols)
            }
        }
    }

    @Test("Open's check without building values accepts exactly the payloads that decode: whole, every prefix, and 20,000 seeded byte changes")
    func checkAgreesWithDecode() {
        let payload = Codec.encode(Samples.everyOperation(long: false), declaring: Samples.names[...])
        #expect(Codec.verdicts(payload) == (true, true))
        for length in 0..<payload.count {
            #expect(Codec.verdicts(Array(payload.prefix(length))) == (false, false), "prefix of \(length) bytes")
        }
        var random = JournalFixtures.SeededGenerator(seed: 0x0C4E_C4ED)
        var accepted = 0
        for round in 0..<20_000 {
            var mutated = payload
            mutated[Int(random.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: random.next())
            let verdicts = Codec.verdicts(mutated)
            #expect(verdicts.decodes == verdicts.checks, "round \(round)")
            if verdicts.decodes { accepted += 1 }
            if verdicts.decodes != verdicts.checks { break }
        }
        // Both outcomes must occur, or the loop compared nothing interesting.
        #expect(accepted > 0 && accepted < 20_000)
    }

    // MARK: - Primitive encodings (FORMAT.md §1)

    @Test("varint and zigzag varint bytes are FORMAT.md §1's examples")
    func varintExamples() throws {
        let unsigned: [(UInt64, [UInt8])] = [(0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
                                             (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])]
        for (value, bytes) in unsigned {
            var writer = ByteWriter()
            writer.appendVarint(value)
            #expect(writer.bytes == bytes, "varint \(value)")
            #expect(try Codec.read(bytes) { (reader) throws(DecodeFailure) in try reader.readVarint() } == value)
        }
        let signed: [(Int64, [UInt8])] = [(0, [0x00]), (-1, [0x01]), (1, [0x02]), (-2, [0x03]), (300, [0xD8, 0x04])]
        for (value, bytes) in signed {
            var writer = ByteWriter()
            writer.appendSignedVarint(value)
            #expect(writer.bytes == bytes, "zigzag varint \(value)")
            #expect(try Codec.read(bytes) { (reader) throws(DecodeFailure) in try reader.readSignedVarint() } == value)
        }
    }

    @Test("The reader accepts overlong varints but rejects a tenth byte above 1 and a varint cut short")
    func varintEdges() throws {
        #expect(try Codec.read([0x80, 0x80, 0x00]) { (reader) throws(DecodeFailure) in try reader.readVarint() } == 0)
        // One and two bytes are read inline, three or more by a loop: the edges of each.
        for (bytes, value) in [([0x85, 0x00], 5), ([0xFF, 0x7F], 16_383), ([0x80, 0x80, 0x01], 16_384), ([0xFF, 0xFF, 0x7F], 2_097_151)] as [([UInt8], UInt64)] {
            #expect(try Codec.read(bytes) { (reader) throws(DecodeFailure) in try reader.readVarint() } == value, "\(bytes)")
        }
        for cut: [UInt8] in [[], [0x81], [0xFF, 0x80]] {
            #expect(throws: DecodeFailure.self, "\(cut)") { try Codec.read(cut) { (reader) throws(DecodeFailure) in try reader.readVarint() } }
        }
        let overflow: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x02]
        #expect(throws: DecodeFailure.self) { try Codec.read(overflow) { (reader) throws(DecodeFailure) in try reader.readVarint() } }
        #expect(throws: DecodeFailure.self) { try Codec.read([0x80, 0x80]) { (reader) throws(DecodeFailure) in try reader.readVarint() } }
        let eleven: [UInt8] = Array(repeating: 0x80, count: 10) + [0x00]
        #expect(throws: DecodeFailure.self) { try Codec.read(eleven) { (reader) throws(DecodeFailure) in try reader.readVarint() } }
    }

    @Test("Values that no writer produces fail to decode: unknown type code, narrow integers out of range, invalid UTF-8, lengths past the end")
    func malformedValues() {
        let cases: [(String, [UInt8])] = [
            ("type code 14", [14]),
            ("type code 255", [255]),
            ("int16 32768", [ValueTypeCode.int16.rawValue, 0x80, 0x80, 0x04]),
            ("int16 -32769", [ValueTypeCode.int16.rawValue, 0x81, 0x80, 0x04]),
            ("int32 2^31", [ValueTypeCode.int32.rawValue, 0x80, 0x80, 0x80, 0x80, 0x10]),
            ("string of invalid UTF-8", [ValueTypeCode.string.rawValue, 2, 0xC3, 0x28]),
            ("string of a lone surrogate", [ValueTypeCode.string.rawValue, 3, 0xED, 0xA0, 0x80]),
            ("string of invalid UTF-8 after eight ASCII bytes", [ValueTypeCode.string.rawValue, 10] + Array("abcdefgh".utf8) + [0xC3, 0x28]),
            ("string of invalid UTF-8 in a second word", [ValueTypeCode.string.rawValue, 16] + Array("abcdefgh".utf8) + [0x61, 0x62, 0x63, 0xFF, 0x61, 0x62, 0x63, 0x64]),
            ("string longer than the bytes", [ValueTypeCode.string.rawValue, 5, 0x61]),
            ("data longer than the bytes", [ValueTypeCode.data.rawValue, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0]),
            ("uuid cut short", [ValueTypeCode.uuid.rawValue] + Array(repeating: 1, count: 15)),
            ("double cut short", [ValueTypeCode.double.rawValue, 0, 0, 0]),
            ("references count beyond the bytes", [ValueTypeCode.references.rawValue, 0xFF, 0xFF, 0x03, 0, 1]),
        ]
        for (label, bytes) in cases {
            #expect(throws: DecodeFailure.self, "\(label)") {
                try Codec.read(bytes) { (reader) throws(DecodeFailure) in try reader.readValue() }
            }
            #expect(throws: DecodeFailure.self, "\(label), skipped") {
                try Codec.read(bytes) { (reader) throws(DecodeFailure) in try reader.skipValue { _ in } }
            }
        }
    }

    @Test("Checking a value without building it accepts and rejects exactly what reading it does, and lands where the read does, on arbitrary bytes")
    func checkedSkipAgreesWithReadValue() {
        var random = SystemRandomNumberGenerator()
        let codes = (0...16).map(UInt8.init) + [255]
        for round in 0..<20_000 {
            // A type code, then bytes that are sometimes a value's and
            // often not: short, long, high bits, lengths past the end.
            var bytes = [codes.randomElement(using: &random)!]
            for _ in 0..<Int.random(in: 0...20, using: &random) {
                bytes.append(Bool.random(using: &random) ? UInt8.random(in: 0..<0x80, using: &random) : UInt8.random(in: 0...255, using: &random))
            }
            let (read, skipped) = bytes.withUnsafeBytes { raw in
                var reading = ByteReader(raw), skipping = ByteReader(raw)
                let read = (try? reading.readValue()).map { _ in reading.position }
                let skipped = (try? skipping.skipValue { _ in }).map { skipping.position }
                return (read, skipped)
            }
            #expect(read == skipped, "round \(round): \(bytes)")
        }
    }

    @Test("The UTF-8 check strings pass accepts exactly what the standard library validates, ASCII or not, at any length and offset")
    func utf8CheckAgreesWithTheStandardLibrary() {
        var random = SystemRandomNumberGenerator()
        let alphabet: [[UInt8]] = [Array("a".utf8), Array("é".utf8), Array("€".utf8), Array("😀".utf8), [0x80], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF]]
        for round in 0..<4_000 {
            // Mostly ASCII, so that the word-at-a-time path meets a bad or
            // multi-byte sequence at every position.
            var bytes: [UInt8] = []
            let length = Int.random(in: 0...40, using: &random)
            for _ in 0..<length {
                bytes += Int.random(in: 0..<4, using: &random) == 0 ? alphabet.randomElement(using: &random)! : [UInt8.random(in: 0x20..<0x7F, using: &random)]
            }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            let checked = bytes.withUnsafeBytes { ByteReader.isValidUTF8($0) }
            #expect(checked == expected, "round \(round): \(bytes)")
            var encoded = ByteWriter()
            bytes.withUnsafeBytes { encoded.appendLengthPrefixed($0) }
            let skipped = encoded.bytes.withUnsafeBytes { raw in
                var reader = ByteReader(raw)
                return (try? reader.readUTF8()) != nil
            }
            #expect(skipped == expected, "round \(round), read with its length: \(bytes)")
        }
    }

    @Test("The reads a scan makes of LogStore's own bytes agree with readValue: a skip lands where it does, an integer is its number")
    func trustedReadsAgreeWithReadValue() throws {
        let decimal = ("decimal 12.5", StoredValue.decimal(Decimal(string: "12.5")!))
        for (label, value) in Samples.values + Samples.longValues + [decimal] {
            var writer = ByteWriter()
            writer.append(value)
            // A value after it, which the reads must leave unread.
            writer.append(StoredValue.int32(7))
            try writer.bytes.withBytes { (raw) throws(DecodeFailure) in
                var decoding = ByteReader(raw), skipping = ByteReader(raw), integer = ByteReader(raw), checking = ByteReader(raw)
                let decoded = try decoding.readValue(trusted: true)
                try skipping.skipTrustedValue()
                #expect(skipping.position == decoding.position, "\(label)")
                try checking.skipValue { _ in }
                #expect(checking.position == decoding.position, "\(label), checked")
                let number = try integer.readTrustedInteger()
                switch decoded {
                case .int16, .int32, .int64: #expect(number != nil && number == decoded.integer, "\(label)")
                // A Boolean compares as 0 or 1 too, but after the value is made.
                default: #expect(number == nil, "\(label)")
                }
                #expect(integer.position == (number == nil ? 0 : decoding.position), "\(label)")
                #expect(try skipping.readValue() == .int32(7), "\(label)")
            }
        }
    }

    // MARK: - Interning

    @Test("An entity and attribute name used in many records appears once in a payload")
    func namesAppearOnceInPayload() {
        let names = ["DistinctiveEntityName", "distinctiveAttributeName"]
        let changes: [RecordChange] = (0..<200).map {
            .insert(RecordID(entity: Symbol(rawValue: 0), key: UInt64($0)), [Field(Symbol(rawValue: 1), .int64(Int64($0)))])
        }
        let payload = Codec.encode(changes, declaring: names[...])
        for name in names { #expect(Codec.occurrences(of: name, in: payload) == 1, "\(name)") }
    }

    @Test("Names used by every transaction of a store are declared once, in the first frame")
    func namesAppearOnceInFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/interned.logstore"
            let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            let entity = journal.symbol(for: "DistinctiveEntityName"), attribute = journal.symbol(for: "distinctiveAttributeName")
            for key in 0..<50 {
                try journal.append([.insert(RecordID(entity: entity, key: UInt64(key)), [Field(attribute, .string("value \(key)"))])])
            }
            journal.close()
            let payloads = try Codec.rawPayloads(of: path)
            #expect(payloads.count == 50)
            for name in ["DistinctiveEntityName", "distinctiveAttributeName"] {
                #expect(payloads.map { Codec.occurrences(of: name, in: $0) } == [1] + Array(repeating: 0, count: 49), "\(name)")
                #expect(Codec.occurrences(of: name, in: try JournalFixtures.read(path)) <= 1, "\(name) in the file's bytes")
            }
            // Every later frame declares nothing: its payload starts with a declaration count of 0.
            #expect(payloads.dropFirst().allSatisfy { $0.first == 0 })
        }
    }
}

// MARK: - Helpers

extension ValueCodecTests {
    /// The transaction payload codec, driven directly.
    enum Codec {
        /// `names` must be sliced from the whole name list: its indices are the symbols declared.
        /// With `deleteRuns`, deletes of consecutive keys are joined into runs.
        static func encode(_ changes: [RecordChange], declaring names: ArraySlice<String>, deleteRuns: Bool = false) -> [UInt8] {
            var writer = ByteWriter()
            TransactionPayload.encode(changes, declaring: names, deleteRuns: deleteRuns, into: &writer)
            return writer.bytes
        }

        /// As a file of `deleteRuns` (format version 7 on) or not.
        static func decode(_ payload: [UInt8], symbols: inout SymbolTable, deleteRuns: Bool = true) throws(DecodeFailure) -> [RecordChange] {
            try payload.withBytes { (raw) throws(DecodeFailure) in
                var reader = ByteReader(raw)
                try TransactionPayload.readDeclarations(from: &reader, into: &symbols)
                return try TransactionPayload.readChanges(from: &reader, symbols: symbols, deleteRuns: deleteRuns)
            }
        }

        /// What open does to a payload: the same walk as ``decode``, building nothing.
        static func check(_ payload: [UInt8], symbols: inout SymbolTable, deleteRuns: Bool = true) throws(DecodeFailure) {
            try payload.withBytes { (raw) throws(DecodeFailure) in
                var reader = ByteReader(raw)
                try TransactionPayload.readDeclarations(from: &reader, into: &symbols)
                try TransactionPayload.checkChanges(from: &reader, symbols: symbols, deleteRuns: deleteRuns)
            }
        }

        /// Whether ``decode`` and ``check`` accept `payload`, each with fresh symbols.
        static func verdicts(_ payload: [UInt8]) -> (decodes: Bool, checks: Bool) {
            var decodeSymbols = SymbolTable(), checkSymbols = SymbolTable()
            let decodes = (try? decode(payload, symbols: &decodeSymbols)) != nil
            let checks = (try? check(payload, symbols: &checkSymbols)) != nil
            return (decodes, checks)
        }

        static func roundTrip(_ changes: [RecordChange], names: [String]) throws(DecodeFailure) -> [RecordChange] {
            var symbols = SymbolTable()
            return try decode(encode(changes, declaring: names[...]), symbols: &symbols)
        }

        /// Runs `body` on a reader of `bytes` and checks it read every byte.
        static func read<T>(_ bytes: [UInt8], _ body: (inout ByteReader) throws(DecodeFailure) -> T) throws(DecodeFailure) -> T {
            try bytes.withBytes { (raw) throws(DecodeFailure) in
                var reader = ByteReader(raw)
                let value = try body(&reader)
                guard reader.isAtEnd else { throw DecodeFailure("\(reader.remaining) bytes left over") }
                return value
            }
        }

        static func occurrences(of name: String, in bytes: [UInt8]) -> Int {
            let needle = Array(name.utf8)
            guard bytes.count >= needle.count else { return 0 }
            return (0...(bytes.count - needle.count)).count { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
        }

        /// The decompressed payload of every frame of the store at `path`.
        static func rawPayloads(of path: String) throws -> [[UInt8]] {
            let bytes = try JournalFixtures.read(path)
            var decoder = PayloadDecoder(deleteRuns: try JournalFixtures.header(of: bytes, path: path).holdsDeleteRuns)
            var symbols = SymbolTable()
            return try JournalFixtures.frames(in: bytes).map { frame in
                let header = try bytes[frame.offset..<frame.payloadOffset].withUnsafeBytes { try FrameHeader.parse($0).get() }
                return try bytes[frame.payloadOffset..<frame.end].withUnsafeBytes { stored in
                    let raw = try decoder.withRawPayload(of: header, stored: stored) { Array($0) }
                    // Checking the frame takes the dictionary it may carry, for the frames after it.
                    try decoder.checkTransaction(header, stored: stored, symbols: &symbols)
                    return raw
                }
            }
        }
    }

    /// Values compared by their bits, so that NaN equals itself and -0.0 differs from 0.0.
    enum Bitwise: Hashable {
        case float(UInt32)
        case double(UInt64)
        case date(UInt64)
        case other(StoredValue)

        init(_ value: StoredValue) {
            switch value {
            case .float(let number): self = .float(number.bitPattern)
            case .double(let number): self = .double(number.bitPattern)
            case .date(let date): self = .date(date.timeIntervalSinceReferenceDate.bitPattern)
            default: self = .other(value)
            }
        }

        struct Change: Hashable {
            var tag: Int
            var id: RecordID
            var fields: [Symbol]
            var values: [Bitwise]
        }

        static func change(_ change: RecordChange) -> Change {
            switch change {
            case .insert(let id, let fields): Change(tag: 1, id: id, fields: fields.map(\.attribute), values: fields.map { Bitwise($0.value) })
            case .update(let id, let fields): Change(tag: 2, id: id, fields: fields.map(\.attribute), values: fields.map { Bitwise($0.value) })
            case .delete(let id): Change(tag: 3, id: id, fields: [], values: [])
            case .deleteRun(let id, let count): Change(tag: 4, id: id, fields: [], values: [.other(.int64(Int64(count)))])
            }
        }
    }

    /// Values at the edges of each type.
    enum Samples {
        /// Non-ASCII names, so name declarations are exercised as strings too.
        static let names = ["Thing", "value", "other", "Ördnung📦", "名前", "e\u{301}tat"]

        static let values: [(String, StoredValue)] = {
            var values: [(String, StoredValue)] = [("null", .null), ("false", .bool(false)), ("true", .bool(true))]
            for number: Int16 in [.min, .max, 0, -1, 1, 63, -64, 64] { values.append(("int16 \(number)", .int16(number))) }
            for number: Int32 in [.min, .max, 0, -1, 1, Int32(Int16.max) + 1] { values.append(("int32 \(number)", .int32(number))) }
            for number: Int64 in [.min, .max, 0, -1, 1, Int64(Int32.min) - 1] { values.append(("int64 \(number)", .int64(number))) }
            let floats: [Float] = [0, -0.0, 1, -1, .infinity, -.infinity, .nan, -.nan, .signalingNaN, Float(bitPattern: 0x7FC1_2345),
                                   .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, .leastNonzeroMagnitude,
                                   Float(bitPattern: 0x0040_0001), .pi]
            for number in floats { values.append(("float bits \(hex(number.bitPattern))", .float(number))) }
            let doubles: [Double] = [0, -0.0, 1, -1, .infinity, -.infinity, .nan, -.nan, .signalingNaN, Double(bitPattern: 0xFFF8_0000_DEAD_BEEF),
                                     .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, .leastNonzeroMagnitude,
                                     Double(bitPattern: 0x0008_0000_0000_0001), 19.99, Double(bitPattern: 0x0001_2345_6789_ABCD)]
            for number in doubles { values.append(("double bits \(hex(number.bitPattern))", .double(number))) }
            let strings = ["", "plain ASCII", "Zoë (precomposed)", "Zoe\u{308} (combining diaeresis)", "a\u{301}\u{302}\u{303}\u{304} (stacked marks)",
                           "👩‍👩‍👧‍👦🏳️‍🌈🇯🇵", "日本語のテキスト、中文，한국어", "שלום عربى", "nul\u{0}inside", "\u{FEFF}BOM and \u{10FFFF}"]
            for string in strings { values.append(("string \(string.prefix(30).debugDescription)", .string(string))) }
            let dates: [Date] = [.distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -0.0),
                                 Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000.123_456_789),
                                 Date(timeIntervalSinceReferenceDate: 0.000_000_1), Date(timeIntervalSinceReferenceDate: -1e9 - 0.5),
                                 Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude), Date(timeIntervalSinceReferenceDate: 1e300)]
            for date in dates { values.append(("date \(date.timeIntervalSinceReferenceDate)", .date(date))) }
            let data: [Data] = [Data(), Data([0]), Data((0...255).map { UInt8($0) })]
            for bytes in data { values.append(("data of \(bytes.count) bytes", .data(bytes))) }
            let uuids = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                         UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
                         UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!]
            for uuid in uuids { values.append(("uuid \(uuid)", .uuid(uuid))) }
            let thing = Symbol(rawValue: 0), other = Symbol(rawValue: 5)
            values.append(("reference key 0", .reference(RecordID(entity: thing, key: 0))))
            values.append(("reference key 2^62 - 1, the largest", .reference(RecordID(entity: other, key: RecordID.keyLimit - 1))))
            values.append(("empty references", .references([])))
            values.append(("one reference", .references([RecordID(entity: thing, key: 1)])))
            values.append(("20 references", .references((0..<20).map { RecordID(entity: $0 % 2 == 0 ? thing : other, key: UInt64($0) &* 0x9E37_79B9_7F4A_7C15 % RecordID.keyLimit) })))
            return values
        }()

        /// Long values, kept apart so that the prefix test stays small.
        static let longValues: [(String, StoredValue)] = [
            ("a string of 140 000 bytes", .string(String(repeating: "long ✓ ", count: 20_000))),
            ("data of 70 000 bytes", .data(Data(JournalFixtures.noise(count: 70_000, seed: 9)))),
            ("5000 references", .references((0..<5000).map { RecordID(entity: Symbol(rawValue: UInt32($0 % 6)), key: UInt64($0) &* 0x9E37_79B9_7F4A_7C15 % RecordID.keyLimit) })),
        ]

        /// An insert of every sample value, an update of some, and deletes.
        static func everyOperation(long: Bool = true) -> [RecordChange] {
            let thing = Symbol(rawValue: 0), other = Symbol(rawValue: 3)
            let attributes = (1..<UInt32(names.count)).map { Symbol(rawValue: $0) }
            let all = (values + (long ? longValues : [])).enumerated().map { Field(attributes[$0.offset % attributes.count], $0.element.1) }
            return [
                .insert(RecordID(entity: thing, key: 1), all),
                .insert(RecordID(entity: other, key: RecordID.keyLimit - 1), []),
                .update(RecordID(entity: thing, key: 1), [Field(attributes[0], .string("changed")), Field(attributes[1], .null), Field(attributes[2], .double(-.nan))]),
                .update(RecordID(entity: other, key: 0), []),
                .delete(RecordID(entity: other, key: RecordID.keyLimit - 1)),
                .delete(RecordID(entity: thing, key: 0)),
            ]
        }
    }

    /// Seeded random transactions of random values, declaring new names as they go.
    struct RandomTransactions {
        private var generator: JournalFixtures.SeededGenerator
        /// Every name declared so far, in symbol order.
        private(set) var names: [String] = []

        init(seed: UInt64) { generator = JournalFixtures.SeededGenerator(seed: seed) }

        /// The next transaction and the names it declares (a slice of ``names``).
        mutating func next() -> ([RecordChange], ArraySlice<String>) {
            let firstNew = names.count
            if names.isEmpty || Int.random(in: 0..<8, using: &generator) == 0 {
                for _ in 0..<Int.random(in: 1...3, using: &generator) { names.append("n\(names.count) " + string(maxLength: 8)) }
            }
            let changes = (0..<Int.random(in: 0...6, using: &generator)).map { _ in change() }
            return (changes, names[firstNew...])
        }

        private mutating func symbol() -> Symbol { Symbol(rawValue: UInt32.random(in: 0..<UInt32(names.count), using: &generator)) }

        private mutating func id() -> RecordID {
            RecordID(entity: symbol(), key: Bool.random(using: &generator) ? UInt64.random(in: 0..<300, using: &generator) : generator.next() % RecordID.keyLimit)
        }

        private mutating func change() -> RecordChange {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: .insert(id(), fields())
            case 1: .update(id(), fields())
            default: .delete(id())
            }
        }

        private mutating func fields() -> [Field] {
            (0..<Int.random(in: 0...8, using: &generator)).map { _ in Field(symbol(), value()) }
        }

        /// An integer of a random width, so small and extreme values both occur.
        private mutating func bits() -> UInt64 { generator.next() >> UInt64.random(in: 0...63, using: &generator) }

        private mutating func value() -> StoredValue {
            switch Int.random(in: 0..<14, using: &generator) {
            case 0: .null
            case 1: .bool(Bool.random(using: &generator))
            case 2: .int16(Int16(truncatingIfNeeded: bits()))
            case 3: .int32(Int32(truncatingIfNeeded: bits()))
            case 4: .int64(Int64(bitPattern: bits()) * (Bool.random(using: &generator) ? 1 : -1))
            case 5: .float(Float(bitPattern: UInt32(truncatingIfNeeded: generator.next())))
            case 6: .double(Double(bitPattern: generator.next()))
            case 7: .string(string(maxLength: 40))
            case 8: .date(Date(timeIntervalSinceReferenceDate: Bool.random(using: &generator) ? Double(bitPattern: generator.next()) : Double.random(in: -1e10...1e10, using: &generator)))
            case 9: .data(Data((0..<Int.random(in: 0...(Int.random(in: 0..<20, using: &generator) == 0 ? 3000 : 40), using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }))
            case 10: .uuid(UUID(uuid: withUnsafeBytes(of: (generator.next(), generator.next())) { $0.load(as: uuid_t.self) }))
            case 11: .reference(id())
            case 12: .references((0..<Int.random(in: 0...10, using: &generator)).map { _ in id() })
            default: .null
            }
        }

        /// Scalars from ASCII, Latin, combining marks, CJK and emoji.
        private mutating func string(maxLength: Int) -> String {
            let ranges: [ClosedRange<UInt32>] = [0x20...0x7E, 0xA0...0x24F, 0x300...0x36F, 0x4E00...0x9FFF, 0x1F300...0x1FAFF, 0x0...0x1F]
            var string = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...maxLength, using: &generator) {
                let range = ranges[Int.random(in: 0..<ranges.count, using: &generator)]
                string.append(Unicode.Scalar(UInt32.random(in: range, using: &generator))!)
            }
            return String(string)
        }
    }
}
