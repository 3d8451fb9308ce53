// A child process for the crash tests: appends transactions to the store at
// argv[1] and prints each acknowledged sequence number (flushed at once),
// until the parent kills it. argv[3], when given, names the durability mode:
// fsync (every commit, the default), group (group commit) or deferred
// (deferred to the OS).
//
// `logstore-crash-child insert STORE COUNT` inserts COUNT objects without
// saving them, prints each one's key as it gets its ID, then waits to be
// killed: an app that crashed between insert and save.
//
// `logstore-crash-child compact STORE SEED` saves objects through a Store
// instead, numbered on from those already saved, prints each acknowledged
// number, and compacts every few saves, printing "stage NAME" as each step
// of the compaction begins and lingering there a moment, so that the
// parent can kill it inside any step.

import Foundation
import LogStore

let arguments = CommandLine.arguments
if arguments.count >= 4, arguments[1] == "compact" {
    saveAndCompact(path: arguments[2], seed: UInt64(arguments[3]) ?? 1)
}
if arguments.count >= 4, arguments[1] == "insert" {
    insertWithoutSaving(path: arguments[2], count: Int(arguments[3]) ?? 1)
}
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: logstore-crash-child STORE [SEED [fsync|group|deferred]] | compact STORE SEED\n".utf8))
    exit(2)
}
let seed = arguments.count >= 3 ? UInt64(arguments[2]) ?? 1 : 1
let durability: Durability = switch arguments.count >= 4 ? arguments[3] : "fsync" {
case "group": .groupCommit
case "deferred": .deferredToOS
default: .fsyncEveryCommit
}
do {
    let journal = try Journal(path: arguments[1], options: JournalOptions(durability: durability))
    let entity = journal.symbol(for: "Event")
    let payload = journal.symbol(for: "payload"), sequenceField = journal.symbol(for: "sequence")
    var state = seed
    while true {
        // Varying sizes, so kills land in headers and payloads of all lengths.
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let size = Int(state >> 54)  // 0 to 1023 bytes
        let next = journal.lastSequence + 1
        let change = RecordChange.insert(
            RecordID(entity: entity, key: next),
            [Field(sequenceField, .int64(Int64(next))), Field(payload, .data(Data(repeating: UInt8(truncatingIfNeeded: next), count: size)))])
        let sequence = try journal.append([change])
        print(sequence)
        fflush(nil)
    }
} catch {
    FileHandle.standardError.write(Data("logstore-crash-child: \(error)\n".utf8))
    exit(1)
}

func saveAndCompact(path: String, seed: UInt64) -> Never {
    var state = seed
    func random(_ bound: UInt64) -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return (state >> 33) % bound
    }
    do {
        let model = try Model {
            Entity("Event") {
                Attribute("number", .int64, indexed: true)
                Attribute("payload", .data)
            }
        }
        let store = try Store(path: path, model: model, options: JournalOptions(compaction: .manual, snapshotBlockSize: 4 << 10))
        let context = store.newContext()
        var next = Int64(try context.count(for: FetchRequest(entityName: "Event"))) + 1
        while true {
            for _ in 0..<(1 + random(20)) {
                let event = try context.insert("Event")
                event["number"] = next
                event["payload"] = Data(repeating: UInt8(truncatingIfNeeded: next), count: Int(random(600)))
                try context.save()
                print(next)
                fflush(nil)
                next += 1
                context.reset()
            }
            try store.compact { stage, _ in
                switch stage {
                case .writingSnapshot, .synchronizing, .renaming, .finished:
                    print("stage \(stage)")
                    fflush(nil)
                    usleep(UInt32(random(3_000)))
                case .copyingJournal:
                    break
                }
            }
        }
    } catch {
        FileHandle.standardError.write(Data("logstore-crash-child: \(error)\n".utf8))
        exit(1)
    }
}

func insertWithoutSaving(path: String, count: Int) -> Never {
    do {
        let model = try Model { Entity("Event") { Attribute("number", .int64) } }
        let store = try Store(path: path, model: model)
        let context = store.newContext()
        for number in 0..<count {
            let event = try context.insert("Event")
            event["number"] = Int64(number)
            print(event.objectID.key)
            fflush(nil)
        }
        while true { sleep(60) }
    } catch {
        FileHandle.standardError.write(Data("logstore-crash-child: \(error)\n".utf8))
        exit(1)
    }
}
