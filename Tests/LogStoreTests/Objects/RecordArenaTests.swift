// The paged byte arena of the records a table holds in memory.

import Foundation
import Testing
@testable import LogStore

@Suite("Record arena")
struct RecordArenaTests {
    /// Text values of `length` bytes, each byte telling the record apart.
    static func values(_ number: Int, length: Int) -> [StoredValue] {
        [.int64(Int64(number)), .string(String(repeating: Character(Unicode.Scalar(UInt8(97 + number % 26))), count: length))]
    }

    static func encoded(_ values: [StoredValue]) -> [UInt8] {
        var writer = ByteWriter()
        for value in values { writer.append(value) }
        return writer.bytes
    }

    @Test("Records read back at their positions and walk in order across pages, one larger than a page on its own, with no page past its size otherwise")
    func pages() {
        var arena = RecordArena()
        var written: [(key: UInt64, position: RecordArena.Position, bytes: [UInt8])] = []
        var random = JournalFixtures.SeededGenerator(seed: 0xA2E7A)
        for number in 0..<3_000 {
            // One record of three pages, among records up to 4 KiB.
            let length = number == 1_500 ? 3 * RecordArena.pageSize : Int(random.next() % 4_096)
            let values = Self.values(number, length: length)
            let (position, count) = arena.append(key: UInt64(number + 1), values: values)
            #expect(Int(count) == Self.encoded(values).count)
            written.append((UInt64(number + 1), position, Self.encoded(values)))
        }
        for record in written {
            #expect(arena.withValues(at: record.position, length: UInt32(record.bytes.count)) { Array($0) } == record.bytes, "key \(record.key)")
        }
        var walked: [(UInt64, RecordArena.Position, [UInt8])] = []
        arena.forEachRecord { key, position, values in walked.append((key, position, Array(values))) }
        #expect(walked.map(\.0) == written.map(\.key))
        #expect(walked.map(\.1) == written.map(\.position))
        #expect(walked.map(\.2) == written.map(\.bytes))
        #expect(arena.byteCount == written.reduce(0) { $0 + RecordArena.prefix + $1.bytes.count })
        // Pages end where the next record did not fit (at most 4 KiB and a
        // prefix); the last may be partly empty. None doubled past its size.
        let slack = arena.pageCount * (4_096 + 64) + RecordArena.pageSize
        #expect(arena.capacityBytes <= arena.byteCount + slack, "\(arena.capacityBytes) bytes held for \(arena.byteCount)")
        #expect(arena.pageCount > 3 * (arena.byteCount / RecordArena.pageSize) / 4)
    }

    @Test("A copy shares every page but the one an append then writes to")
    func copyOnWrite() {
        var arena = RecordArena()
        var positions: [RecordArena.Position] = []
        for number in 0..<1_000 { positions.append(arena.append(key: UInt64(number + 1), values: Self.values(number, length: 5_000)).position) }
        #expect(arena.pageCount >= 4)
        let held = arena
        let last = arena.append(key: 1_001, values: Self.values(1_000, length: 5_000))
        func address(_ arena: RecordArena, _ position: RecordArena.Position) -> UnsafeRawPointer? {
            arena.withValues(at: position, length: 1) { $0.baseAddress }
        }
        // The first page is still the same memory in both; the copy has not
        // seen the new record, and reads every one it had.
        #expect(address(held, positions[0]) == address(arena, positions[0]))
        #expect(held.byteCount + RecordArena.prefix + Int(last.length) == arena.byteCount)
        var count = 0
        held.forEachRecord { _, _, _ in count += 1 }
        #expect(count == 1_000)
        #expect(held.withValues(at: positions[999], length: 8) { Array($0) } == arena.withValues(at: positions[999], length: 8) { Array($0) })
    }
}
