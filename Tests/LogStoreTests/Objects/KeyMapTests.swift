// Values by record key in memory proportional to the keys held (issue 22
// point 4): a key of 2^40 or 2^64 − 1 costs one entry, and the keys a store
// hands out stay in the array.

import Testing
@testable import LogStore

@Suite("Key map")
struct KeyMapTests {
    @Test("Keys far past the others cost no array; every key reads back, in key order")
    func farKeys() {
        var map = KeyMap(empty: 0)
        let far: [UInt64] = [1 << 40, 1 << 62, 1 << 63, .max - 1, .max]
        for (position, key) in far.enumerated() { map[key] = position + 1 }
        #expect(map.arrayLength == 0)
        for key in 1...1_000 as ClosedRange<UInt64> { map[key] = Int(key) * 10 }
        #expect(map.arrayLength <= KeyMap<Int>.slack + KeyMap<Int>.spread * 1_005)
        for (position, key) in far.enumerated() { #expect(map[key] == position + 1) }
        #expect(map[500] == 5_000 && map[0] == 0 && map[1_001] == 0 && map[1 << 41] == 0)
        var seen: [UInt64] = []
        map.forEach { key, value in if value != 0 { seen.append(key) } }
        #expect(seen == Array(1...1_000) + far)
        // The runs a walk reads give every key and value forEach gives, in order.
        var visited: [(UInt64, Int)] = [], walked: [(UInt64, Int)] = []
        map.forEach { visited.append(($0, $1)) }
        map.forEachRun { first, run in
            for (offset, value) in run.enumerated() { walked.append((first + UInt64(offset), value)) }
        }
        #expect(walked.map(\.0) == visited.map(\.0) && walked.map(\.1) == visited.map(\.1))
        // Every key the array covers, once, and nothing past it but the far keys.
        #expect(visited.count == map.arrayLength + far.count)
    }

    @Test("A copy keeps its values when the original changes them, and the other way round")
    func copiesAreIndependent() {
        var map = KeyMap(empty: 0)
        let page = UInt64(KeyMap<Int>.pageSize)
        for key in 1...(page * 3) { map[key] = 1 }
        map[1 << 40] = 1
        var copy = map
        map[5] = 2
        map[page * 2 + 7] = 2
        map[1 << 40] = 2
        copy[page + 1] = 3
        #expect(copy[5] == 1 && copy[page * 2 + 7] == 1 && copy[1 << 40] == 1 && copy[page + 1] == 3)
        #expect(map[5] == 2 && map[page * 2 + 7] == 2 && map[1 << 40] == 2 && map[page + 1] == 1)
    }

    @Test("A reservation the keys do not justify counts them once: keys spread apart then grow the array no further than the keys held allow")
    func reservationCountsKeysOnce() {
        var map = KeyMap(empty: 0)
        let count = 16_384
        // The largest key is past what the keys justify, so nothing is reserved.
        map.reserve(through: UInt64(16 * count), holding: count)
        #expect(map.arrayLength == 0)
        for index in 1...count { map[UInt64(16 * index)] = index }
        #expect(map.arrayLength <= KeyMap<Int>.slack + KeyMap<Int>.spread * count)
        #expect((1...count).allSatisfy { map[UInt64(16 * $0)] == $0 })
        // Setting one far key again and again holds one key, not many.
        var far = KeyMap(empty: 0)
        for round in 0..<100_000 { far[1 << 40] = round }
        far[UInt64(KeyMap<Int>.slack) + 100] = 1
        #expect(far.arrayLength == 0)
    }

    @Test("A key kept in the dictionary moves into the array once the array reaches it, read and iterated once")
    func arrayGrowsOverDictionary() {
        var map = KeyMap(empty: 0)
        let early: UInt64 = UInt64(KeyMap<Int>.slack) * 2
        map[early] = -1
        #expect(map.arrayLength == 0)
        for key in 1...20_000 as ClosedRange<UInt64> { map[key] = 1 }
        map[early + 1] = 2
        #expect(map.arrayLength == Int(early) + 2)
        #expect(map[early] == -1 && map[early + 1] == 2)
        map[early] = 3
        var count = 0, sum = 0
        map.forEach { key, value in
            if key == early { #expect(value == 3) }
            if value != 0 { count += 1; sum += value }
        }
        #expect(count == 20_002 && sum == 20_000 + 5)
    }

    @Test("Growing the array adds pages and moves no value already there, so no save copies every key")
    func growthCopiesNoPage() {
        var map = KeyMap(empty: 0)
        func address(_ key: UInt64) -> UInt? {
            var address: UInt?
            map.withDenseAddress(of: key) { address = UInt(bitPattern: $0) }
            return address
        }
        let page = UInt64(KeyMap<Int>.pageSize)
        for key in 1...page { map[key] = Int(key) }
        let first = address(1), full = address(page - 1)
        #expect(first != nil && full != nil)
        // Keys handed out one after another, over many pages.
        for key in (page + 1)...(page * 9) { map[key] = Int(key) }
        #expect(address(1) == first && address(page - 1) == full, "a full page moved when the array grew")
        #expect(map.arrayLength == Int(page * 9) + 1)
        #expect((1...(page * 9)).allSatisfy { map[$0] == Int($0) })
        var walked: [UInt64] = []
        map.forEach { key, value in if value != 0 { walked.append(key) } }
        #expect(walked == Array(1...(page * 9)))
    }

    @Test("Keys set in any order, as a snapshot's index lists them, fill the array once reserved")
    func reservedShuffledKeys() {
        var map = KeyMap(empty: UInt32(0))
        var keys = Array(1...200_000 as ClosedRange<UInt64>)
        var generator = JournalFixtures.SeededGenerator(seed: 4)
        keys.shuffle(using: &generator)
        map.reserve(through: keys.max()!, holding: keys.count)
        #expect(map.arrayLength == 200_001)
        for key in keys { map[key] = UInt32(truncatingIfNeeded: key) }
        #expect(keys.allSatisfy { map[$0] == UInt32(truncatingIfNeeded: $0) })
        // A promise of few keys does not buy a large array.
        var small = KeyMap(empty: 0)
        small.reserve(through: 1 << 40, holding: 3)
        #expect(small.arrayLength == 0)
    }
}
