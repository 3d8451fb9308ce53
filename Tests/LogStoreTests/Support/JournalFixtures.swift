// Shared fixtures for the format and recovery tests: a store of known
// transactions, the frames found by walking its bytes, frames crafted byte by
// byte, and the checks every damage test makes of the error it gets.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore
// For SplitMix64, the seeded generator of logstore-tool's demo.
@testable import logstore_tool

/// Everything is nested here so that no name collides with other tests' helpers.
enum JournalFixtures {
    // MARK: - The file header

    /// The header of the store file whose bytes (from its start) are `bytes`.
    static func header(of bytes: [UInt8], path: String) throws -> FileHeader {
        try Array(bytes.prefix(FileLayout.headerSize)).withUnsafeBytes { try FileHeader.decode($0, path: path) }
    }

    /// The header of the store file open as `file`.
    static func header(of file: SystemFile) throws -> FileHeader {
        try header(of: file.read(count: FileLayout.headerSize, at: 0), path: file.path)
    }

    // MARK: - Frames in a file

    /// A frame found by walking a store file (FORMAT.md §1 layout): the file
    /// header is 64 bytes, and each frame is 40 + storedSize bytes, storedSize
    /// being the u32 at the frame's offset 8.
    struct Frame: Equatable, CustomStringConvertible {
        /// Where the frame starts in the file.
        var offset: Int
        var storedSize: Int
        /// 1 for the first frame after the file header.
        var number: Int

        var payloadOffset: Int { offset + FrameLayout.headerSize }
        var end: Int { payloadOffset + storedSize }
        var size: Int { end - offset }
        var description: String { "frame \(number) at \(offset) (\(size) bytes)" }
    }

    /// The frames of `bytes`, in order, up to the first that does not fit in
    /// the file: from the header's end, or a version 5 file's anchor pages'.
    static func frames(in bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        let readVersion = bytes.count >= 12 ? load(UInt16.self, from: bytes, at: 10) : 0
        var offset = readVersion >= FileLayout.pagedSnapshotVersion ? FileLayout.pagedFramesStart : FileLayout.headerSize
        while offset + FrameLayout.headerSize <= bytes.count {
            let storedSize = Int(load(UInt32.self, from: bytes, at: offset + 8))
            guard offset + FrameLayout.headerSize + storedSize <= bytes.count else { break }
            frames.append(Frame(offset: offset, storedSize: storedSize, number: frames.count + 1))
            offset += FrameLayout.headerSize + storedSize
        }
        return frames
    }

    static func load<T: FixedWidthInteger>(_: T.Type, from bytes: [UInt8], at offset: Int) -> T {
        bytes[offset..<(offset + MemoryLayout<T>.size)].withUnsafeBytes { T(littleEndian: $0.loadUnaligned(as: T.self)) }
    }

