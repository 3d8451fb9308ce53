// The memory each engine reads with in the scaling runs: SQLite's budgets by
// name and on a command line, and the warm-up each case gets before its clock.

import Foundation
import GRDB
import LogStore

extension SQLiteMemory {
    /// The variant without its budget: the same at every size, for charts.
    var kind: String {
        switch self {
        case .defaults: "SQLite defaults"
        case .pageCache: "SQLite page cache ≥ database, warmed"
        case .mmap: "SQLite mmap ≥ database, warmed"
        }
    }

    /// The variant as one command-line word, for a child process.
    var argument: String {
        switch self {
        case .defaults: "defaults"
        case .pageCache(let bytes): "page-cache:\(bytes)"
        case .mmap(let bytes): "mmap:\(bytes)"
        }
    }

    init(argument: String) throws {
        let parts = argument.split(separator: ":")
        switch (parts.first, parts.count == 2 ? Int(parts[1]) : nil) {
        case ("defaults", _) where parts.count == 1: self = .defaults
        case ("page-cache", let bytes?): self = .pageCache(bytes: bytes)
        case ("mmap", let bytes?): self = .mmap(bytes: bytes)
        default: throw BenchmarkError("\"\(argument)\" is not a SQLite memory variant (defaults, page-cache:BYTES, mmap:BYTES)")
        }
    }

    /// Opens the database at `path` read-only on one connection with this budget.
    func openForReading(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        apply(to: &configuration)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Warms every reader connection of `pool` (each has its own page
    /// cache): as many reads at once as the pool has readers, so each
    /// takes a connection of its own.
    static func warmEveryReader(_ pool: DatabasePool, table: String) throws {
        let readers = pool.configuration.maximumReaderCount
        let arrived = Countdown(readers)
        try ThreadsAtOnce.run(count: readers) { _ in
            try pool.read { db in
                try warm(db, table: table)
                arrived.arriveAndWait()
            }
        }
    }

    /// A barrier: each caller waits until `count` have arrived.
    private final class Countdown: @unchecked Sendable {
        private let condition = NSCondition()
        private var remaining: Int
        init(_ count: Int) { remaining = count }
        func arriveAndWait() {
            condition.lock()
            defer { condition.unlock() }
            remaining -= 1
            if remaining == 0 { condition.broadcast() }
            while remaining > 0 { condition.wait() }
        }
    }
}

/// LogStore's counterpart of SQLiteMemory.warm: a scan that decodes every
/// block of the snapshot into the block cache, as a first pass over the
/// data leaves it. `scan` is a predicate no record matches that only a full
/// scan can answer.
enum LogStoreWarm {
    static func warm(_ store: Store, entity: String, scan: String) throws {
        _ = try store.newContext().fetchIDs(FetchRequest(entityName: entity, predicate: try ObjectPredicate(scan)))
    }
}
