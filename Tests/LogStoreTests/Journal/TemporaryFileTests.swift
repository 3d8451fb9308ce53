// The temporary files beside a store (PATH.creating-PID, PATH.compacting-PID):
// a read-write open removes those of dead processes, and creating a store
// leaves none behind, even across a power cut.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Temporary files beside a store")
struct TemporaryFileTests {
    /// The ID of a process that has exited and been reaped.
    static func deadProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// The names in `directory` that hold `marker`, sorted.
    static func names(in directory: String, holding marker: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(marker) }.sorted()
    }

    @Test("A read-write open removes the creating and compacting files of dead processes and keeps a live process's")
    func staleFilesOfDeadProcesses() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let journal = try Journal(path: path)
            try journal.appendSample(key: 1)
            journal.close()
            let dead = try Self.deadProcessID(), live = getpid()
            // A creator that died after linking its file into place leaves
            // a second name of the store itself: the leftover that, after a
            // compaction, would keep the whole old file on disk.
            try FileManager.default.linkItem(atPath: path, toPath: "\(path).creating-\(dead)")
            try Data("half a snapshot".utf8).write(to: URL(fileURLWithPath: "\(path).compacting-\(dead)"))
            try Data("header".utf8).write(to: URL(fileURLWithPath: "\(path).creating-\(live)"))
            try Data("snapshot".utf8).write(to: URL(fileURLWithPath: "\(path).compacting-\(live)"))
            let all = try Self.names(in: directory, holding: "store.logstore.")

            // A reader changes nothing.
            let reader = try Journal(path: path, options: JournalOptions(access: .readOnly))
            reader.close()
            #expect(try Self.names(in: directory, holding: "store.logstore.") == all)

            let writer = try Journal(path: path)
            writer.close()
            #expect(try Self.names(in: directory, holding: "store.logstore.") == ["store.logstore.compacting-\(live)", "store.logstore.creating-\(live)"])
        }
    }

    @Test("A store replaced by another process's compaction after every open is refused with .storeLocked, never written through a replaced file")
    func storeReplacedDuringEveryOpen() throws {
        let path = "/simulated/store.logstore"
        let disk = SimulatedDisk()
        let journal = try Journal(path: path, options: JournalOptions(compaction: .manual), fileSystem: disk)
        try journal.appendSample(key: 1)
        journal.close()
        disk.replaceAfterEachOpen(path)
        let error = #expect(throws: LogStoreError.self) {
            let stale = try Journal(path: path, options: JournalOptions(compaction: .manual), fileSystem: disk)
            stale.close()
        }
        #expect(error?.kind == .storeLocked)
        #expect(error?.message.contains("replaced") == true)
    }

    @Test("A power cut right after a store is created leaves no temporary name, and the store opens", arguments: SimulatedDisk.PowerCut.allCases)
    func creationSurvivesAPowerCut(cut: SimulatedDisk.PowerCut) throws {
        let path = "/simulated/store.logstore"
        let disk = SimulatedDisk()
        let journal = try Journal(path: path, options: JournalOptions(compaction: .manual), fileSystem: disk)
        journal.close()
        for seed in 0..<8 as Range<UInt64> {
            let after = disk.afterPowerCut(cut, seed: seed)
            #expect(after.allNames == [path], "seed \(seed)")
            let reopened = try Journal(path: path, options: JournalOptions(createIfMissing: false), fileSystem: after)
            #expect(reopened.lastSequence == 0)
            reopened.close()
        }
    }
}

extension TemporaryFileTests {
    @Test("Threads of one process creating the same store at once: one opens it, the others find it locked, none finds a file without a header")
    func concurrentCreationInOneProcess() throws {
        try withTemporaryDirectory { directory in
            for round in 0..<40 {
                let path = directory + "/store-\(round).logstore"
                let outcomes = Protected<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 6) { _ in
                    let outcome: String
                    do throws(LogStoreError) {
                        let journal = try Journal(path: path)
                        journal.close()
                        outcome = "opened"
                    } catch {
                        outcome = error.kind == .storeLocked ? "opened" : "\(error.kind): \(error.message)"
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
                let failures = outcomes.withLock { $0 }.filter { $0 != "opened" }
                #expect(failures.isEmpty, "round \(round): \(failures)")
                if !failures.isEmpty { break }
            }
        }
    }
}
