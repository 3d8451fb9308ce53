// One writer per store file: a second gets a clear error that names the holder.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Writer lock")
struct LockTests {
    @Test("A second writer in the same process gets .storeLocked; after the first closes, it opens")
    func sameProcess() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let first = try Journal(path: path)
            for key in 1...2 { try first.appendSample(key: UInt64(key)) }

            let error = #expect(throws: LogStoreError.self) { _ = try Journal(path: path) }
            #expect(error?.kind == .storeLocked)
            #expect(error?.path == path)
            #expect(error?.message.contains(path) == true)
            #expect(error?.message.contains("this process") == true)

            // Readers are not writers: a read-only open works meanwhile. It
            // reads what frames record durable: the second save records the
            // first, nothing yet records the second (FORMAT.md §7).
            let reader = try Journal(path: path, options: JournalOptions(access: .readOnly))
            #expect(try reader.checkSamples() == 1)
            #expect(reader.recovery.framesNotYetDurable == 1)
            reader.close()

            first.close()
            let second = try Journal(path: path)
            defer { second.close() }
            #expect(try second.appendSample(key: 3) == 3)
        }
    }

    @Test("A writer in another process is named by its process ID; readers see a consistent prefix while it writes")
    func otherProcess() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let child = try CrashChild(store: path, seed: 7)
            defer { child.kill() }
            #expect(child.waitForFirstAcknowledgement())

            let error = #expect(throws: LogStoreError.self) { _ = try Journal(path: path) }
            #expect(error?.kind == .storeLocked)
            #expect(error?.message.contains("process \(child.pid)") == true, "\(error?.message ?? "")")

            // The child appends all the while; each read-only open sees the
            // frames complete when it opened, and at most a torn tail after them.
            for _ in 0..<20 {
                let reader = try Journal(path: path, options: JournalOptions(access: .readOnly))
                #expect(reader.recovery.outcome != .salvaged)
                #expect(try reader.checkSamples() == Int(reader.lastSequence))
                reader.close()
            }

            child.kill()
            let writer = try Journal(path: path)
            defer { writer.close() }
            #expect(try writer.checkSamples() >= Int(child.acknowledged.last ?? 0))
        }
    }

    @Test("After a compaction, a second writer reaching the old file through another name of it is kept out; a reader there reads it as it was")
    func hardLinkedAliasAfterCompaction() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore", alias = directory + "/alias.logstore"
            let model = try CounterModel.make()
            let store = try Store(path: path, model: model, options: CounterModel.manual)
            defer { store.close() }
            try CounterModel.insertCounters(3, into: store.newContext())
            try FileManager.default.linkItem(atPath: path, toPath: alias)
            #expect(throws: LogStoreError.self) { _ = try Journal(path: alias) }
            try store.compact()
            // The compaction left the alias naming the old file, whose lock
            // it let go: a writer there would write a copy no reader of the
            // store sees.
            let error = #expect(throws: LogStoreError.self) { let other = try Journal(path: alias); other.close() }
            #expect(error?.kind == .storeReplaced)
            #expect(error?.message.contains("replaced") == true)
            #expect(try StoreInspector.info(path: alias).isReplaced && !StoreInspector.info(path: path).isReplaced)
            let reader = try Journal(path: alias, options: JournalOptions(access: .readOnly))
            defer { reader.close() }
            #expect(try Store(journal: reader, model: model).newContext().count(for: FetchRequest(entityName: "Counter")) == 3)
            // The store itself goes on.
            try CounterModel.insertCounters(1, into: store.newContext())
            #expect(try store.newContext().count(for: FetchRequest(entityName: "Counter")) == 4)
            // A recovered copy of the old file is a store of its own.
            let recovered = directory + "/recovered.logstore"
            _ = try StoreInspector.recover(path: alias, to: recovered)
            #expect(try !StoreInspector.info(path: recovered).isReplaced)
            let copy = try Store(path: recovered, model: model, options: CounterModel.manual)
            defer { copy.close() }
            try CounterModel.insertCounters(1, into: copy.newContext())
            #expect(try copy.newContext().count(for: FetchRequest(entityName: "Counter")) == 4)
        }
    }
    @Test("A store whose file is removed or renamed while open refuses saves with .storeReplaced until reopened, and so does its compaction", arguments: ["remove", "rename"])
    func fileVanishesWhileOpen(how: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore", moved = directory + "/moved.logstore"
            let model = try CounterModel.make()
            let count = FetchRequest(entityName: "Counter")
            for durability in [Durability.deferredToOS, .fsyncEveryCommit, .groupCommit(window: .zero)] {
                let store = try Store(path: path, model: model, options: JournalOptions(durability: durability, compaction: .manual))
                try CounterModel.insertCounters(2, into: store.newContext())
                if how == "remove" { try FileManager.default.removeItem(atPath: path) } else { try FileManager.default.moveItem(atPath: path, toPath: moved) }
                // Without fsync, writes check the name once a millisecond.
                if durability == .deferredToOS { Thread.sleep(forTimeInterval: 0.005) }
                let context = store.newContext()
                _ = try context.insert("Counter")
                let error = #expect(throws: LogStoreError.self) { try context.save() }
                #expect(error?.kind == .storeReplaced, "\(durability): \(String(describing: error))")
                #expect(error?.message.contains(path) == true)
                // A compaction would make a store under the name from the open file.
                let compaction = #expect(throws: LogStoreError.self) { try store.compact() }
                #expect(compaction?.kind == .storeReplaced)
                #expect(!FileManager.default.fileExists(atPath: path))
                // Given its name back, the store refuses until reopened, and
                // then holds every acknowledged save and none of the others.
                if how == "rename" {
                    try FileManager.default.moveItem(atPath: moved, toPath: path)
                    #expect(throws: LogStoreError.self) { try context.save() }
                }
                store.close()
                if how == "rename" {
                    let reopened = try Store(path: path, model: model, options: CounterModel.manual)
                    #expect(try reopened.newContext().count(for: count) == 2, "\(durability)")
                    reopened.close()
                }
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }
}
