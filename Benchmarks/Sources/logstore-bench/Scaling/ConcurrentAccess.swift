// Four reader threads and one writer at once, on each store: how much each
// side gets done while the other runs.

import Foundation
import GRDB
import LogStore

/// Readers look up random people and check each name against the value
/// written; the writer saves one new person at a time, durably.
struct ConcurrentAccess {
    let people: [PersonValues]
    let model: Model
    let context: BenchmarkContext
    let size: Int

    static let readers = 4
    /// Lookups between a reader's fresh contexts (or read transactions).
    static let batch = 1_000

    private var duration: Duration { context.scaled(full: .seconds(2), quick: .milliseconds(500)) }

    /// Runs LogStore and SQLite with each of `memories` (every reader
    /// connection warmed before the clock, as LogStore's store is), in
    /// rounds that each start one case later. The writer's row is SQLite's
    /// at its defaults (the first budget).
    func run(storePath: String, sqlitePath: String, memories: [SQLiteMemory], limits: MachineLimits, recordBytes: Double) throws -> [ScalingRow] {
        context.log("scaling \(size.formatted()): 4 readers and 1 writer")
        let check = ResultCheck.eachAgainstWrittenValues("every name read is compared with the value written; the count after the writer stops must be the count before plus its saves")
        let side = SideBySide(workload: .concurrentReads, size: size, repetitions: context.repetitions, check: check)
        var writes: (logStore: [CaseRun], sqlite: [CaseRun]) = ([], [])
        // Each case's writer saves people of its own (the readers check the data set's).
        var calls = 0
        // One pool per budget for every round, as a running app keeps it, so
        // the write-ahead log is reused after the first round rather than
        // started afresh in each (PeopleAtSize.writes says why).
        var databases: [GRDBPeople?] = Array(repeating: nil, count: memories.count)
        defer { databases.forEach { $0?.close() } }
        let reads = try side.run(
            logStore: {
                defer { calls += 1 }
                let (read, written) = try logStoreRound(storePath, calls)
                writes.logStore.append(written)
                return read
            },
            sqlite: memories.enumerated().map { index, memory in
                (memory, {
                    defer { calls += 1 }
                    if databases[index] == nil {
                        databases[index] = try GRDBPeople(path: sqlitePath, synchronousFull: true, pool: true, memory: memory)
                    }
                    let (read, written) = try sqliteRound(databases[index]!, calls)
                    if memory == memories[0] { writes.sqlite.append(written) }
                    return read
                })
            })
        let lookups = min(size, 100_000)
        let row = try side.row(reads, limits: limits, recordBytes: recordBytes) { memory in
            let result = try Probe.run(memory == nil ? .readLogStore : .readSQLite, path: memory == nil ? storePath : sqlitePath, count: size,
                                       [Workload.concurrentReads.rawValue, String(lookups)] + (memory.map { [$0.argument] } ?? [])).result
            return ResidentMemory(total: result.totalResidentBytes ?? 0, added: result.residentBytes ?? 0)
        }
        return [row, side.row(workload: .concurrentWrites, logStore: writes.logStore, sqlite: writes.sqlite, limits: limits, recordBytes: recordBytes)]
    }

    private func logStoreRound(_ path: String, _ round: Int) throws -> (CaseRun, CaseRun) {
        let store = try Store(path: path, model: model)
        defer { store.close() }
        try LogStoreWarm.warm(store, entity: "Person", scan: PersonQueries.noneByScan)
        let before = try store.newContext().count("Person")
        let newPeople = PersonValues.make(100_000, seed: 8_100 + UInt64(round), ages: 1000)
        let people = self.people
        let counts = try ThreadCounts.run(threads: Self.readers + 1, for: duration) { thread, running in
            if thread == 0 {
                let objects = store.newContext()
                var saves = 0
                while running(), saves < newPeople.count {
                    try PersonModel.insert([newPeople[saves]], into: objects)
                    saves += 1
                }
                return saves
            }
            var keys = RandomKeys(count: people.count, seed: UInt64(thread))
            var lookups = 0
            while running() {
                let objects = store.newContext()
                for _ in 0..<Self.batch {
                    let key = keys.next()
                    let person = try objects.object(with: ObjectID(storeID: store.storeID, entityName: "Person", key: UInt64(key))) as! BenchPerson
                    guard person.firstName == people[key - 1].firstName else {
                        throw BenchmarkError("a LogStore reader read \(person.firstName ?? "nil") for person \(key), not \(people[key - 1].firstName)")
                    }
                }
                lookups += Self.batch
            }
            return lookups
        }
        let after = try store.newContext().count("Person")
        return try Self.runs(counts, before: before, after: after, store: "LogStore")
    }

