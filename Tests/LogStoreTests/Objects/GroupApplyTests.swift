// Under group commit one saver applies the saves a flush made durable for
// the others too: each save still reports its own changes, in sequence
// order, and is visible when its save returns.

import Foundation
import Testing
@testable import LogStore

@Suite("Applying saves that share a flush")
struct GroupApplyTests {
    @Test("8 contexts saving at once under group commit: each save reports its own changes once and is readable when it returns")
    func concurrentSavers() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/people.logstore", model: People.model(), options: JournalOptions(durability: .groupCommit, compaction: .manual))
            defer { store.close() }
            let notified = Protected<[StoreChanges]>([])
            let token = store.addObserver { changes in notified.withLock { $0.append(changes) } }
            defer { store.removeObserver(token) }

            let threads = 8, savesPerThread = 40
            let insertedIDs = Protected<[ObjectID]>([])
            let problems = Protected<[String]>([])
            let finished = DispatchGroup()
            for thread in 0..<threads {
                finished.enter()
                Thread {
                    defer { finished.leave() }
                    let context = store.newContext()
                    for index in 0..<savesPerThread {
                        do {
                            let person = try context.insert("Person")
                            person["firstName"] = "thread \(thread)"
                            person["age"] = Int64(index)
                            try context.save()
                            let id = person.objectID
                            insertedIDs.withLock { $0.append(id) }
                            // Visible to another context as soon as the save returns.
                            let age = try store.newContext().existingObject(with: id)["age"] as? Int64
                            if age != Int64(index) { problems.withLock { $0.append("\(id) reads \(String(describing: age)) after its save") } }
                        } catch {
                            problems.withLock { $0.append("thread \(thread), save \(index): \(error)") }
                        }
                    }
                }.start()
            }
            finished.wait()

            #expect(problems.withLock { $0 } == [])
            let saves = notified.withLock { $0 }
            #expect(saves.count == threads * savesPerThread)
            // Every save reported once, each with its one insert, and the
            // sequence numbers without a gap but for reservations of keys.
            let sequences = saves.map(\.sequence).sorted()
            #expect(Set(sequences).count == sequences.count)
            let reservations = try store.journal.transactions().filter { $0.onlyReservesKeys(in: store.journal) }.map(\.sequence)
            #expect(Set(sequences).isDisjoint(with: reservations))
            #expect(sequences.last.map { $0 - sequences[0] + 1 } == UInt64(sequences.count + reservations.filter { $0 > sequences[0] && $0 < sequences.last! }.count))
            #expect(saves.allSatisfy { $0.inserted.count == 1 && $0.updated.isEmpty && $0.deleted.isEmpty })
            // Each reports its own object: together, every object inserted, once.
            let reported = saves.flatMap(\.inserted)
            #expect(Set(reported).count == reported.count)
            #expect(Set(reported) == Set(insertedIDs.withLock { $0 }))
            // The committed state holds every save.
            #expect(try store.newContext().count(for: FetchRequest(entityName: "Person")) == threads * savesPerThread)
        }
    }
}
