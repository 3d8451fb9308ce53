// FORMAT.md's worked example (§10) is a real file: these tests build it and
// check the document's hex dumps and annotated bytes against it, byte for byte.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("FORMAT.md")
struct FormatDocumentTests {
    @Test("FORMAT.md's hex dumps of the example file and of its second frame's decompressed payload are the bytes LogStore writes, and every byte their walkthroughs quote is the byte at its offset, covering every byte in order",
          arguments: ["file", "payload"])
    func exampleMatches(block: String) throws {
        let example = try Example.make()
        try Document.expectExample(block, is: block == "file" ? example.file : example.secondPayload)
    }

    @Test("The example stores its first payload raw and its second as LZ4, and reads back as written")
    func exampleShowsBothCodecs() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/example.logstore"
            let bytes = try Example.build(at: path)
            let frames = try Example.frameHeaders(bytes)
            #expect(frames.map(\.codec) == [.raw, .lz4Block])
            #expect(frames.map(\.sequence) == [1, 2])

            let journal = try Journal(path: path, options: JournalOptions(access: .readOnly))
            defer { journal.close() }
            #expect(journal.recovery.outcome == .clean)
            let transactions = try journal.transactions()
            #expect(transactions.map(\.changes) == [
                Example.firstTransaction(journal.symbol(for:)),
                Example.secondTransaction(journal.symbol(for:)),
            ])
            #expect(transactions.map(\.timestamp) == [Example.firstCommit, Example.secondCommit])
        }
    }

    @Test("CRC32C of \"123456789\" is FORMAT.md's check value 0xE3069283")
    func checkValue() {
        let check = Array("123456789".utf8)
        #expect(check.withUnsafeBytes { CRC32C.checksum($0) } == 0xE306_9283)
    }

}

// The helpers are nested in the suite so that their names cannot collide
// with other tests' helpers in the same target.
extension FormatDocumentTests {
    /// The example file of FORMAT.md §10, built through the journal's internal
    /// API with a fixed store UUID and fixed times so that its bytes never vary.
    enum Example {
        static let storeID = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
        /// 2025-01-01T00:00:00Z.
        static let createdAt = Date(timeIntervalSince1970: 1_735_689_600)
        /// The commit times of the two transactions: a second and a minute after creation.
        static let firstCommit = Date(timeIntervalSince1970: 1_735_689_601)
        static let secondCommit = Date(timeIntervalSince1970: 1_735_689_660)
        /// The "added" value of the chair: 2024-12-24T18:30:00Z.
        static let added = Date(timeIntervalSince1970: 1_735_065_000)

        /// The first save: two inserts. Interns Item #0, name #1, quantity #2,
        /// price #3, added #4, sold #5, note #6, parent #7, in that order.
        static func firstTransaction(_ symbol: (String) -> Symbol) -> [RecordChange] {
            let item = symbol("Item"), name = symbol("name"), quantity = symbol("quantity"), price = symbol("price")
            let added = symbol("added"), sold = symbol("sold"), note = symbol("note"), parent = symbol("parent")
            let chair = RecordID(entity: item, key: 1)
            return [
                .insert(chair, [
                    Field(name, .string("Chair")), Field(quantity, .int32(300)), Field(price, .double(19.99)),
                    Field(added, .date(Self.added)), Field(sold, .bool(false)), Field(note, .null),
                ]),
                .insert(RecordID(entity: item, key: 2), [Field(name, .string("Cushion")), Field(parent, .reference(chair))]),
            ]
        }

        /// The second save: an update, a delete and two similar inserts (which
        /// LZ4 compresses). Interns one new name, color #8.
        static func secondTransaction(_ symbol: (String) -> Symbol) -> [RecordChange] {
            let item = symbol("Item"), name = symbol("name"), quantity = symbol("quantity"), price = symbol("price")
            let sold = symbol("sold"), color = symbol("color")
            let folding: [Field] = [Field(name, .string("Folding chair")), Field(color, .string("oak")), Field(price, .double(19.99))]
            return [
                .update(RecordID(entity: item, key: 1), [Field(quantity, .int32(299)), Field(sold, .bool(true))]),
                .delete(RecordID(entity: item, key: 2)),
                .insert(RecordID(entity: item, key: 3), folding),
                .insert(RecordID(entity: item, key: 4), folding),
            ]
        }

