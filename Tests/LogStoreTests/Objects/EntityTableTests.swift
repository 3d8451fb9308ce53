// The packed table of one entity's committed records.

import Foundation
import Testing
@testable import LogStore

@Suite("Entity table")
struct EntityTableTests {
    @Test("Sets, updates and removes read back exactly, through many rewrites that compact the arena, against a dictionary model")
    func matchesADictionary() {
        var table = EntityTable()
        var model: [UInt64: Record] = [:]
        var random = JournalFixtures.SeededGenerator(seed: 0x7AB1E)
        for step in 0..<20_000 {
            let key = UInt64(random.next() % 500) + 1
            switch random.next() % 4 {
            case 0:
                table.remove(key)
                model[key] = nil
            default:
                let record = Record(values: [.string(String(repeating: "x", count: Int(random.next() % 40))), .int64(Int64(step)), .null, .reference(RecordID(entity: Symbol(rawValue: 0), key: key))], version: UInt64(step))
                table.set(key, record)
                model[key] = record
            }
        }
        #expect(table.count == model.count)
        #expect(table.keys == model.keys.sorted())
        // The live bytes count the records' values only.
        let valueBytes = model.values.reduce(0) { total, record in
            var writer = ByteWriter()
            for value in record.values { writer.append(value) }
            return total + writer.count
        }
        #expect(table.arenaLiveBytes == valueBytes)
        for key in 0...520 as ClosedRange<UInt64> {
            #expect(table.record(key)?.values == model[key]?.values, "key \(key)")
            #expect(table.version(key) == model[key]?.version, "key \(key)")
        }
    }
}
