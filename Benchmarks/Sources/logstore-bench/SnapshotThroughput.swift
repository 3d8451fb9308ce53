// Benchmark 8: snapshots and compaction. Opening 1,000,000 live records from
// a snapshot against replaying their journal and against GRDB's open and
// first query; open time as history grows, with and without automatic
// compaction; compaction throughput; space amplification; save latency
// during a background compaction.

import Foundation
import GRDB
import Synchronization
import LogStore

enum SnapshotThroughput: BenchmarkGroup {
    static let name = "snapshots"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "8. Snapshots and compaction: open time, history, compaction throughput, space, saves during compaction")
        let count = context.scaled(full: 1_000_000, quick: 50_000)
        let people = PersonValues.make(count, seed: 8, ages: 1000)
        let model = try PersonModel.make(indexingAge: true)
        context.log("snapshots: \(count.formatted()) people in both engines")
        let data = try PeopleDataSet(people, model: model, named: "snapshot", context)
        defer { data.remove(context) }
        let journalPath = data.storePath
        let snapshotPath = context.scratch.freshPath("snapshot-compacted.logstore")
        defer { context.scratch.remove(snapshotPath) }

        // 1. Compaction throughput: the journal of the data set into a
        //    snapshot, a fresh copy each round; the last one is kept.
        context.log("snapshots: compacting \(count.formatted()) records, \(context.repetitions) rounds")
        let manual = JournalOptions(compaction: .manual)
        var compactions: [CompactionReport] = []
        for _ in 0..<context.repetitions {
            context.scratch.remove(snapshotPath)
            try FileManager.default.copyItem(atPath: journalPath, toPath: snapshotPath)
            let store = try Store(path: snapshotPath, model: model, options: manual)
            defer { store.close() }
            let compaction = try store.compact()
            guard compaction.records == count else { throw BenchmarkError("the compaction wrote \(compaction.records) records, not \(count)") }
            compactions.append(compaction)
        }
        let rates = Rates(samples: compactions.map { Double($0.rawBytes) / $0.duration.seconds })
        let compaction = compactions.sorted { $0.duration < $1.duration }[compactions.count / 2]
        report.add("compaction, raw record data", rates, scale: 1e-6, unit: "MB/s", target: .atLeast(100))
        report.add("compaction, records", Rates(samples: compactions.map { Double($0.records) / $0.duration.seconds }), unit: "records/s")
        report.fact("compaction (the median round)", "\(compaction.records) records, \(compaction.rawBytes) raw bytes in \(String(format: "%.3f", compaction.duration.seconds)) s; file \(compaction.bytesBefore) → \(compaction.bytesAfter) bytes")

        // 2. Open: snapshot against replay of the same records, and GRDB.
        context.log("snapshots: opening \(count.formatted()) records, \(context.repetitions) rounds")
        func openCase(_ path: String) -> () throws -> Sample {
            {
                try Sample.timing(work: 1) {
                    let store = try Store(path: path, model: model, options: manual)
                    let found = try store.newContext().count(for: FetchRequest(entityName: "Person"))
                    store.close()
                    guard found == count else { throw BenchmarkError("\(path) opened with \(found) people, not \(count)") }
                }
            }
        }
        let openRates = try measureInRounds(repetitions: context.repetitions, [
            openCase(snapshotPath), openCase(journalPath),
            {
                try Sample.timing(work: 1) {
                    let queue = try DatabaseQueue(path: data.sqlitePath)
                    let found = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM person") } ?? 0
                    try queue.close()
                    guard found == count else { throw BenchmarkError("SQLite opened with \(found) people, not \(count)") }
                }
            },
        ])
        let fromSnapshot = report.add("open from a snapshot + count (\(count.formatted()) records)", value: 1 / openRates[0].median * 1e3, unit: "ms", target: .atMost(500))
        let fromJournal = report.add("open by replaying the journal + count", value: 1 / openRates[1].median * 1e3, unit: "ms")
        let grdbOpen = report.add("GRDB open + SELECT COUNT(*)", value: 1 / openRates[2].median * 1e3, unit: "ms")
        report.compare("replay time ÷ snapshot open time", fromJournal, over: fromSnapshot, target: .atLeast(10))
        report.compare("GRDB open time ÷ snapshot open time (above 1: LogStore opens faster)", grdbOpen, over: fromSnapshot)

        // 3. Save latency during a background compaction, fsync every save.
        context.log("snapshots: save latency with and without a compaction under way")
        do {
            let store = try Store(path: snapshotPath, model: model, options: manual)
            defer { store.close() }
            let saves = context.scaled(full: 400, quick: 100)
            let quiet = try saveLatencies(store, count: saves)
            let compacting = Atomic<Bool>(true)
            let compactor = Thread {
                _ = try? store.compact()
                compacting.store(false, ordering: .relaxed)
            }
            compactor.start()
            var busy: [Double] = []
            while compacting.load(ordering: .relaxed) { busy += try saveLatencies(store, count: 10) }
            guard busy.count >= 10 else { throw BenchmarkError("no save ran during the compaction") }
            for (label, latencies) in [("without compaction", quiet), ("during a background compaction", busy)] {
                let sorted = latencies.sorted()
                report.add("save latency p50, \(label)", value: sorted[sorted.count / 2] * 1e3, unit: "ms")
                report.add("save latency p99, \(label)", value: sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1e3, unit: "ms")
            }
            report.fact("saves during the compaction", "\(busy.count), each an update of one record with fsync")
        }

        // 4. Open time and space as history grows: 1,000 live records.
        let histories = context.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000]
        for saves in histories {
            for policy in [CompactionPolicy.manual, .automatic()] {
                let automatic = policy != .manual
                context.log("snapshots: 1,000 records after \(saves.formatted()) saves, \(automatic ? "automatic compaction" : "no compaction")")
                let path = context.scratch.freshPath("history-\(saves)-\(automatic).logstore")
                defer { context.scratch.remove(path) }
                try buildHistory(path, saves: saves, model: model, policy: policy)
                let rates = try measureInRounds(repetitions: context.repetitions, [openCase1000(path, model)])
                report.add("open, 1,000 live records after \(saves.formatted()) saves, \(automatic ? "automatic compaction" : "no compaction")", value: 1 / rates[0].median * 1e3, unit: "ms")
                if automatic {
                    let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
                    let live = try liveRawBytes(path, model: model)
                    report.add("space amplification after \(saves.formatted()) saves (file ÷ live raw data)", value: Double(size) / Double(live), unit: "×", target: saves == histories.last ? .atMost(2) : nil)
                }
            }
        }
        report.note("open times are the median of \(context.repetitions) opens with a warm page cache; each open checks every snapshot block's checksum and decodes none")
        report.note("space amplification at steady state is the last history's figure under the default policy; the target is at most 2")
        return report
    }

    /// Opens a store of 1,000 people and counts them.
    private static func openCase1000(_ path: String, _ model: Model) -> () throws -> Sample {
        {
            try Sample.timing(work: 1) {
                let store = try Store(path: path, model: model, options: JournalOptions(compaction: .manual))
                defer { store.close() }
                guard try store.newContext().count(for: FetchRequest(entityName: "Person")) == 1_000 else { throw BenchmarkError("\(path) lost people") }
            }
        }
    }

    /// 1,000 people, then `saves` saves each updating one of them.
    private static func buildHistory(_ path: String, saves: Int, model: Model, policy: CompactionPolicy) throws {
        let store = try Store(path: path, model: model, options: JournalOptions(durability: .deferredToOS, compaction: policy))
        defer { store.close() }
        let context = store.newContext()
        try PersonModel.insert(PersonValues.make(1_000, seed: 9), into: context)
        let people = try context.fetchAll(BenchPerson.self)
        for save in 1..<max(saves, 2) {
            let person = people[save % people.count]
            person.age = Int64(save % 100)
            person.orderingValue = Double(save)
            try context.save()
        }
    }

    /// The raw size of a store's live records: compacts a copy and reads it.
    private static func liveRawBytes(_ path: String, model: Model) throws -> UInt64 {
        let copy = path + ".live"
        defer { unlink(copy) }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let store = try Store(path: copy, model: model, options: JournalOptions(compaction: .manual))
        defer { store.close() }
        return try store.compact().rawBytes
    }

    /// The seconds each of `count` saves took, each updating one person, fsync every save.
    private static func saveLatencies(_ store: Store, count: Int) throws -> [Double] {
        let context = store.newContext()
        let request = FetchRequest(entityName: "Person", fetchLimit: 50)
        let people = try context.fetch(request, as: BenchPerson.self)
        var latencies: [Double] = []
        for save in 0..<count {
            people[save % people.count].orderingValue = Double(save)
            latencies.append(try Stopwatch.seconds { try context.save() })
        }
        return latencies
    }
}
