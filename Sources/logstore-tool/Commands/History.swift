// `logstore-tool history FILE`: the transactions still in the journal.

import ArgumentParser
import Foundation
import LogStore

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the transactions in the journal, or show one.",
        discussion: """
            One line per transaction: sequence number, time, and per entity the records it \
            inserted (+), updated (~) and deleted (-). Transactions a compaction folded into \
            the snapshot are gone; the first line says up to which sequence number. \
            __Schema is the reserved record holding the model.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Start at this sequence number.")
    var since: UInt64?

    @Option(help: "List at most N transactions.")
    var limit: Int?

    @Option(help: "Print the operations of the transaction with this sequence number.")
    var show: UInt64?

    struct EntityCounts: Encodable {
        var entity: String
        var inserted = 0
        var updated = 0
        var deleted = 0
    }

    struct Transaction: Encodable {
        var sequence: UInt64
        var time: Date
        var changes: [EntityCounts]
    }

    struct Listing: Encodable {
        /// The last sequence number folded into the snapshot (nil without one).
        var foldedThrough: UInt64?
        var transactions: [Transaction]
    }

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let info = try reporting { () throws(LogStoreError) in try StoreInspector.info(path: common.file) }
        let journal = try reporting { () throws(LogStoreError) in
            try Journal(path: common.file, options: JournalOptions(access: .readOnly, createIfMissing: false))
        }
        defer { journal.close() }
        let name = { (symbol: Symbol) in journal.name(of: symbol) ?? "#\(symbol)" }
        if let show {
            var found: CommittedTransaction?
            try reporting { () throws(LogStoreError) in
                try journal.forEachTransaction { if $0.sequence == show { found = $0 } }
            }
            guard let found else {
                let folded = info.snapshot.map { $0.sequence >= show ? " It was folded into the snapshot, which holds the state through sequence \($0.sequence)." : "" } ?? ""
                printError("logstore-tool: \(common.file) has no transaction \(show) in its journal.\(folded)")
                throw ExitStatus.problemFound
            }
            printOperations(of: found, storeID: journal.storeID, name: name)
            return
        }
        var listing = Listing(foldedThrough: info.snapshot?.sequence, transactions: [])
        try reporting { () throws(LogStoreError) in
            try journal.forEachTransaction { transaction in
                guard transaction.sequence >= since ?? 0, listing.transactions.count < limit ?? .max else { return }
                var counts: [EntityCounts] = []
                for change in transaction.changes {
                    let entity = name(change.recordID.entity)
                    let position = counts.firstIndex { $0.entity == entity } ?? counts.endIndex
                    if position == counts.endIndex { counts.append(EntityCounts(entity: entity)) }
                    switch change {
                    case .insert: counts[position].inserted += 1
                    case .update: counts[position].updated += 1
                    case .delete: counts[position].deleted += 1
                    // The deletes it names; the records among them that were live are not known here.
                    case .deleteRun(_, let count):
                        let (sum, overflow) = counts[position].deleted.addingReportingOverflow(Int(clamping: count))
                        counts[position].deleted = overflow ? .max : sum
                    }
                }
                listing.transactions.append(Transaction(sequence: transaction.sequence, time: transaction.timestamp, changes: counts))
            }
        }
        if common.json {
            try common.emitJSON(listing)
            return
        }
        var output = BufferedOutput()
        if let folded = listing.foldedThrough {
            output.write("(transactions 1 to \(folded) are folded into the snapshot)\n")
        }
        for transaction in listing.transactions {
            let changes = transaction.changes.map { "\($0.entity) +\($0.inserted) ~\($0.updated) -\($0.deleted)" }
            output.write("\(transaction.sequence)\t\(ValueText.isoDate(transaction.time))\t\(changes.joined(separator: ", "))\n")
        }
        output.flush()
    }

    private func printOperations(of transaction: CommittedTransaction, storeID: UUID, name: (Symbol) -> String) {
        var output = BufferedOutput()
        if !common.json {
            output.write("transaction \(transaction.sequence) at \(ValueText.isoDate(transaction.timestamp)): \(transaction.changes.count) operations\n")
        }
        var operations: [[(String, Any?)]] = []
        for change in transaction.changes {
            let entity = name(change.recordID.entity)
            let id = ObjectID(storeID: storeID, entityName: entity, key: change.recordID.key)
            var fields: [(String, Any?)] = []
            let operation: String
            switch change {
            case .insert(_, let values), .update(_, let values):
                operation = if case .insert = change { "insert" } else { "update" }
                fields = values.map { (name($0.attribute), ValueText.value(of: $0.value, storeID: storeID, name: name)) }
            case .delete:
                operation = "delete"
            case .deleteRun(let first, let count):
                // One line for the whole run, however many keys it names.
                if common.json {
                    operations.append([("operation", "deleteRun"), ("id", id.uriString), ("count", count)])
                } else {
                    output.write("delete \(entity)/p\(first.key) to \(entity)/p\(first.key + count - 1) (\(count) keys)\n")
                }
                continue
            }
            if common.json {
                operations.append([("operation", operation), ("id", id.uriString), ("values", fields)])
            } else {
                let values = fields.map { "\($0.0)=\(ValueText.json($0.1))" }.joined(separator: " ")
                output.write("\(operation) \(entity)/p\(change.recordID.key)\(values.isEmpty ? "" : " " + values)\n")
            }
        }
        if common.json {
            output.write { bytes in
                ValueText.appendObject([
                    ("formatVersion", 1),
                    ("result", [("sequence", transaction.sequence), ("time", transaction.timestamp), ("operations", operations.map { $0 as Any? })] as [(String, Any?)]),
                ], to: &bytes)
                bytes.append(UInt8(ascii: "\n"))
            }
        }
        output.flush()
    }
}
