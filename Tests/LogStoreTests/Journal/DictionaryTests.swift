// The store dictionary (FORMAT.md §5.3): small saves compress against the
// bytes of earlier ones, every frame still decodes with only what precedes it,
// and a dictionary the file does not bear out is damage.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Store dictionary")
struct DictionaryTests {
    /// Small saves like an inventory app's: a name and free-text notes.
    struct SmallSaves {
        var random: JournalFixtures.SeededGenerator
        let words = ["oak", "walnut", "chair", "desk", "lamp", "shelf", "blue", "office", "kitchen", "drawer", "brass", "linen"]

        init(seed: UInt64) { random = JournalFixtures.SeededGenerator(seed: seed) }

        mutating func next(key: UInt64, item: Symbol, name: Symbol, notes: Symbol) -> [RecordChange] {
            func phrase(_ count: Int) -> String {
                (0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
            }
            let noteWords = 5 + Int(random.next() % 20)
            return [.insert(RecordID(entity: item, key: key), [Field(name, .string(phrase(3))), Field(notes, .string(phrase(noteWords)))])]
        }
    }

    /// Codec (byte 33) and flags (bytes 34–35) of every frame of `path`.
    static func frameFields(_ path: String) throws -> [(codec: UInt8, flags: UInt16, stored: Int, raw: Int)] {
        let bytes = try JournalFixtures.read(path)
        return JournalFixtures.frames(in: bytes).map { frame in
            (bytes[frame.offset + 33], JournalFixtures.load(UInt16.self, from: bytes, at: frame.offset + 34),
             frame.storedSize, Int(JournalFixtures.load(UInt32.self, from: bytes, at: frame.offset + 12)))
        }
    }

    @Test("After 4 KiB of small saves one frame carries a dictionary; later small saves compress against it, smaller than alone, and read back across reopens")
    func dictionaryRoundTrip() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/dictionary.logstore"
            var saves = SmallSaves(seed: 0xD1C7)
            var written: [[RecordChange]] = []
            let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            let item = journal.symbol(for: "Item"), name = journal.symbol(for: "name"), notes = journal.symbol(for: "notes")
            for key in 1...300 {
                let changes = saves.next(key: UInt64(key), item: item, name: name, notes: notes)
                try journal.append(changes)
                written.append(changes)
            }
            journal.close()

            // More saves after a reopen use the dictionary the file holds.
            let reopened = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            for key in 301...400 {
                let changes = saves.next(key: UInt64(key), item: item, name: name, notes: notes)
                try reopened.append(changes)
                written.append(changes)
            }
            reopened.close()

            let fields = try Self.frameFields(path)
            let carriers = fields.indices.filter { fields[$0].flags & 1 != 0 }
            #expect(carriers.count == 1, "frames carrying a dictionary: \(carriers)")
            let carrier = try #require(carriers.first)
            #expect(carrier > 0 && carrier < 300)
            #expect(fields[..<carrier].allSatisfy { $0.codec != 2 })
            let after = fields[(carrier + 1)...]
            #expect(after.filter { $0.codec == 2 }.count > after.count * 9 / 10, "codecs after the dictionary: \(after.map(\.codec))")

            // Against per-frame LZ4 of the same raw payloads (raw when not smaller).
            let raws = try ValueCodecTests.Codec.rawPayloads(of: path)
            let alone = raws[(carrier + 1)...].reduce(0) { sum, raw in
                sum + min(raw.count, JournalFixtures.compress(raw).count)
            }
            let stored = after.reduce(0) { $0 + $1.stored }
            #expect(stored * 10 < alone * 9, "stored \(stored) bytes against \(alone) for LZ4 on each frame alone")

            let read = try Journal(path: path, options: JournalFixtures.readOnly)
            defer { read.close() }
            #expect(try read.transactions().map(\.changes) == written)
        }
    }

    @Test("A save cut off in the frame that carries the dictionary loses only that save; the writer trains a new one")
    func tornDictionaryFrame() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/torn.logstore"
            var saves = SmallSaves(seed: 0x70B2)
            var written: [[RecordChange]] = []
            let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            let item = journal.symbol(for: "Item"), name = journal.symbol(for: "name"), notes = journal.symbol(for: "notes")
            var key: UInt64 = 0
            while try Self.frameFields(path).allSatisfy({ $0.flags == 0 }) {
                key += 1
                let changes = saves.next(key: key, item: item, name: name, notes: notes)
                try journal.append(changes)
                written.append(changes)
            }
            journal.close()

            // Cut the carrier (the last frame) in the middle of its dictionary.
            let bytes = try JournalFixtures.read(path)
            let carrier = try #require(JournalFixtures.frames(in: bytes).last)
            try JournalFixtures.write(Array(bytes[..<(carrier.payloadOffset + carrier.storedSize / 2)]), to: path)
            written.removeLast()

            let recovered = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            #expect(recovered.recovery.outcome == .tornTail)
            for _ in 0..<200 {
                key += 1
                let changes = saves.next(key: key, item: item, name: name, notes: notes)
                try recovered.append(changes)
                written.append(changes)
            }
            recovered.close()
            #expect(try Self.frameFields(path).filter { $0.flags & 1 != 0 }.count == 1)
            let read = try Journal(path: path, options: JournalFixtures.readOnly)
            defer { read.close() }
            #expect(try read.transactions().map(\.changes) == written)
        }
    }

    @Test("A dictionary the file does not bear out is damage: codec 2 with no dictionary before it, a carried dictionary of 0 or over 64 KiB bytes")
    func dictionaryDamage() throws {
        let emptyTransaction: [UInt8] = [0, 0]  // no declarations, no changes
        var tooLarge = ByteWriter()
        tooLarge.appendVarint(UInt64(FrameLayout.maxDictionarySize + 1))
        let cases: [(String, [UInt8], PayloadCodec, Bool)] = [
            ("codec 2 with no dictionary before it", [0x10, 0x61], .lz4BlockWithDictionary, false),
            ("a carried dictionary of 0 bytes", [0] + emptyTransaction, .raw, true),
            ("a carried dictionary of 64 KiB + 1 bytes", tooLarge.bytes + [UInt8](repeating: 7, count: FrameLayout.maxDictionarySize + 1) + emptyTransaction, .raw, true),
        ]
        for (label, payload, codec, carries) in cases {
            try withTemporaryDirectory { directory in
                let path = directory + "/damaged.logstore"
                var frame = JournalFixtures.frame(payload: payload, sequence: 1, codec: codec, rawSize: codec == .raw ? nil : 1)
                if carries {
                    frame[34] = 1
                    JournalFixtures.resign(&frame, frameAt: 0)
                }
                try JournalFixtures.makeStore(at: path, frames: [frame])
                let error = #expect(throws: LogStoreError.self, "\(label)") {
                    _ = try Journal(path: path, options: JournalFixtures.readOnly)
                }
                #expect(error?.kind == .corruptFrame && error?.message.contains("dictionary") == true, "\(label): \(String(describing: error))")
            }
        }
    }
}
