// A child process for the crash tests: appends transactions to the store at
// argv[1] with fsync every commit and prints each acknowledged sequence number
// (flushed at once), until the parent kills it.

import Foundation
import LogStore

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: logstore-crash-child STORE [SEED]\n".utf8))
    exit(2)
}
let seed = arguments.count >= 3 ? UInt64(arguments[2]) ?? 1 : 1
do {
    let journal = try Journal(path: arguments[1])
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
