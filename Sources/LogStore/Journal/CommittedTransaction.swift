// A transaction read back from the journal.

import Foundation

/// One saved transaction, as read from the file.
public struct CommittedTransaction: Sendable, Hashable {
    /// Its sequence number: 1 for the first transaction of a store, one more each save.
    public var sequence: UInt64
    /// When it was written, to the microsecond.
    public var timestamp: Date
    /// Its changes, in the order they were appended.
    public var changes: [RecordChange]
}
