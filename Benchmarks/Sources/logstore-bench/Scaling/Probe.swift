// Work done in a child process of the harness: a cold open is only cold in
// a new process, and peak memory is only one store's in a process of its own.
//
//   logstore-bench --probe KIND [PATH COUNT [ARGUMENTS…]]
//
// The child prints one JSON line (a ProbeResult); the parent times it from
// start to exit.

import Foundation
import GRDB
import LogStore

/// What a child process measured.
struct ProbeResult: Codable, Sendable {
    /// The first query's answer (the IDs of people aged 500), for opens.
    var digest: ResultDigest?
    /// Resident bytes the work added (VmRSS after minus before).
    var residentBytes: Int?
    /// VmRSS after the work.
    var totalResidentBytes: Int?
    /// Seconds of the timed part of the work, when the child times it itself.
    var seconds: Double?
    /// The process's peak resident bytes (VmHWM) beyond what it held before the work.
    var peakBytes: Int?
    /// For a build through a context: the peak resident bytes while the
    /// saves ran beyond what the process held just before them (the
    /// objects included), the largest over the saves: what a save needs
    /// on top of the objects it saves.
    var savePeakBytes: Int?
}

enum Probe {
    enum Kind: String, CaseIterable, Sendable {
        /// Start and exit: the floor under every probe.
        case nothing
        /// Insert COUNT people into a new store at PATH in one save, then
        /// compact it (into data blocks of BLOCKSIZE bytes after COUNT, if given).
        case buildLogStore = "build-logstore"
        /// Import COUNT people into a new store at PATH with a
        /// `BatchInsertRequest` (values read one at a time, no objects) under
        /// the default automatic compaction, then compact it.
        case importLogStore = "import-logstore"
        /// Insert COUNT people into a new SQLite database at PATH in one transaction.
        case buildSQLite = "build-sqlite"
        /// Open the store at PATH and fetch the IDs of people aged 500.
        case openLogStore = "open-logstore"
        /// Open the database at PATH (with the SQLite memory variant given
        /// after COUNT, if any) and select the ids of people aged 500.
        case openSQLite = "open-sqlite"
        /// Open the store at PATH read-write, as an app does (no automatic
        /// compaction), and fetch the IDs of people aged 50 (AppStorage/ReopenAfterHistory.swift).
        case reopenLogStore = "reopen-logstore"
        /// Open the database at PATH read-write and select the ids of people aged 50.
        case reopenSQLite = "reopen-sqlite"
        /// Open the store at PATH, warm it, run a read workload once (WORKLOAD
        /// LOOKUPS after COUNT); the resident memory is the store's. With
        /// REPEATS after LOOKUPS, runs it that many times more and reports
        /// their seconds (for profiles and probes, not the harness).
        case readLogStore = "read-logstore"
        /// The same on the database at PATH (WORKLOAD LOOKUPS MEMORY [REPEATS]
        /// after COUNT).
        case readSQLite = "read-sqlite"
        /// Time opening the store at PATH and 1,000 lookups of distinct keys.
        case lookupsAfterOpenLogStore = "lookups-after-open-logstore"
        /// The same on the database at PATH.
        case lookupsAfterOpenSQLite = "lookups-after-open-sqlite"
        /// Open the store at PATH read-write and make COUNT single-person
        /// saves, each fdatasynced, with PREALLOCATION bytes reserved ahead
        /// of the journal (after COUNT; the default when not given); the
        /// seconds are the saves'. For probes and profiles, not the harness.
        case saveLogStore = "save-logstore"
        /// Create COUNT simple users at PATH (a new store) in one save,
        /// compact, then delete them all with a `BatchDeleteRequest`; the
        /// seconds are the delete's. For probes and profiles, not the harness.
        case batchDeleteLogStore = "batch-delete-logstore"
        /// Create COUNT simple users at PATH (a new store) in one save and
        /// compact, then fetch them all as objects REPEATS times (after
        /// COUNT, 1 when not given), each in a new context, as the anchors'
        /// users workload does once; the seconds are the fetches'. For
        /// probes and profiles, not the harness.
        case fetchUsersLogStore = "fetch-users-logstore"
        /// The same in a new SQLite database at PATH: INSERT, checkpoint,
        /// then fetch every row as a record by init(row:).
        case fetchUsersSQLite = "fetch-users-sqlite"
        /// Open the inventory store at PATH, warm it and run the mix's two fetches once.
        case inventoryFetchesLogStore = "inventory-fetches-logstore"
        /// The same on the inventory database at PATH (MEMORY after COUNT).
        case inventoryFetchesSQLite = "inventory-fetches-sqlite"
    }

