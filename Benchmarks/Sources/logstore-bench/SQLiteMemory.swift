// How much memory SQLite may keep pages in: the variable of the equal-memory
// runs, since LogStore serves reads from process memory and a block cache of
// up to 1 GiB while SQLite's default page cache is 2 MB per connection.

import Foundation
import GRDB

/// SQLite's page memory for a read workload: its defaults, or a budget at
/// least as large as the database in its page cache or memory-mapped.
enum SQLiteMemory: Sendable, Equatable {
    /// SQLite's default: `cache_size = -2000` (about 2 MB per connection), no mmap.
    case defaults
    /// A page cache of `bytes` per connection (`PRAGMA cache_size = -KiB`).
    case pageCache(bytes: Int)
    /// The database memory-mapped up to `bytes` (`PRAGMA mmap_size`), beside the default page cache.
    case mmap(bytes: Int)

    /// LogStore's block cache on this machine: 1/16 of physical memory,
    /// between 16 MiB and 1 GiB (JournalOptions.blockCacheCapacity's
    /// default). The budget SQLite gets, unless its database is larger.
    static var logStoreBlockCacheBytes: Int {
        min(max(Int(ProcessInfo.processInfo.physicalMemory / 16), 16 << 20), 1 << 30)
    }

    /// The three variants a read workload runs with, the budgets at least
    /// `databaseBytes` (the database's file size).
    static func variants(databaseBytes: Int) -> [SQLiteMemory] {
        let budget = max(logStoreBlockCacheBytes, databaseBytes)
        return [.defaults, .pageCache(bytes: budget), .mmap(bytes: budget)]
    }

    /// A short name for tables and case labels.
    var label: String {
        switch self {
        case .defaults: "SQLite defaults"
        case .pageCache(let bytes): "SQLite cache_size \(bytes >> 20) MiB"
        case .mmap(let bytes): "SQLite mmap_size \(bytes >> 20) MiB"
        }
    }

    /// The statements that set this budget on one connection.
    var pragmas: [String] {
        switch self {
        case .defaults: []
        case .pageCache(let bytes): ["PRAGMA cache_size = -\(bytes >> 10)"]
        case .mmap(let bytes): ["PRAGMA mmap_size = \(bytes)"]
        }
    }

    /// Sets the budget on every connection `configuration` opens, the
    /// readers of a pool included.
    func apply(to configuration: inout Configuration) {
        let pragmas = self.pragmas
        guard !pragmas.isEmpty else { return }
        configuration.prepareDatabase { db in
            for pragma in pragmas { try db.execute(sql: pragma) }
        }
    }

    /// Reads every page of `table` and of each of its indexes through `db`,
    /// as LogStore's block cache is warm after a first pass: the table by a
    /// scan that reads every column (a bare count would be answered from an
    /// index), each index by a scan only it can answer.
    static func warm(_ db: Database, table: String) throws {
        let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
        let lengths = columns.map { "length(\($0))" }.joined(separator: " + ")
        _ = try Int.fetchOne(db, sql: "SELECT sum(\(lengths)) FROM \(table) NOT INDEXED")
        for index in try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list(?)", arguments: [table]) {
            guard let column = try String.fetchOne(db, sql: "SELECT name FROM pragma_index_info(?)", arguments: [index]) else { continue }
            _ = try Int.fetchOne(db, sql: "SELECT count(\(column)) FROM \(table) INDEXED BY \(index)")
        }
    }
}
