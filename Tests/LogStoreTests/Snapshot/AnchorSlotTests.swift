// The anchor slots of format 5 (FORMAT.md §13.2): what a slot reads as
// after a whole write, a torn one and a damaged one, and where the next
// write goes.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Anchor slots")
struct AnchorSlotTests {
    static let slot = AnchorSlot(generation: 7, rootOffset: 0x4_5000, rootStoredSize: 912, rootChecksum: 0xDEAD_BEEF, sequence: 1_234)

    static func read(_ bytes: [UInt8]) -> AnchorSlot.Reading { bytes.withUnsafeBytes { AnchorSlot.read($0) } }

    @Test("A slot reads back as written; 64 zero bytes read as empty")
    func roundTrip() {
        let bytes = Self.slot.encoded()
        #expect(bytes.count == AnchorSlot.size)
        #expect(Array(bytes.prefix(8)) == Array("LSANCHOR".utf8))
        #expect(Self.read(bytes) == .slot(Self.slot))
        #expect(Self.read(Array(repeating: 0, count: 64)) == .empty)
    }

    @Test("Every changed bit, and every write torn between the old slot and the new, reads as damaged, never as another slot")
    func damageShows() {
        let old = AnchorSlot(generation: 5, rootOffset: 0x3_0000, rootStoredSize: 800, rootChecksum: 1, sequence: 900).encoded()
        let new = Self.slot.encoded()
        for index in new.indices {
            for bit in 0..<8 {
                var bytes = new
                bytes[index] ^= 1 << bit
                guard case .damaged = Self.read(bytes) else { Issue.record("bit \(bit) of byte \(index) changed and the slot still reads"); continue }
            }
        }
        // A torn write: the first `count` bytes new, the rest old, and the
        // other way round; also a write torn over an empty slot.
        for count in 1..<64 {
            for torn in [Array(new.prefix(count) + old.dropFirst(count)), Array(old.prefix(count) + new.dropFirst(count)),
                         Array(new.prefix(count)) + Array(repeating: 0, count: 64 - count)] where torn != new && torn != old {
                // Torn where the two agree, it is one of them whole.
                guard case .damaged = Self.read(torn) else { Issue.record("a write torn after \(count) bytes reads as a slot"); continue }
            }
        }
    }

    @Test("A slot naming generation 1 or a root before the first frame is damaged")
    func fieldsAreChecked() {
        var early = Self.slot
        early.rootOffset = 0x2FFF
        var base = Self.slot
        base.generation = 1
        for slot in [early, base] {
            guard case .damaged = Self.read(slot.encoded()) else { Issue.record("\(slot) reads as a slot"); continue }
        }
    }

    @Test("The next write goes to an empty or damaged slot, else over the older; the newer is tried first")
    func turns() {
        var older = Self.slot
        older.generation = 6
        let damaged = AnchorSlot.Reading.damaged("torn")
        #expect(AnchorSlot.slotToWrite([.empty, .empty]) == 0)
        #expect(AnchorSlot.slotToWrite([.slot(Self.slot), .empty]) == 1)
        #expect(AnchorSlot.slotToWrite([damaged, .slot(Self.slot)]) == 0)
        #expect(AnchorSlot.slotToWrite([.slot(Self.slot), .slot(older)]) == 1)
        #expect(AnchorSlot.slotToWrite([.slot(older), .slot(Self.slot)]) == 0)
        #expect(AnchorSlot.candidates([.slot(older), .slot(Self.slot)]) == [Self.slot, older])
        #expect(AnchorSlot.candidates([damaged, .empty]).isEmpty)
    }

    @Test("verify notes an anchor slot that is not empty in a version 7 file with a snapshot and in one without (a new store), and opening reads neither slot",
          arguments: [false, true])
    func verifyNotesAnchorSlots(compacting: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/warehouse.logstore"
            try Warehouse.seededStore(at: path, count: 10, compacting: compacting).close()
            #expect(try StoreInspector.verify(path: path).notes.allSatisfy { !$0.contains("anchor slot") })
            var bytes = try JournalFixtures.read(path)
            #expect(try JournalFixtures.header(of: bytes, path: path).readVersion == FileLayout.currentVersion)
            bytes[Int(AnchorSlot.offsets[0]) + 5] = 0x5A
            try JournalFixtures.write(bytes, to: path)
            let report = try StoreInspector.verify(path: path)
            #expect(report.isValid && report.notes.contains { $0.contains("anchor slot at offset \(AnchorSlot.offsets[0])") }, "\(report)")
            let reopened = try Store(path: path, model: Warehouse.model(), options: JournalOptions(access: .readOnly))
            defer { reopened.close() }
            #expect(try Warehouse.contents(reopened).count == 10)
        }
    }
}