    private func sqliteRound(_ database: GRDBPeople, _ round: Int) throws -> (CaseRun, CaseRun) {
        let writer = database.writer
        try SQLiteMemory.warmEveryReader(writer as! DatabasePool, table: "person")
        let before = try writer.read { db in try GRDBPerson.fetchCount(db) }
        let newPeople = PersonValues.make(100_000, seed: 8_100 + UInt64(round), ages: 1000)
        let people = self.people
        let counts = try ThreadCounts.run(threads: Self.readers + 1, for: duration) { thread, running in
            if thread == 0 {
                var saves = 0
                while running(), saves < newPeople.count {
                    try writer.write { db in try GRDBPeople.insert(CollectionOfOne(newPeople[saves]), db) }
                    saves += 1
                }
                return saves
            }
            var keys = RandomKeys(count: people.count, seed: UInt64(thread))
            var lookups = 0
            while running() {
                try writer.read { db in
                    let statement = try db.cachedStatement(sql: "SELECT firstName FROM person WHERE id = ?")
                    for _ in 0..<Self.batch {
                        let key = keys.next()
                        let name = try String.fetchOne(statement, arguments: [Int64(key)])
                        guard name == people[key - 1].firstName else {
                            throw BenchmarkError("a SQLite reader read \(name ?? "nil") for person \(key), not \(people[key - 1].firstName)")
                        }
                    }
                }
                lookups += Self.batch
            }
            return lookups
        }
        let after = try writer.read { db in try GRDBPerson.fetchCount(db) }
        return try Self.runs(counts, before: before, after: after, store: "SQLite")
    }

    /// The readers' and the writer's runs, after checking the writer's saves all landed.
    private static func runs(_ counts: ThreadCounts.Result, before: Int, after: Int, store: String) throws -> (CaseRun, CaseRun) {
        let saves = counts.perThread[0]
        guard after == before + saves else {
            throw BenchmarkError("\(store) holds \(after) people after \(saves) saves on \(before), not \(before + saves)")
        }
        let lookups = Double(counts.perThread.dropFirst().reduce(0, +))
        let digest = ResultDigest(count: after)
        return (CaseRun(work: lookups, operations: lookups, seconds: counts.seconds, digest: digest),
                CaseRun(work: Double(saves), operations: Double(saves), seconds: counts.seconds, digest: digest))
    }

}

/// Random keys in 1...count, a reader's own sequence.
struct RandomKeys {
    private var random: SeededRandom
    private let count: Int

    init(count: Int, seed: UInt64) {
        self.count = count
        random = SeededRandom(seed: seed &* 0x9e37_79b9)
    }

    mutating func next() -> Int { Int(random.next() % UInt64(count)) + 1 }
}

/// Runs `body` on several threads for a set time; each returns how much it did.
enum ThreadCounts {
    struct Result {
        var perThread: [Int]
        var seconds: Double
    }

    static func run(threads: Int, for duration: Duration,
                    _ body: @escaping @Sendable (_ thread: Int, _ running: () -> Bool) throws -> Int) throws -> Result {
        let clock = ContinuousClock()
        let counts = Counts(threads)
        let start = clock.now
        let deadline = start + duration
        try ThreadsAtOnce.run(count: threads) { thread in
            counts.set(thread, try body(thread) { clock.now < deadline })
        }
        return Result(perThread: counts.values, seconds: (clock.now - start).seconds)
    }

    private final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Int]
        init(_ count: Int) { slots = Array(repeating: 0, count: count) }
        func set(_ index: Int, _ value: Int) { lock.withLock { slots[index] = value } }
        var values: [Int] { lock.withLock { slots } }
    }
}
