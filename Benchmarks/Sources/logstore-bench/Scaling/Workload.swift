// The workloads of the scaling runs: what each measures, in what unit, and
// which of the machine's limits bounds it.

/// One workload, run on LogStore and on SQLite at every size.
enum Workload: String, CaseIterable, Encodable, Sendable {
    case bulkInsert = "bulk-insert"
    case durableSaves = "durable-saves"
    case deferredSaves = "deferred-saves"
    case lookup
    case lookupCold = "lookup-cold"
    case rangeFetch = "range-fetch"
    case scan
    case count
    case update
    case delete
    case openAndQuery = "open-and-query"
    case openAndQueryCold = "open-and-query-cold"
    case inventoryMix = "inventory-mix"
    case concurrentReads = "concurrent-reads"
    case concurrentWrites = "concurrent-writes"

    var title: String {
        switch self {
        case .bulkInsert: "bulk insert, one save per million (index on age)"
        case .durableSaves: "single-record saves, fsync each (SQLite synchronous=FULL)"
        case .deferredSaves: "single-record saves, no fsync (SQLite synchronous=NORMAL)"
        case .lookup: "lookup by ID, read firstName (fresh context)"
        case .lookupCold: "open + 1,000 lookups by ID, page cache dropped, new process (timed inside it)"
        case .rangeFetch: "age 100...200 sorted by lastName, objects"
        case .scan: "unindexed scan, lastName BEGINSWITH[c] 'sm'"
        case .count: "count of age 100...200 (indexed)"
        case .update: "update 10% in one save"
        case .delete: "delete 10% in one save"
        case .openAndQuery: "open + first query in a new process"
        case .openAndQueryCold: "open + first query in a new process, page cache dropped"
        case .inventoryMix: "inventory mix: insert, move, delete, save, sorted and expensive fetches"
        case .concurrentReads: "4 reader threads beside 1 writer: lookups"
        case .concurrentWrites: "1 writer thread beside 4 readers: durable saves"
        }
    }

    /// A title short enough for a chart's panel.
    var shortTitle: String {
        switch self {
        case .bulkInsert: "bulk insert, one save"
        case .durableSaves: "single saves, fsync each"
        case .deferredSaves: "single saves, no fsync"
        case .lookup: "lookup by ID"
        case .lookupCold: "lookup by ID, cold"
        case .rangeFetch: "indexed range sorted, objects"
        case .scan: "unindexed scan"
        case .count: "count, indexed range"
        case .update: "update 10% in one save"
        case .delete: "delete 10% in one save"
        case .openAndQuery: "open + first query, new process"
        case .openAndQueryCold: "open + first query, cold"
        case .inventoryMix: "inventory mix, per round"
        case .concurrentReads: "4 readers beside 1 writer"
        case .concurrentWrites: "1 writer beside 4 readers"
        }
    }

    /// What the throughput counts.
    var unit: String {
        switch self {
        case .bulkInsert, .update, .delete: "records/s"
        case .durableSaves, .deferredSaves, .concurrentWrites: "saves/s"
        case .lookup, .lookupCold, .concurrentReads: "lookups/s"
        case .rangeFetch, .scan, .count: "records/s"
        case .openAndQuery, .openAndQueryCold: "opens/s"
        case .inventoryMix: "rounds/s"
        }
    }

    /// What one operation is, for the latency (seconds per operation).
    var operation: String {
        switch self {
        case .bulkInsert: "the whole insert and save"
        case .durableSaves, .deferredSaves, .concurrentWrites: "one save"
        case .lookup, .lookupCold, .concurrentReads: "one lookup"
        case .rangeFetch, .scan, .count: "one fetch"
        case .update, .delete: "the whole save"
        case .openAndQuery, .openAndQueryCold: "one process"
        case .inventoryMix: "one round"
        }
    }

    /// The machine's limit for this workload, in the workload's unit, and
    /// how it was derived. `recordBytes` is the raw size of a Person's values.
    func limit(_ limits: MachineLimits, recordBytes: Double) -> (rate: Double, basis: String) {
        switch self {
        case .bulkInsert, .update:
            let bandwidth = min(limits.sequentialWrite, limits.lz4Compress)
            return (bandwidth / recordBytes, "the raw values written at min(sequential write, LZ4 compress)")
        case .delete:
            return (limits.sequentialWrite / 8, "an 8-byte key per record at sequential write")
        case .durableSaves, .concurrentWrites, .inventoryMix:
            // The faster way to make 100 bytes durable: LogStore writes into
            // reserved space, SQLite's WAL over its own after a checkpoint.
            return (max(limits.syncedWrites, limits.syncedOverwrites), "pwrite + fdatasync, one per save, the faster of appending and overwriting")
        case .deferredSaves:
            return (limits.sequentialWrite / recordBytes, "the raw values written at sequential write")
        case .lookup, .lookupCold:
            return (limits.randomMemoryReads, "one random memory read per lookup")
        case .concurrentReads:
            return (limits.randomMemoryReads * 4, "one random memory read per lookup, 4 threads")
        case .rangeFetch, .scan:
            return (limits.memoryCopy / recordBytes, "the raw values copied in memory")
        case .count:
            return (limits.memoryCopy / 8, "an 8-byte index entry per record copied in memory")
        case .openAndQuery, .openAndQueryCold:
            return (limits.processStarts, "a process that starts and exits")
        }
    }
}
