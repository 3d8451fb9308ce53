// The scaling runs: every workload at every size on LogStore and SQLite,
// with the machine's limits measured first.

import Foundation

enum ScalingMatrix {
    static let name = "scaling"

    /// Runs `sizes` in increasing order. A size is skipped, with the reason,
    /// when the previous size's memory or time, scaled up, would not fit.
    static func run(in context: BenchmarkContext, sizes: [Int], minutesPerSize: Double) throws -> ScalingReport {
        var report = ScalingReport()
        let sample = ScalingPeople.make(min(sizes.max() ?? 0, 200_000))
        report.recordBytes = Double(sample.reduce(0) { $0 + $1.rawSize }) / Double(sample.count)
        let limits = try MachineLimits.measure(context, records: recordBytes(sample))
        report.limits = limits

        var previous: (size: Int, seconds: Double, memory: MemoryRow)?
        for size in sizes.sorted() {
            if let previous, let reason = reasonToSkip(size, after: previous, minutesPerSize: minutesPerSize) {
                context.log("scaling: skipping \(size.formatted()) records: \(reason)")
                report.skipped.append(SkippedSize(size: size, reason: reason))
                continue
            }
            let started = ContinuousClock.now
            var seconds: Double { (ContinuousClock.now - started).seconds }
            do {
                var sized = report
                sized.sizes.append(size)
                try PeopleAtSize(size: size, context: context, limits: limits, recordBytes: report.recordBytes).run(into: &sized)
                sized.rows.append(try InventoryMix(size: size, context: context, limits: limits, recordBytes: report.recordBytes).run())
                report = sized
            } catch {
                // Keep what the smaller sizes found; the run fails at the end.
                // The time until the failure still bounds the next size's
                // estimate from below, better than a smaller size scaled up.
                context.log("scaling: \(size.formatted()) records FAILED after \(Int(seconds)) s: \(error)")
                report.failed.append(SkippedSize(size: size, reason: "\(error)"))
                if let last = previous { previous = (size, seconds, last.memory) }
                continue
            }
            let elapsed = seconds
            context.log("scaling: \(size.formatted()) records took \(Int(elapsed)) s")
            previous = (size, elapsed, report.memory.last!)
        }
        report.notes = [
            "each store's figure is the median of \(context.repetitions) runs, with the range; the cases rotate which runs first",
            "SQLite is GRDB 7.10.0 in WAL mode: a DatabaseQueue (read-only for the reads), or a DatabasePool where threads read at once; cached prepared statements; records read by a hand-written init(row:); dates stored as REAL seconds since the reference date, as LogStore stores 8 bytes; orderingValue and dates have fractions on both sides; an index on age (Person) and on orderingValue (Item), as LogStore's model indexes them",
            "every read workload runs against SQLite at its defaults (2 MB page cache per connection) and with a page cache (cache_size) at least as large as the database and as LogStore's block cache, warmed; the Person reads also with mmap_size as large; every case is warmed before its clock (LogStore by a scan that decodes every block, SQLite by reading every page of the table and each index, on every connection a pool has); open-and-query sets the budgets in a new process, where nothing is warm",
            "resident memory is what a child process gained (VmRSS after minus before opening) by opening one store with the given budget, warming it and running the workload once; the JSON also has the total VmRSS",
            "cold runs drop the kernel's page cache before each run; open-and-query-cold times the whole new process, lookup-cold the open and \(Probe.coldLookups.formatted()) lookups of distinct keys after it, inside the process",
            "LogStore saves at most \(PersonModel.peoplePerSave.formatted()) objects per save (a save is one journal frame of at most 256 MiB); SQLite inserts everything in one transaction",
            "saves are durable on both sides (LogStore .fsyncEveryCommit, SQLite synchronous=FULL) except the deferred-saves row (LogStore .deferredToOS, SQLite synchronous=NORMAL)",
            "single saves are also timed one by one (each insert and save on LogStore, each write transaction on SQLite; the clock reads fall inside both rates alike): the latency table gives nearest-rank percentiles over every save of every round (with fewer than 1,000 saves, p99.9 is the maximum); a compaction LogStore's saves start runs beside the later saves and slows them where it does, and only the wait for it after the last save is left out (the quiescent line counts it); LogStore opens the store at the start of each round, SQLite keeps one connection",
            "the workloads that save run LogStore under its default compaction policy; \"until quiescent\" lines time LogStore until a compaction its saves started has finished (where one did), SQLite's checkpoints running inside its commits (wal_autocheckpoint at its default)",
            "4 readers beside 1 writer run for a set time: a compaction LogStore's writer starts runs inside that time, and one still running at its end is stopped when the store closes",
            "LogStore's looked-up and fetched objects are copied into values and their context freed inside the clock, as GRDB's records are values",
            "LogStore's data set is one save of every person, then compacted (a snapshot), as the default policy leaves a store; reads open it read-only",
            "updates and deletes commit a random tenth of the people in one durable save, on fresh copies of both files, written back to disk before the clock starts; cached UPDATE person SET age = ? WHERE id = ? and DELETE FROM person WHERE id = ?",
            "open-and-query times a new process from start to exit: open, then the IDs of the people aged 500",
            "results compared every round: lookups the names of distinct keys in order; range-fetch the names in lastName order and every person's values by key; scan the key set; count the count; saves, updates and deletes the count and the values of a sample of people (by key where both engines chose the keys alike)",
            "peak memory is the peak resident size of a child process inserting the people in one save, beyond what it held before (its input); the batch import's is that of a child importing them with a BatchInsertRequest (one transaction per 10,000, automatic compaction, then compact()); resident per record is what a new process gains by opening the file and running its first query",
        ]
        return report
    }

    /// The Person records as bytes (strings, then the numbers), the data the
    /// LZ4 limits compress.
    private static func recordBytes(_ people: [PersonValues]) -> [UInt8] {
        var bytes: [UInt8] = []
        for person in people {
            bytes += person.firstName.utf8
            bytes.append(0)
            bytes += person.lastName.utf8
            bytes.append(0)
            withUnsafeBytes(of: person.age.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: person.orderingValue.bitPattern.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: person.dateCreated.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { bytes += $0 }
        }
        return bytes
    }

    /// Why `size` should not run, judging by the size before it; nil to run it.
    private static func reasonToSkip(_ size: Int, after previous: (size: Int, seconds: Double, memory: MemoryRow), minutesPerSize: Double) -> String? {
        let scale = Double(size) / Double(previous.size)
        // The parent holds the input values and a bulk insert's objects;
        // the child's peak measured them at the smaller size.
        let inputBytes = Double(size) * 64
        let neededBytes = inputBytes + Double(max(previous.memory.logStorePeakInsert, previous.memory.logStorePeakBatchImport, previous.memory.sqlitePeakInsert)) * scale * 1.5
        if let available = availableMemory(), neededBytes > Double(available) {
            return "it would need about \(Int(neededBytes / 1e9)) GB of memory and \(Int(Double(available) / 1e9)) GB are available"
        }
        let minutes = previous.seconds * scale * 1.1 / 60
        if minutes > minutesPerSize {
            return "it would take about \(Int(minutes)) minutes (\(previous.size.formatted()) took \(Int(previous.seconds / 60)) minutes), over the budget of \(Int(minutesPerSize)) minutes per size (--minutes-per-size)"
        }
        return nil
    }

    /// MemAvailable from /proc/meminfo, in bytes.
    private static func availableMemory() -> Int? {
        guard let info = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
              let line = info.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1024
    }
}
