// Where a snapshot's records are, by key, in memory that grows with its
// blocks, not its keys (issue 24 point 2).

import Testing
@testable import LogStore

@Suite("Located keys")
struct LocatedKeysTests {
    /// Keys in increasing order with their blocks and slots, as a snapshot
    /// lists them: runs of consecutive keys, gaps of every size (a distance
    /// of 2^32 and more among them), blocks of random lengths, and now and
    /// then a slot skipped (a record a block holds but the index does not).
    static func placements(seed: UInt64, count: Int) -> [(key: UInt64, block: Int, slot: Int)] {
        var random = JournalFixtures.SeededGenerator(seed: seed)
        var placements: [(key: UInt64, block: Int, slot: Int)] = []
        var key: UInt64 = random.next() % 3, block = 0, slot = 0, blockLeft = 1 + Int(random.next() % 300)
        for _ in 0..<count {
            switch random.next() % 100 {
            case 0..<70: key += 1
            case 70..<90: key += 2 + random.next() % 6
            case 90..<97: key += 8 + random.next() % 1_000
            case 97: key += (1 << 32) + random.next() % 5
            default: key += random.next() % (1 << 40) + 1
            }
            if blockLeft == 0 {
                block += 1 + Int(random.next() % 2)
                slot = 0
                blockLeft = 1 + Int(random.next() % 300)
            }
            if random.next() % 50 == 0 { slot += 1 }
            placements.append((key, block, slot))
            slot += 1
            blockLeft -= 1
        }
        return placements
    }

    @Test("Every key is found at its block and slot, keys between them are not, and a walk gives them in order", arguments: [1, 2, 3, 4] as [UInt64])
    func matchesADictionary(seed: UInt64) {
        let placements = Self.placements(seed: seed, count: 20_000)
        var located = LocatedKeys()
        for placement in placements {
            let appended = located.append(placement.key, block: placement.block, slot: placement.slot)
            #expect(appended)
        }
        #expect(located.count == placements.count)
        var byKey: [UInt64: (Int, Int)] = [:]
        for placement in placements { byKey[placement.key] = (placement.block, placement.slot) }
        for placement in placements {
            let found = located.locate(placement.key)
            #expect(found?.block == placement.block && found?.slot == placement.slot, "key \(placement.key)")
            // The keys just around it are found exactly when they are held.
            for neighbour in [placement.key &- 1, placement.key &+ 1, placement.key &+ (1 << 32)] {
                let expected = byKey[neighbour]
                let got = located.locate(neighbour)
                #expect(got?.block == expected?.0 && got?.slot == expected?.1, "key \(neighbour)")
            }
        }
        #expect(located.locate(0) == nil || byKey[0] != nil)
        #expect(!located.contains(.max) || byKey[.max] != nil)
        var walked: [UInt64] = []
        located.forEach { walked.append($0) }
        #expect(walked == placements.map(\.key))
        var runs: [(UInt64, Int, Int)] = []
        located.forEachRun { block, firstSlot, run in
            for index in 0..<run.count { runs.append((run[index], block, firstSlot + index)) }
        }
        #expect(runs.map(\.0) == placements.map(\.key) && runs.map(\.1) == placements.map(\.block) && runs.map(\.2) == placements.map(\.slot))
    }

    @Test("Appending runs of consecutive keys and slots records exactly what appending each key does", arguments: [5, 6, 7] as [UInt64])
    func runsMatchSingleKeys(seed: UInt64) {
        let placements = Self.placements(seed: seed, count: 20_000)
        var one = LocatedKeys(), runs = LocatedKeys()
        var start = 0
        while start < placements.count {
            // The longest run from `start`: keys and slots each one more, in one block.
            var end = start + 1
            while end < placements.count, placements[end].block == placements[start].block,
                  placements[end].key == placements[end - 1].key + 1, placements[end].slot == placements[end - 1].slot + 1 { end += 1 }
            let first = placements[start]
            let appended = runs.append(run: first.key, count: end - start, block: first.block, firstSlot: first.slot)
            #expect(appended)
            for placement in placements[start..<end] {
                let single = one.append(placement.key, block: placement.block, slot: placement.slot)
                #expect(single)
            }
            start = end
        }
        #expect(runs == one && runs.count == placements.count)
        // A run that does not follow the keys before it, or whose slots pass 32 bits, is refused.
        let before = runs
        let repeated = runs.append(run: placements[placements.count - 1].key, count: 3, block: 0, firstSlot: 0)
        let tooFar = runs.append(run: placements[placements.count - 1].key + 1, count: 2, block: 0, firstSlot: Int(UInt32.max))
        #expect(!repeated && !tooFar)
        #expect(runs == before)
    }

    @Test("A key that does not increase, or a block or slot past 32 bits, is refused and changes nothing")
    func refusesDisorder() {
        var located = LocatedKeys()
        do {
            let appended = located.append(10, block: 0, slot: 0)
            #expect(appended)
        }
        do {
            let appended = located.append(11, block: 0, slot: 1)
            #expect(appended)
        }
        do {
            let appended = located.append(11, block: 0, slot: 2)
            #expect(!appended)
        }
        do {
            let appended = located.append(3, block: 1, slot: 0)
            #expect(!appended)
        }
        do {
            let appended = located.append(12, block: 1 << 40, slot: 0)
            #expect(!appended)
        }
        do {
            let appended = located.append(12, block: 0, slot: -1)
            #expect(!appended)
        }
        #expect(located.count == 2 && located.locate(11)?.slot == 1 && located.locate(12) == nil && located.locate(3) == nil)
        do {
            let appended = located.append(12, block: 1, slot: 0)
            #expect(appended)
        }
        #expect(located.locate(12)?.block == 1)
    }

    @Test("Dense keys cost a segment per block, not bytes per key; keys with gaps at most a few bytes each")
    func memoryFollowsBlocks() {
        var dense = LocatedKeys()
        // A million keys in blocks of 2,000, as a compacted store's.
        for key in 1...1_000_000 as ClosedRange<UInt64> {
            let index = Int(key - 1)
            _ = dense.append(key, block: index / 2_000, slot: index % 2_000)
        }
        #expect(dense.byteCount < 64 * 1_024, "\(dense.byteCount) bytes for 500 blocks")
        var gappy = LocatedKeys()
        // Every third key deleted before the snapshot.
        var index = 0
        for key in 1...1_500_000 as ClosedRange<UInt64> where key % 3 != 0 {
            _ = gappy.append(key, block: index / 2_000, slot: index % 2_000)
            index += 1
        }
        #expect(gappy.count == 1_000_000)
        #expect(gappy.byteCount < 6 * 1_000_000, "\(gappy.byteCount) bytes for a million keys with gaps")
        #expect(gappy.locate(4)?.slot == 2 && gappy.locate(6) == nil)
    }
}