    /// The lookups of a cold run, right after open.
    static let coldLookups = 1_000

    // MARK: - Parent side

    /// Runs the harness as a child doing `kind`; returns its result and the
    /// seconds from start to exit.
    static func run(_ kind: Kind, path: String = "", count: Int = 0, _ arguments: [String] = []) throws -> (result: ProbeResult, seconds: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--probe", kind.rawValue, path, String(count)] + arguments
        let output = Pipe()
        process.standardOutput = output
        var data = Data()
        let seconds = try Stopwatch.seconds {
            try process.run()
            data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
        }
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("the \(kind.rawValue) probe on \(path) exited with status \(process.terminationStatus)")
        }
        do {
            return (try JSONDecoder().decode(ProbeResult.self, from: data), seconds)
        } catch {
            throw BenchmarkError("the \(kind.rawValue) probe printed something that is not its result: \(String(decoding: data, as: UTF8.self))")
        }
    }

    /// Process starts per second: `count` children that exit at once.
    static func startSample(count: Int) throws -> Sample {
        var seconds = 0.0
        for _ in 0..<count { seconds += try run(.nothing).seconds }
        return Sample(work: Double(count), seconds: seconds)
    }

    // MARK: - Child side

    /// The child's work: called by main when the first argument is `--probe`.
    static func main(_ arguments: [String]) -> Never {
        do {
            guard arguments.count >= 3, let kind = Kind(rawValue: arguments[0]), let count = Int(arguments[2]) else {
                throw BenchmarkError("usage: --probe \(Kind.allCases.map(\.rawValue).joined(separator: "|")) PATH COUNT [ARGUMENTS…]")
            }
            let result = try work(kind, path: arguments[1], count: count, Array(arguments.dropFirst(3)))
            let line = try JSONEncoder().encode(result)
            FileHandle.standardOutput.write(line + Data("\n".utf8))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("logstore-bench probe: \(error)\n".utf8))
            exit(1)
        }
    }

    private static func work(_ kind: Kind, path: String, count: Int, _ arguments: [String]) throws -> ProbeResult {
        // What the work opened stays open until its memory is measured.
        var held: [Any] = []
        defer { withExtendedLifetime(held) {} }
        switch kind {
        case .nothing:
            return ProbeResult()
        case .buildLogStore:
            let people = ScalingPeople.make(count)
            var options = JournalOptions(compaction: .manual)
            if let blockSize = arguments.first {
                guard let bytes = Int(blockSize), bytes > 0 else { throw BenchmarkError("usage: --probe \(kind.rawValue) PATH COUNT [BLOCKSIZE]") }
                options.snapshotBlockSize = bytes
            }
            // nil once a reset of the peak fails: the figure would not be the saves'.
            var savePeak: Int? = 0
            var result = try measuringMemory {
                let store = try Store(path: path, model: try PersonModel.make(indexingAge: true), options: options)
                try PersonModel.insert(people, into: store) { objects in
                    let before = ProcessMemory.resetPeak()
                    try objects.save()
                    if let before, let peak = savePeak { savePeak = max(peak, ProcessMemory.read().peakSinceReset - before.resident) } else { savePeak = nil }
                }
                _ = try store.compact()
                store.close()
                return nil
            }
            result.savePeakBytes = savePeak
            return result
        case .importLogStore:
            let people = ScalingPeople.make(count)
            return try timed { try measuringMemory {
                let store = try Store(path: path, model: try PersonModel.make(indexingAge: true))
                let values = people.lazy.map { person -> [String: Any?] in
                    ["firstName": person.firstName, "lastName": person.lastName, "age": person.age,
                     "orderingValue": person.orderingValue, "dateCreated": person.dateCreated]
                }
                try store.execute(BatchInsertRequest(entityName: "Person", objects: values))
                _ = try store.compact()
                store.close()
                return nil
            } }
        case .buildSQLite:
            let people = ScalingPeople.make(count)
            return try measuringMemory {
                let database = try GRDBPeople(path: path, synchronousFull: true, indexingAge: true)
                try database.insertWithStatement(people)
                _ = try database.fileSize()  // checkpoints, so the file holds every row
                database.close()
                return nil
            }
        case .openLogStore:
            let model = try PersonModel.make(indexingAge: true)
            return try measuringMemory {
                let store = try Store(path: path, model: model, options: JournalOptions(access: .readOnly))
                held.append(store)
                let ids = try store.newContext().fetchIDs(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == 500")))
                return ResultDigest(keySet: ids.map { Int64($0.key) })
            }
        case .saveLogStore:
            var options = JournalOptions(compaction: .manual)
            if let argument = arguments.first {
                guard let bytes = Int(argument), bytes >= 0 else { throw BenchmarkError("usage: --probe \(kind.rawValue) PATH COUNT [PREALLOCATION]") }
                options.preallocationSize = bytes
            }
            let people = PersonValues.make(count, seed: 8_003, ages: 1000)
            let store = try Store(path: path, model: try PersonModel.make(indexingAge: true), options: options)
            defer { store.close() }
            let objects = store.newContext()
            let seconds = try Stopwatch.seconds {
                for values in people { try PersonModel.insert([values], into: objects) }
            }
            return ProbeResult(seconds: seconds)
        case .batchDeleteLogStore:
            let store = try Store(path: path, model: try SimpleUsers.model(), options: JournalOptions(compaction: .manual))
            defer { store.close() }
            try SimpleUsers.insert(SimpleUsers.make(count, seed: 23), into: store)
            try store.compact()
            let seconds = try Stopwatch.seconds { try store.execute(BatchDeleteRequest(entityName: "User")) }
            return ProbeResult(seconds: seconds)
        case .fetchUsersLogStore:
            let store = try Store(path: path, model: try SimpleUsers.model(), options: JournalOptions(compaction: .manual))
            defer { store.close() }
            try SimpleUsers.insert(SimpleUsers.make(count, seed: 23), into: store)
            try store.compact()
            let repeats = try Self.repeats(arguments, kind)
            let seconds = try Stopwatch.seconds {
                for _ in 0..<repeats { keep(try store.newContext().fetch(SimpleUsers.request).count) }
            }
            return ProbeResult(seconds: seconds)
        case .fetchUsersSQLite:
            let database = try SimpleUsers.database(path)
            defer { try? (database as? DatabaseQueue)?.close() }
            try SimpleUsers.insert(SimpleUsers.make(count, seed: 23), into: database)
            try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            let repeats = try Self.repeats(arguments, kind)
            let seconds = try Stopwatch.seconds {
                for _ in 0..<repeats { keep(try SimpleUsers.fetchAll(database).count) }
            }
            return ProbeResult(seconds: seconds)
        case .openSQLite:
            let memory = try arguments.first.map(SQLiteMemory.init(argument:)) ?? .defaults
            return try measuringMemory {
                let queue = try memory.openForReading(path)
                held.append(queue)
                let ids = try queue.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM person WHERE age = 500") }
                return ResultDigest(keySet: ids)
            }
        case .reopenLogStore:
            let model = try PersonModel.make(indexingAge: true)
            return try timed { try measuringMemory {
                let store = try Store(path: path, model: model, options: JournalOptions(compaction: .manual))
                held.append(store)
                let ids = try store.newContext().fetchIDs(FetchRequest(entityName: "Person", predicate: try ObjectPredicate("age == \(ReopenAfterHistory.queriedAge)")))
                return ResultDigest(keySet: ids.map { Int64($0.key) })
            } }
        case .reopenSQLite:
            return try timed { try measuringMemory {
                let queue = try DatabaseQueue(path: path)
                held.append(queue)
                let ids = try queue.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM person WHERE age = ?", arguments: [ReopenAfterHistory.queriedAge]) }
                return ResultDigest(keySet: ids)
            } }
        case .readLogStore, .readSQLite:
            guard arguments.count >= 2, let workload = Workload(rawValue: arguments[0]), let lookups = Int(arguments[1]) else {
                throw BenchmarkError("usage: --probe \(kind.rawValue) PATH COUNT WORKLOAD LOOKUPS [MEMORY] [REPEATS]")
            }
            let keys = PersonQueries.distinctKeys(lookups, of: count, seed: PersonQueries.lookupSeed)
            let repeatsArgument = kind == .readLogStore ? 2 : 3
            let repeats = arguments.count > repeatsArgument ? Int(arguments[repeatsArgument]) ?? 0 : 0
            var result: ProbeResult
            var repeated: () throws -> Void = {}
            if kind == .readLogStore {
                let model = try PersonModel.make(indexingAge: true)
                result = try measuringMemory {
                    let reads = try LogStorePersonReads(try Store(path: path, model: model, options: JournalOptions(access: .readOnly)), lookupKeys: keys)
                    held.append(reads.store)
                    try reads.warm()
                    repeated = { _ = try reads.once(workload) }
                    return try reads.once(workload)
                }
            } else {
                let memory = try arguments.count > 2 ? SQLiteMemory(argument: arguments[2]) : .defaults
                result = try measuringMemory {
                    let reader: any DatabaseReader = workload == .concurrentReads
                        ? try GRDBPeople.open(path, synchronousFull: true, pool: true, memory: memory) : try memory.openForReading(path)
                    let reads = SQLitePersonReads(reader: reader, keys: keys)
                    held.append(reader)
                    try reads.warm()
                    repeated = { _ = try reads.once(workload) }
                    return try reads.once(workload)
                }
            }
            if repeats > 0 { result.seconds = try Stopwatch.seconds { for _ in 0..<repeats { try repeated() } } }
            return result
        case .lookupsAfterOpenLogStore:
            let keys = PersonQueries.distinctKeys(coldLookups, of: count, seed: PersonQueries.coldSeed)
            let model = try PersonModel.make(indexingAge: true)
            return try timed {
                let store = try Store(path: path, model: model, options: JournalOptions(access: .readOnly))
                return ProbeResult(digest: PersonQueries.digest(names: try LogStorePersonReads(store, lookupKeys: keys).lookup()))
            }
        case .lookupsAfterOpenSQLite:
            let keys = PersonQueries.distinctKeys(coldLookups, of: count, seed: PersonQueries.coldSeed)
            return try timed {
                ProbeResult(digest: PersonQueries.digest(names: try SQLitePersonReads(reader: try SQLiteMemory.defaults.openForReading(path), keys: keys).lookup()))
            }
        case .inventoryFetchesLogStore:
            let model = try InventoryMix.model()
            return try measuringMemory {
                let store = try Store(path: path, model: model, options: JournalOptions(access: .readOnly))
                held.append(store)
                try InventoryMix.warm(store)
                return try InventoryMix.fetchesDigest(store.newContext())
            }
        case .inventoryFetchesSQLite:
            let memory = try arguments.first.map(SQLiteMemory.init(argument:)) ?? .defaults
            return try measuringMemory {
                let queue = try memory.openForReading(path)
                held.append(queue)
                try queue.read { db in try SQLiteMemory.warm(db, table: "item") }
                return try queue.read(InventoryMix.fetchesDigest)
            }
        }
    }

    /// `body`'s result with the seconds it took in the child: the work
    /// without the process's start and exit.
    private static func timed(_ body: () throws -> ProbeResult) throws -> ProbeResult {
        var result = ProbeResult()
        let seconds = try Stopwatch.seconds { result = try body() }
        result.seconds = seconds
        return result
    }

    /// The REPEATS argument: the first of `arguments`, 1 when there is none.
    private static func repeats(_ arguments: [String], _ kind: Kind) throws -> Int {
        guard let argument = arguments.first else { return 1 }
        guard let repeats = Int(argument), repeats > 0 else { throw BenchmarkError("usage: --probe \(kind.rawValue) PATH COUNT [REPEATS]") }
        return repeats
    }

    /// Runs `body` and reports the resident memory it added and the peak
    /// beyond what the process held before it.
    private static func measuringMemory(_ body: () throws -> ResultDigest?) throws -> ProbeResult {
        let before = ProcessMemory.read()
        let digest = try body()
        let after = ProcessMemory.read()
        return ProbeResult(digest: digest, residentBytes: after.resident - before.resident, totalResidentBytes: after.resident,
                           peakBytes: after.peak - before.resident)
    }
}

