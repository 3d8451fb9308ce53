// What each engine holds in memory after a read workload, measured in this
// process around a separate, untimed pass: both engines run in one process,
// so the figure is what one engine added, not the process's whole footprint.

import Foundation

/// The memory an engine added from before it opened to after one pass of
/// a workload, while it is still open: heap bytes in use (LogStore's
/// committed state, objects and block cache; SQLite's page cache and
/// statements, all through malloc) and file pages mapped into the process
/// and resident (SQLite's mmap).
struct EngineMemory {
    var heapBytes: Int
    var mappedFileBytes: Int

    var totalBytes: Int { heapBytes + mappedFileBytes }

    /// Opens an engine, runs `workload` on it once, measures, then closes it.
    static func measure<Engine>(open: () throws -> Engine, workload: (Engine) throws -> Void, close: (Engine) -> Void) throws -> EngineMemory {
        let heap = HeapInUse.bytes(), mapped = residentFileBytes()
        let engine = try open()
        defer { close(engine) }
        try workload(engine)
        return EngineMemory(heapBytes: HeapInUse.bytes() - heap, mappedFileBytes: residentFileBytes() - mapped)
    }

    /// `RssFile` of /proc/self/status: resident pages of files mapped into this process.
    private static func residentFileBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssFile:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    /// Adds `engine`'s memory after `workload` to `report`, in MB.
    func add(to report: inout GroupReport, engine: String, after workload: String) {
        let detail = mappedFileBytes > 0 ? String(format: " (heap %.1f MB + mapped file %.1f MB)", Double(heapBytes) / 1e6, Double(mappedFileBytes) / 1e6) : ""
        report.add("memory added by \(engine) after \(workload)\(detail)", value: Double(totalBytes) / 1e6, unit: "MB")
    }

    static let note = "memory: both engines run in one process, so each engine's figure is what it added, measured in a separate untimed pass: heap bytes in use (glibc mallinfo2, which counts SQLite's page cache and LogStore's objects, indexes and block cache) plus resident pages of files it mapped (RssFile, SQLite's mmap), from before it opened to after one pass of the workload with it still open; the OS page cache, shared by both, is not counted"
}

/// A data set's SQLite database opened once per memory variant
/// (SQLiteMemory.variants), each connection warmed, for read workloads.
struct SQLiteReaders {
    let variants: [(memory: SQLiteMemory, database: GRDBPeople)]

    /// Opens `path` (checkpointed: its size is the database's, its indexes made) once per variant.
    init(path: String) throws {
        let bytes = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        variants = try SQLiteMemory.variants(databaseBytes: bytes).map { memory in
            (memory, try Self.open(path, memory: memory))
        }
    }

    /// A connection to `path` with `memory`, every page read once.
    static func open(_ path: String, memory: SQLiteMemory) throws -> GRDBPeople {
        let database = try GRDBPeople(path: path, synchronousFull: false, memory: memory)
        try database.warm()
        return database
    }

    /// What `workload` adds to memory on a fresh, warmed connection with each variant's budget.
    func memory(_ workload: (GRDBPeople) throws -> Void) throws -> [(SQLiteMemory, EngineMemory)] {
        try variants.map { memory, database in
            (memory, try EngineMemory.measure(open: { try Self.open(database.path, memory: memory) }, workload: workload, close: { $0.close() }))
        }
    }

    func close() {
        for variant in variants { variant.database.close() }
    }
}
