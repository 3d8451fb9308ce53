// A compaction's new file carries the store file's mode, owner, group and
// extended attributes across a power cut, on the simulated disk.

import Foundation
import Testing
@testable import LogStore

@Suite("Compaction keeps who may use the file")
struct CompactionOwnershipTests {
    @Test("After a compaction and a power cut, the file at the store's path has the old file's mode and ownership", arguments: SimulatedDisk.PowerCut.allCases)
    func ownershipSurvivesAPowerCut(cut: SimulatedDisk.PowerCut) throws {
        let path = "/simulated/store.logstore"
        let disk = SimulatedDisk()
        let store = try Store(journal: Journal(path: path, options: CounterModel.manual, fileSystem: disk), model: CounterModel.make())
        let context = store.newContext()
        try CounterModel.insertCounters(30, into: context)
        let ownership = SimulatedDisk.Ownership(owner: 501, group: 20, extendedAttributes: ["user.logstore.test": Array("kept".utf8)])
        disk.setOwnership(of: path, permissions: 0o640, ownership)
        try store.compact()
        store.close()

        for seed in 0..<4 as Range<UInt64> {
            let after = disk.afterPowerCut(cut, seed: seed)
            let reopened = try Journal(path: path, options: JournalOptions(createIfMissing: false, compaction: .manual), fileSystem: after)
            // The rename was made durable before compact() returned.
            #expect(reopened.snapshot != nil, "seed \(seed)")
            reopened.close()
            #expect(after.permissions(of: path) == 0o640, "seed \(seed)")
            #expect(after.ownership(of: path) == ownership, "seed \(seed)")
        }
    }
}