    /// Overwrites `bytes` at `offset` with `value`, little-endian.
    static func store<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8], at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }

    /// Recomputes the checksum of the frame at `offset` (CRC32C of its bytes
    /// 8 ..< 40 + storedSize, stored at 4), so an edit reaches the checks behind it.
    static func resign(_ bytes: inout [UInt8], frameAt offset: Int) {
        let storedSize = Int(load(UInt32.self, from: bytes, at: offset + 8))
        let end = offset + FrameLayout.headerSize + storedSize
        let checksum = bytes[(offset + FrameLayout.checksummedHeaderStart)..<end].withUnsafeBytes { CRC32C.checksum($0) }
        store(checksum, into: &bytes, at: offset + 4)
    }

    /// Recomputes the file header's checksum: CRC32C of bytes 0 ..< 60, stored at 60.
    static func resignHeader(_ bytes: inout [UInt8]) {
        let checksum = bytes[0..<FileLayout.headerChecksumOffset].withUnsafeBytes { CRC32C.checksum($0) }
        store(checksum, into: &bytes, at: FileLayout.headerChecksumOffset)
    }

    /// A whole frame built from a raw payload, for contents the writer never
    /// produces. Its checksum is valid; `rawSize` defaults to the payload's size.
    static func frame(
        payload: [UInt8], sequence: UInt64, codec: PayloadCodec = .raw, rawSize: UInt32? = nil
    ) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: FrameLayout.headerSize) + payload
        var header = FrameHeader(
            checksum: 0, storedSize: UInt32(payload.count), rawSize: rawSize ?? UInt32(payload.count),
            sequence: sequence, timestampMicroseconds: 1_700_000_000_000_000 + Int64(sequence), kind: .transaction, codec: codec)
        bytes.withUnsafeMutableBytes { header.write(into: $0) }
        return bytes
    }

    /// The LZ4 block of `raw`, as the writer would store it.
    static func compress(_ raw: [UInt8]) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: LZ4.compressBound(raw.count))
        let size = raw.withUnsafeBytes { source in block.withUnsafeMutableBytes { LZ4.compress(source, into: $0) } }
        return Array(block.prefix(size))
    }

    // MARK: - A store of known transactions

    /// The names every fixture store declares in its first frame, in symbol order.
    static let names = ["Item", "name", "count", "blob", "note", "tags"]
    /// A name only the last transaction uses, so that its frame declares it.
    static let lastName = "lastOnly"

    /// A store file written through the journal, with what was written.
    struct Store {
        var path: String
        /// The changes of each transaction; transaction `i` has sequence `i + 1`.
        var transactions: [[RecordChange]]
        /// The file as written.
        var bytes: [UInt8]
        /// Its frames, one per transaction.
        var frames: [Frame]

        var lastFrame: Frame { frames[frames.count - 1] }
    }

    /// The symbol of a fixture name: names are interned in the order of
    /// ``names`` and then ``lastName``, so their numbers never vary.
    static func symbol(_ name: String) -> Symbol {
        Symbol(rawValue: UInt32(names.firstIndex(of: name) ?? names.count))
    }

    /// Deterministic bytes that LZ4 cannot compress.
    static func noise(count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        let words = (0..<(count / 8 + 1)).map { _ in generator.next() }
        return words.withUnsafeBytes { Array($0.prefix(count)) }
    }

    /// The changes of fixture transaction `number` (1-based) of `count`. They
    /// vary in size; the writer compresses all but the last. The last one
    /// inserts a record with `lastPayloadBytes` of data under ``lastName``:
    /// noise, so that its frame is stored raw, unless `compressibleLast`.
    static func changes(_ number: Int, of count: Int, lastPayloadBytes: Int, compressibleLast: Bool = false) -> [RecordChange] {
        let item = symbol("Item")
        let id = RecordID(entity: item, key: UInt64(number))
        if number == count {
            let data = compressibleLast ? Data(repeating: 7, count: lastPayloadBytes) : Data(noise(count: lastPayloadBytes, seed: UInt64(number)))
            return [.insert(id, [Field(symbol("name"), .string("last")), Field(symbol(lastName), .data(data))])]
        }
        var changes: [RecordChange] = [.insert(id, [
            Field(symbol("name"), .string("item \(number) " + String(repeating: "ab", count: number * 23 % 150))),
            Field(symbol("count"), .int64(Int64(number) * 1000 - 5)),
            Field(symbol("note"), .null),
            Field(symbol("tags"), .references((1..<number).map { RecordID(entity: item, key: UInt64($0)) })),
        ])]
        if number > 1 {
            changes.append(.update(RecordID(entity: item, key: UInt64(number - 1)), [Field(symbol("count"), .int64(-Int64(number)))]))
        }
        if number % 3 == 0 {
            changes.append(.delete(RecordID(entity: item, key: UInt64(number - 2))))
        }
        return changes
    }

    /// The commit time of fixture transaction `number`.
    static func commitTime(_ number: Int) -> Date { Date(timeIntervalSince1970: 1_700_000_000 + Double(number)) }

    /// Creates a store at `path` with `count` transactions (at least 2) and
    /// returns it with its bytes and frame offsets. Frame 1 declares
    /// ``names``; the last frame declares ``lastName`` and holds about
    /// `lastPayloadBytes` of payload (of data, when `compressibleLast`).
    static func makeStore(at path: String, count: Int = 5, lastPayloadBytes: Int = 300, compressibleLast: Bool = false,
                          version: UInt16 = FileLayout.createdVersion) throws -> Store {
        // A file of another version than a new store's is created first, so
        // that the journal opens it rather than create one.
        if version != FileLayout.createdVersion {
            try Journal.create(path: path, permissions: 0o600, header: FileHeader(storeID: UUID(), createdAt: commitTime(0), version: version))
        }
        // Each frame on disk before the next, as the default mode writes
        // them: every frame then records its predecessor durable (FORMAT.md
        // §6), so damage to one with frames after it is damage, and a frame
        // appended again after a repair is the same bytes.
        let journal = try Journal(path: path)
        for name in names { _ = journal.symbol(for: name) }
        var transactions: [[RecordChange]] = []
        for number in 1...count {
            if number == count { #expect(journal.symbol(for: lastName) == symbol(lastName)) }
            let changes = changes(number, of: count, lastPayloadBytes: lastPayloadBytes, compressibleLast: compressibleLast)
            try journal.append(changes, at: commitTime(number))
            transactions.append(changes)
        }
        journal.close()
        let bytes = try read(path)
        let frames = frames(in: bytes)
        #expect(frames.count == count && frames.last?.end == bytes.count, "the fixture file does not walk as \(count) frames")
        return Store(path: path, transactions: transactions, bytes: bytes, frames: frames)
    }

    /// Runs `body` with a fixture store (see ``makeStore(at:count:lastPayloadBytes:compressibleLast:)``)
    /// at `store.logstore` in a new temporary directory, and that directory.
    static func withStore<T>(
        count: Int = 5, lastPayloadBytes: Int = 300, compressibleLast: Bool = false, version: UInt16 = FileLayout.createdVersion,
        _ body: (Store, String) throws -> T
    ) throws -> T {
        try withTemporaryDirectory { directory in
            let store = try makeStore(at: directory + "/store.logstore", count: count, lastPayloadBytes: lastPayloadBytes, compressibleLast: compressibleLast, version: version)
            return try body(store, directory)
        }
    }

    /// Creates a store at `path` whose frames are exactly `frames`, after a
    /// header written by the journal.
    static func makeStore(at path: String, frames: [[UInt8]]) throws {
        try Journal.create(path: path, permissions: 0o600, header: FileHeader(storeID: UUID(), createdAt: commitTime(0), version: FileLayout.createdVersion))
        try write(try read(path) + frames.joined(), to: path)
    }

    // MARK: - Files

    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }

    // MARK: - Opening

    static let readOnly = JournalOptions(access: .readOnly)
    static let salvage = JournalOptions(durability: .deferredToOS, recoveryMode: .salvage)
    static let readOnlySalvage = JournalOptions(access: .readOnly, recoveryMode: .salvage)

    /// The error opening `path` throws, or nil when it opens.
    static func openError(_ path: String, _ options: JournalOptions = JournalOptions()) -> LogStoreError? {
        do {
            let journal = try Journal(path: path, options: options)
            journal.close()
            return nil
        } catch {
            return error
        }
    }

    /// Checks that opening `path` fails with `.corruptFrame` at `frame`, with
    /// a message that names the path, the frame and a way out.
    static func expectCorruptFrame(
        _ path: String, at frame: Frame, _ options: JournalOptions = JournalOptions(), _ context: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = openError(path, options) else {
            Issue.record("\(context): opening \(path) succeeded; expected .corruptFrame at \(frame)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.kind == .corruptFrame, "\(context): \(error)", sourceLocation: sourceLocation)
        #expect(error.offset == UInt64(frame.offset), "\(context): \(error)", sourceLocation: sourceLocation)
        #expect(error.frameNumber == frame.number, "\(context): \(error)", sourceLocation: sourceLocation)
        #expect(error.path == path, "\(context): \(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(path) && error.message.contains("offset \(frame.offset)"), "\(context): \(error.message)", sourceLocation: sourceLocation)
        #expect(error.message.contains("salvage"), "\(context): the message offers no way out: \(error.message)", sourceLocation: sourceLocation)
    }

    /// Checks an error's kind and that its message names `path` and suggests `nextStep`.
    static func expectError(
        _ error: LogStoreError?, _ kind: LogStoreError.Kind, path: String, nextStep: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error else {
            Issue.record("opening \(path) succeeded; expected \(kind)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        #expect(error.path == path, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(path), "the message does not name the file: \(error.message)", sourceLocation: sourceLocation)
        #expect(error.message.contains(nextStep), "the message does not say what to do (\"\(nextStep)\"): \(error.message)", sourceLocation: sourceLocation)
    }

    // MARK: - Randomness

    /// A generator whose sequence depends only on its seed: SplitMix64, the
    /// one logstore-tool's demo uses.
    struct SeededGenerator: RandomNumberGenerator {
        private var base: SplitMix64

        init(seed: UInt64) { base = SplitMix64(seed: seed) }

        mutating func next() -> UInt64 { base.next() }
    }
}
