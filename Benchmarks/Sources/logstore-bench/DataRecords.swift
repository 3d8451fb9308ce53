// The transaction most benchmarks append: one insert of one `.data` field.

import Foundation
import LogStore

/// Builds transactions of one insert of one record holding `payload` in a
/// `.data` field: the simplest save that carries a given number of bytes.
struct DataRecords: Sendable {
    let journal: Journal
    private let record: Symbol
    private let body: Symbol

    init(_ journal: Journal) {
        self.journal = journal
        record = journal.symbol(for: "Record")
        body = journal.symbol(for: "body")
    }

    /// Appends one record with key `key` holding `payload`.
    func append(key: UInt64, _ payload: Data) throws(LogStoreError) {
        try journal.append([.insert(RecordID(entity: record, key: key), [Field(body, .data(payload))])])
    }
}
