// Small, recognisable transactions: the value of each tells its key.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

extension Journal {
    /// The one-insert transaction for `key`: an "Event" whose "payload" is
    /// `size` bytes of the key's low byte. The crash child writes the same
    /// shape, so one check serves both.
    func sampleInsert(key: UInt64, size: Int = 100) -> RecordChange {
        .insert(
            RecordID(entity: symbol(for: "Event"), key: key),
            [Field(symbol(for: "sequence"), .int64(Int64(key))),
             Field(symbol(for: "payload"), .data(Data(repeating: UInt8(truncatingIfNeeded: key), count: size)))])
    }

    /// Appends ``sampleInsert(key:size:)``.
    @discardableResult
    func appendSample(key: UInt64, size: Int = 100) throws -> UInt64 {
        try append([sampleInsert(key: key, size: size)])
    }

    /// Checks that the journal holds exactly one sample insert per sequence
    /// number 1...count, keyed by its sequence number, and returns the count.
    func checkSamples(sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let transactions = try transactions()
        for (index, transaction) in transactions.enumerated() {
            let expected = UInt64(index + 1)
            #expect(transaction.sequence == expected, "sequence numbers have a gap", sourceLocation: sourceLocation)
            guard case .insert(let id, let fields)? = transaction.changes.first, transaction.changes.count == 1 else {
                Issue.record("transaction \(transaction.sequence) is not one insert", sourceLocation: sourceLocation)
                continue
            }
            #expect(id.key == transaction.sequence, sourceLocation: sourceLocation)
            #expect(fields.first?.value == .int64(Int64(transaction.sequence)), sourceLocation: sourceLocation)
            if case .data(let payload)? = fields.last?.value {
                #expect(payload.allSatisfy { $0 == UInt8(truncatingIfNeeded: transaction.sequence) }, sourceLocation: sourceLocation)
            } else {
                Issue.record("transaction \(transaction.sequence) has no payload", sourceLocation: sourceLocation)
            }
        }
        return transactions.count
    }
}
