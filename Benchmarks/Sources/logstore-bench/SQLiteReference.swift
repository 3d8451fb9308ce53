// The reference for durable commits: SQLite, through GRDB, as durable as
// .fsyncEveryCommit.

import Foundation
import GRDB

/// A SQLite database that commits one-row inserts durably: a GRDB
/// `DatabaseQueue` in WAL mode with `synchronous = FULL`, so every commit
/// fsyncs the WAL, as `.fsyncEveryCommit` fsyncs the journal.
final class SQLiteCommitter {
    let path: String
    private let queue: DatabaseQueue

    /// Without `automaticCheckpoints`, SQLite checkpoints only when asked,
    /// as the journal never compacts while it commits, so neither engine's
    /// maintenance is timed. With them (SQLite's default), the commit that
    /// takes the write-ahead log past 1,000 pages checkpoints, and later
    /// commits reuse the log from its start.
    init(path: String, automaticCheckpoints: Bool = false) throws {
        self.path = path
        var configuration = Configuration()
        configuration.journalMode = .wal
        queue = try DatabaseQueue(path: path, configuration: configuration)
        // GRDB's WAL setup picks synchronous = NORMAL, which does not fsync
        // at commit (a power cut can lose the last commits); FULL does.
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            if !automaticCheckpoints { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            try db.execute(sql: "CREATE TABLE record (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        }
    }

    /// The settings a new database at `path` gets, read back from SQLite.
    static func settings(at path: String) throws -> String {
        let database = try SQLiteCommitter(path: path)
        defer { try? database.remove() }
        return try database.settings()
    }

    /// The settings in force, read back from SQLite.
    func settings() throws -> String {
        try queue.read { db in
            let version = try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?"
            let journalMode = try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?"
            let synchronous = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
            let checkpoint = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? -1
            return "SQLite \(version) through GRDB 7.10.0 DatabaseQueue: journal_mode=\(journalMode), synchronous=\(synchronous) (2 is FULL), wal_autocheckpoint=\(checkpoint)"
        }
    }

    /// Inserts one row in a transaction of its own, through a cached statement.
    func insert(_ body: Data) throws {
        try queue.write { db in
            try db.cachedStatement(sql: "INSERT INTO record (body) VALUES (?)").execute(arguments: [body])
        }
    }

    /// Every row's body, by id.
    func bodies() throws -> [Data] {
        try queue.read { db in try Data.fetchAll(db, sql: "SELECT body FROM record ORDER BY id") }
    }

    /// Closes the database and removes its files.
    func remove() throws {
        try queue.close()
        SQLiteFiles.remove(path)
    }
}