        /// Creates the example store at `path` and returns its bytes.
        static func build(at path: String) throws -> [UInt8] {
            try Journal.create(path: path, permissions: 0o600, header: FileHeader(storeID: storeID, createdAt: createdAt, version: FileLayout.indexFrameVersion))
            let journal = try Journal(path: path)
            defer { journal.close() }
            try journal.append(firstTransaction(journal.symbol(for:)), at: firstCommit)
            try journal.append(secondTransaction(journal.symbol(for:)), at: secondCommit)
            journal.close()
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        }

        /// The example file and the decompressed payload of its second frame.
        static func make() throws -> (file: [UInt8], secondPayload: [UInt8]) {
            try withTemporaryDirectory { directory in
                let file = try build(at: directory + "/example.logstore")
                let frames = try frameHeaders(file)
                let second = FileLayout.headerSize + Int(frames[0].frameSize) + FrameLayout.headerSize
                var payload = [UInt8](repeating: 0, count: Int(frames[1].rawSize))
                let stored = Array(file[second..<(second + Int(frames[1].storedSize))])
                try stored.withUnsafeBytes { source in
                    try payload.withUnsafeMutableBytes { try LZ4.decompress(source, into: $0) }
                }
                return (file, payload)
            }
        }

        /// The headers of the frames in `file`, in order.
        static func frameHeaders(_ file: [UInt8]) throws -> [FrameHeader] {
            var headers: [FrameHeader] = []
            var offset = FileLayout.headerSize
            while offset < file.count {
                let head = Array(file[offset..<(offset + FrameLayout.headerSize)])
                let header = try head.withUnsafeBytes { try FrameHeader.parse($0).get() }
                headers.append(header)
                offset += Int(header.frameSize)
            }
            return headers
        }
    }

    /// The hex dump format of FORMAT.md, the same as `xxd -g1`: an 8-digit hex
    /// offset, a colon, 16 bytes in hex, two spaces and the bytes as ASCII
    /// (printable characters as themselves, others as ".").
    enum HexDump {
        /// `bytes` as `xxd` shows them, 16 a line; `base` is the file offset
        /// of the first.
        static func render(_ bytes: [UInt8], base: Int = 0) -> String {
            var lines: [String] = []
            for start in stride(from: 0, to: bytes.count, by: 16) {
                let row = bytes[start..<min(start + 16, bytes.count)]
                let hex = Self.bytes(Array(row))
                let ascii = String(row.map { (0x20...0x7E).contains($0) ? Character(Unicode.Scalar($0)) : "." })
                let offset = String(base + start, radix: 16)
                lines.append(String(repeating: "0", count: 8 - offset.count) + offset + ": "
                    + hex + String(repeating: " ", count: 47 - hex.count) + "  " + ascii)
            }
            return lines.map { $0 + "\n" }.joined()
        }

        /// Bytes as two-digit lower-case hex, separated by spaces.
        static func bytes(_ bytes: [UInt8]) -> String {
            bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
        }
    }

    /// FORMAT.md, found from this file's path, and the blocks between its markers.
    enum Document {
        static func text() throws -> String {
            try String(contentsOf: PackageRoot.url.appendingPathComponent("FORMAT.md"), encoding: .utf8)
        }

        /// The text between `<!-- KIND:begin NAME -->` and `<!-- KIND:end NAME -->`.
        static func section(_ kind: String, _ name: String) throws -> String {
            let text = try text()
            let begin = "<!-- \(kind):begin \(name) -->", end = "<!-- \(kind):end \(name) -->"
            guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
                throw DocumentProblem("FORMAT.md has no \(begin) ... \(end) section")
            }
            return String(text[start.upperBound..<stop.lowerBound])
        }

