// The basic promise: what is appended reads back, across a reopen.

import Foundation
import Testing
@testable import LogStore

@Suite("Journal basics")
struct JournalSmokeTests {
    @Test("Appended transactions read back in order after a reopen")
    func appendAndReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/smoke.logstore"
            let journal = try Journal(path: path)
            let item = journal.symbol(for: "Item"), name = journal.symbol(for: "name")
            let first = try journal.append([.insert(RecordID(entity: item, key: 1), [Field(name, .string("Chair"))])])
            let second = try journal.append([.delete(RecordID(entity: item, key: 1))])
            #expect((first, second) == (1, 2))
            journal.close()

            let reopened = try Journal(path: path)
            defer { reopened.close() }
            #expect(reopened.recovery.outcome == .clean)
            #expect(reopened.lastSequence == 2)
            #expect(reopened.name(of: item) == "Item")
            let transactions = try reopened.transactions()
            #expect(transactions.map(\.sequence) == [1, 2])
            #expect(transactions[0].changes == [.insert(RecordID(entity: item, key: 1), [Field(name, .string("Chair"))])])
            #expect(transactions[1].changes == [.delete(RecordID(entity: item, key: 1))])
        }
    }

    @Test("A large transaction's buffers are let go once it is written; it reads back whole")
    func largeBuffersReleased() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/large.logstore"
            let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            let item = journal.symbol(for: "Item"), blob = journal.symbol(for: "blob")
            let large = Data(repeating: 0x5A, count: 12 << 20)
            try journal.append([.insert(RecordID(entity: item, key: 1), [Field(blob, .data(large))])])
            #expect(journal.heldBufferBytes < JournalWriter.keptBufferCapacity, "an idle journal keeps no 12 MB buffers")
            try journal.append([.insert(RecordID(entity: item, key: 2), [Field(blob, .data(Data([1, 2, 3])))])])
            #expect(journal.heldBufferBytes < JournalWriter.keptBufferCapacity)
            journal.close()
            let reopened = try Journal(path: path, options: JournalFixtures.readOnly)
            defer { reopened.close() }
            let transactions = try reopened.transactions()
            #expect(transactions.count == 2)
            #expect(transactions.first?.changes == [.insert(RecordID(entity: item, key: 1), [Field(blob, .data(large))])])
        }
    }

    @Test("compression .none stores every payload raw; a file mixing raw and LZ4 frames reads back whole")
    func compressionNone() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/mixed.logstore"
            let text = Data(String(repeating: "an oak chair, a walnut desk, ", count: 40).utf8)
            let plain = try Journal(path: path, options: JournalOptions(durability: .deferredToOS, compression: .none))
            let item = plain.symbol(for: "Item"), note = plain.symbol(for: "note")
            for key in 1...3 { try plain.append([.insert(RecordID(entity: item, key: UInt64(key)), [Field(note, .data(text))])]) }
            plain.close()
            let compressed = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            for key in 4...6 { try compressed.append([.insert(RecordID(entity: item, key: UInt64(key)), [Field(note, .data(text))])]) }
            compressed.close()

            // Codec byte 33 of each frame header: 0 raw, 1 LZ4 (FORMAT.md §3).
            let bytes = try JournalFixtures.read(path)
            let codecs = JournalFixtures.frames(in: bytes).map { bytes[$0.offset + 33] }
            #expect(codecs == [0, 0, 0, 1, 1, 1])

            let reopened = try Journal(path: path, options: JournalFixtures.readOnly)
            defer { reopened.close() }
            let read = try reopened.transactions()
            #expect(read.map(\.changes) == (1...6).map { [.insert(RecordID(entity: item, key: UInt64($0)), [Field(note, .data(text))])] })
        }
    }
}
