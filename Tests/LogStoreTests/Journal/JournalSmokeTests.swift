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
}