        /// Checks that the hexdump block `name` holds exactly `dump` in a fenced
        /// block, and prints the block to paste when it does not.
        static func expectBlock(_ name: String, equals dump: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let expected = "\n```text\n" + dump + "```\n"
            // Not #expect(actual == expected): it would print both dumps again,
            // escaped and indented. Standard output gets the block as it must read.
            if try section("hexdump", name) != expected {
                print("<!-- hexdump:begin \(name) -->\n```text\n\(dump)```\n<!-- hexdump:end \(name) -->")
                Issue.record("""
                    FORMAT.md's \(name) hex dump does not match the bytes LogStore writes; \
                    replace it from <!-- hexdump:begin \(name) --> to <!-- hexdump:end \(name) --> \
                    with the block printed on standard output
                    """, sourceLocation: sourceLocation)
            }
        }

        /// Checks that the rows of the walkthrough `name` quote `bytes` exactly:
        /// each row's bytes are the bytes at its offset, and the rows follow
        /// each other with no gap from the first byte to the last.
        /// The block `name` is the hex dump of `bytes`, and its walkthrough quotes them.
        /// `base`: the file offset of `bytes[0]`, as the dump and the rows show it.
        static func expectExample(_ name: String, is bytes: [UInt8], base: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) throws {
            try expectBlock(name, equals: HexDump.render(bytes, base: base), sourceLocation: sourceLocation)
            try expectWalkthrough(name, covers: bytes, base: base, sourceLocation: sourceLocation)
        }

        static func expectWalkthrough(_ name: String, covers bytes: [UInt8], base: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) throws {
            func hexOffset(_ offset: Int) -> String { "0x" + String(base + offset, radix: 16) }
            let rows = try walkthroughRows(name).map { (offset: $0.offset - base, bytes: $0.bytes) }
            #expect(!rows.isEmpty, "FORMAT.md has no walkthrough rows between <!-- walkthrough:begin \(name) --> and its end marker", sourceLocation: sourceLocation)
            var next = 0
            for row in rows {
                #expect(row.offset == next, "walkthrough \(name): the row at \(hexOffset(row.offset)) should start at \(hexOffset(next))", sourceLocation: sourceLocation)
                let end = row.offset + row.bytes.count
                let actual = row.offset >= 0 && end <= bytes.count ? Array(bytes[row.offset..<end]) : []
                #expect(actual == row.bytes, "walkthrough \(name): the bytes at \(hexOffset(row.offset)) are \(HexDump.bytes(actual)), not \(HexDump.bytes(row.bytes))", sourceLocation: sourceLocation)
                next = end
            }
            #expect(next == bytes.count, "walkthrough \(name): the rows end at \(hexOffset(next)), the bytes at \(hexOffset(bytes.count))", sourceLocation: sourceLocation)
        }

        /// Table rows of the walkthrough `name` that start with a 4-digit hex
        /// offset and a cell of hex bytes: `| 0040 | 4c 53 46 52 | magic | ... |`.
        static func walkthroughRows(_ name: String) throws -> [(offset: Int, bytes: [UInt8])] {
            let pattern = try Regex(#"^\| ([0-9a-f]{4}) \| ([0-9a-f]{2}(?: [0-9a-f]{2})*) \|"#)
            return try section("walkthrough", name).split(separator: "\n").compactMap { line in
                guard let match = try pattern.firstMatch(in: line),
                      let offset = match.output[1].substring.flatMap({ Int($0, radix: 16) }),
                      let hex = match.output[2].substring else { return nil }
                return (offset, hex.split(separator: " ").compactMap { UInt8($0, radix: 16) })
            }
        }

        struct DocumentProblem: Error, CustomStringConvertible {
            var description: String
            init(_ description: String) { self.description = description }
        }
    }
}