/// The Person records of the scaling runs: ages uniform in 0..<1000, a few
/// last names starting with "sm" in some case. The parent and its children
/// make the same ones from the same seed.
enum ScalingPeople {
    static func make(_ count: Int) -> [PersonValues] {
        PersonValues.make(count, seed: 8, ages: 1000, moreLastNames: ["Smith", "smalley", "SMYTHE"])
    }
}

/// This process's resident memory, from /proc/self/status.
struct ProcessMemory {
    var resident: Int
    /// The process's peak resident size, resets by ``resetPeak()`` included.
    var peak: Int
    /// The peak since the last ``resetPeak()`` (VmHWM as the kernel reports it).
    var peakSinceReset: Int

    /// The highest VmHWM that ``resetPeak()`` started again from, so that
    /// ``peak`` stays the process's whatever was reset.
    nonisolated(unsafe) private static var peakBeforeResets = 0

    static func read() -> ProcessMemory {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func kilobytes(_ field: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        let highWater = kilobytes("VmHWM")
        return ProcessMemory(resident: kilobytes("VmRSS"), peak: max(highWater, peakBeforeResets), peakSinceReset: highWater)
    }

    /// Starts VmHWM again from the resident size now, so that the next
    /// ``peakSinceReset`` measures what came after; returns the memory
    /// then, or nil when /proc/self/clear_refs cannot be written (the peak
    /// since then would include what came before).
    static func resetPeak() -> ProcessMemory? {
        peakBeforeResets = max(peakBeforeResets, read().peak)
        guard (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil else { return nil }
        return read()
    }
}
