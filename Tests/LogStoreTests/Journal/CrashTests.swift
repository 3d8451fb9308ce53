// SIGKILL at random moments never loses an acknowledged transaction and
// never leaves anything after a gap.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Crash recovery")
struct CrashTests {
    /// Kill cycles; LOGSTORE_CRASH_CYCLES raises it for a longer soak.
    static let cycles = TestSettings.integer("LOGSTORE_CRASH_CYCLES", default: 200)

    @Test("Killing a committing process at random moments keeps every acknowledged transaction, under each durability mode, and never needs salvage",
          arguments: ["fsync", "group", "deferred"])
    func killAtRandomMoments(durability: String) throws {
        // The default mode gets every cycle; the others, which differ only
        // in when fdatasync runs, a third each.
        let cycles = durability == "fsync" ? Self.cycles : max(1, Self.cycles / 3)
        try withTemporaryDirectory { directory in
            let path = directory + "/crash.logstore"
            var random = JournalFixtures.SeededGenerator(seed: 0x5EED_C0DE)
            var acknowledgedUpTo: UInt64 = 0
            var tornTails = 0, cyclesWithAcknowledgements = 0

            for cycle in 1...cycles {
                let child = try CrashChild(store: path, seed: UInt64(cycle), durability: durability)
                // Mostly kill while it commits; sometimes while it starts and
                // recovers the previous cycle's torn tail.
                if random.next() % 4 == 0 {
                    usleep(UInt32(random.next() % 15_000))
                } else {
                    _ = child.waitForFirstAcknowledgement()
                    usleep(UInt32(random.next() % 4_000))
                }
                child.kill()
                if let last = child.acknowledged.last {
                    #expect(child.acknowledged == Array((acknowledgedUpTo + 1)...last), "cycle \(cycle): the child acknowledged out of order")
                    acknowledgedUpTo = last
                    cyclesWithAcknowledgements += 1
                }

                let journal = try Journal(path: path)
                defer { journal.close() }
                #expect(journal.recovery.outcome != .salvaged)
                if journal.recovery.outcome == .tornTail { tornTails += 1 }
                // checkSamples requires sequence numbers 1...n with no gap and
                // each transaction's contents intact.
                let count = UInt64(try journal.checkSamples())
                // Every acknowledged one survives; at most the one in flight
                // (written, not yet printed) survives beyond them.
                #expect(count >= acknowledgedUpTo, "cycle \(cycle): acknowledged \(acknowledgedUpTo), found \(count)")
                #expect(count <= acknowledgedUpTo + 1, "cycle \(cycle): \(count) transactions survived where \(acknowledgedUpTo) were acknowledged")
                if count < acknowledgedUpTo { break }
                // The survivor in flight is now part of the store; the next
                // child continues after it.
                acknowledgedUpTo = count
            }
            print("crash test (\(durability)): \(cycles) SIGKILL cycles, \(cyclesWithAcknowledgements) with acknowledged commits, \(acknowledgedUpTo) transactions, \(tornTails) torn tails cut off")
            #expect(cyclesWithAcknowledgements > cycles / 2)
        }
    }
}
