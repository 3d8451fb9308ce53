// Content that passes its checksum is still hostile input (issue 22 point 4):
// record keys, references, key reservations and snapshot fields at the edges
// of their widths, written into frames whose checksums match. Each opens and
// works, or fails with a typed error, never with a trap or an allocation
// proportional to a number in the file.

import Foundation
import Testing
@_spi(Benchmarks) @_spi(Fuzzing) @testable import LogStore

@Suite("Hostile content with valid checksums")
struct HostileContentTests {
    static let model = try! Model {
        Entity("Item") {
            Attribute("name", .string, indexed: true)
            Attribute("count", .int64)
            Relationship("owner", to: "Item", inverse: "owned")
            Relationship("owned", to: "Item", inverse: "owner", toMany: true)
        }
    }

    static let options = JournalOptions(durability: .deferredToOS, compaction: .manual, snapshotBlockSize: 256)

    /// ``options``, compacting into `format`.
    static func options(_ format: SnapshotFormat) -> JournalOptions {
        var options = options
        options.snapshotFormat = format
        return options
    }

    /// A store of `Item`s named "a" to "e", keys 1 to 5, saved and closed;
    /// compacted into `format` if `compacted`.
    static func makeStore(at path: String, compacted: Bool = false, format: SnapshotFormat = .paged) throws {
        let store = try Store(path: path, model: model, options: options(format))
        let context = store.newContext()
        for name in ["a", "b", "c", "d", "e"] {
            let item = try context.insert("Item")
            item["name"] = name
            item["count"] = Int64(name.unicodeScalars.first!.value)
        }
        try context.save()
        if compacted { _ = try store.compact() }
        store.close()
    }

    /// Appends one transaction of `changes` to the store at `path`, written
    /// by the journal, so that every checksum matches.
    static func append(to path: String, _ changes: (Journal) -> [RecordChange]) throws {
        let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
        defer { journal.close() }
        _ = try journal.append(changes(journal))
    }

    static func insert(_ journal: Journal, key: UInt64, name: String = "hostile", owner: UInt64? = nil) -> RecordChange {
        var fields = [Field(journal.symbol(for: "name"), .string(name))]
        if let owner { fields.append(Field(journal.symbol(for: "owner"), .reference(RecordID(entity: journal.symbol(for: "Item"), key: owner)))) }
        return .insert(RecordID(entity: journal.symbol(for: "Item"), key: key), fields)
    }

    /// The names of every `Item`, sorted; a failed fetch is an empty list.
    static func names(_ store: Store) -> [String] {
        let context = store.newContext()
        return withExtendedLifetime(context) {
            ((try? context.fetchAll("Item")) ?? []).map { $0["name"] as? String ?? "nil" }.sorted()
        }
    }

    @Test("A record key of 2^40 opens, saves, compacts and reopens without memory proportional to the key", arguments: [false, true])
    func hugeKey(compacted: Bool) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            try Self.makeStore(at: path, compacted: compacted)
            try Self.append(to: path) { [Self.insert($0, key: 1 << 40, owner: 1 << 40), Self.insert($0, key: 1 << 41, owner: 3)] }
            let before = HostileFileTests.peakResidentBytes()
            let store = try Store(path: path, model: Self.model, options: Self.options)
            #expect(Self.names(store) == ["a", "b", "c", "d", "e", "hostile", "hostile"], "\(Self.names(store))")
            let context = store.newContext()
            let hostile = try context.existingObject(with: store.id("Item", 1 << 40))
            #expect((hostile["owner"] as? ManagedObject)?.objectID == hostile.objectID)
            let later = try context.insert("Item")
            later["name"] = "later"
            #expect(later.objectID.key > 1 << 41)
            try context.save()
            let fetched = try context.fetch(FetchRequest(entityName: "Item", predicate: try ObjectPredicate("name == 'hostile'")))
            #expect(fetched.count == 2)
            _ = try store.compact()
            store.close()
            let reopened = try Store(path: path, model: Self.model, options: Self.options)
            defer { reopened.close() }
            #expect(Self.names(reopened) == ["a", "b", "c", "d", "e", "hostile", "hostile", "later"])
            // An array indexed by key would take 24 bytes × 2^41 here.
            #expect(HostileFileTests.peakResidentBytes() - before < 256 << 20)
        }
    }

    @Test("A record key, or a reference's key, at or past 2^62 is .corruptFrame at its frame, read-only or not, and changes nothing",
          arguments: [UInt64(1) << 62, 1 << 63, .max - 1, .max])
    func keyPastLimit(key: UInt64) throws {
        try withTemporaryDirectory { directory in
            for asReference in [false, true] {
                let path = directory + "/\(asReference)-store.logstore"
                try Self.makeStore(at: path)
                try Self.append(to: path) { journal in
                    [asReference ? Self.insert(journal, key: 6, owner: key) : Self.insert(journal, key: key)]
                }
                let bytes = try JournalFixtures.read(path)
                for options in [Self.options, JournalOptions(access: .readOnly)] {
                    #expect {
                        try Store(path: path, model: Self.model, options: options).close()
                    } throws: { error in
                        let error = error as! LogStoreError
                        return error.kind == .corruptFrame && error.offset != nil && error.message.contains("2^62")
                    }
                }
                #expect(try JournalFixtures.read(path) == bytes, "a refused open changed the file")
            }
        }
    }

    @Test("A key reservation past 2^62 reserves keys up to the limit: the store opens, reads, and refuses new objects with a typed error")
    func reservationPastLimit() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            try Self.makeStore(at: path)
            for end in [Int64.max, Int64(1 << 62) + 5] {
                try Self.append(to: path) { journal in
                    [.update(RecordID(entity: journal.symbol(for: Store.keyReservationEntity), key: 1), [Field(journal.symbol(for: "Item"), .int64(end))])]
                }
                let store = try Store(path: path, model: Self.model, options: Self.options)
                #expect(Self.names(store) == ["a", "b", "c", "d", "e"])
                let context = store.newContext()
                #expect { try context.insert("Item") } throws: { error in
                    let error = error as! LogStoreError
                    return error.kind == .corruptFrame && error.message.contains("2^62") && error.message.contains(path)
                }
                // Changing what is there still works.
                try context.fetchAll("Item").first!["count"] = Int64(7)
                try context.save()
                store.close()
            }
        }
    }

    @Test("A snapshot that gives out a key past 2^62 next is .corruptSnapshot", arguments: [UInt64(1) << 62 + 1, .max])
    func snapshotNextKeyPastLimit(nextKey: UInt64) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            try Self.makeStore(at: path, compacted: true, format: .indexFrame)
            let file = try JournalFixtures.read(path)
            // Every index field is chosen here; the mutation only re-encodes.
            var content = try #require(ContentMutation.Content(file))
            let indexFrame = try #require(content.frames.firstIndex { $0.kind == .snapshotIndex })
            var index = try content.frames[indexFrame].payload.withUnsafeBytes { try SnapshotIndex(decoding: $0) }
            index.entities[0].nextKey = nextKey
            content.frames[indexFrame].payload = index.encoded().bytes
            try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)
            for options in [Self.options, JournalOptions(access: .readOnly)] {
                #expect {
                    try Store(path: path, model: Self.model, options: options).close()
                } throws: { error in
                    let error = error as! LogStoreError
                    return error.kind == .corruptSnapshot && error.message.contains("2^62")
                }
            }
        }
    }

    @Test("A store whose first frame carries the largest sequence numbers: logstore-tool reads it or fails typed, never crashes; one numbered UInt64.max is .corruptFrame, and none is written after UInt64.max − 1", arguments: [UInt64(1) << 63, .max - 1, .max])
    func toolOnExtremeSequence(sequence: UInt64) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/store.logstore"
            let journal = try Journal(path: path, options: JournalOptions(durability: .deferredToOS))
            _ = try journal.append([.insert(RecordID(entity: journal.symbol(for: "Item"), key: 1), [Field(journal.symbol(for: "name"), .string("a"))])])
            journal.close()
            var bytes = try JournalFixtures.read(path)
            let frame = try #require(JournalFixtures.frames(in: bytes).first)
            JournalFixtures.store(sequence, into: &bytes, at: frame.offset + 16)
            JournalFixtures.resign(&bytes, frameAt: frame.offset)
            try JournalFixtures.write(bytes, to: path)
            for arguments in [["info", path], ["verify", path], ["dump", path], ["stats", path], ["history", path], ["history", path, "--json"], ["history", path, "--show", "\(sequence)"]] {
                let run = try Executables.run("logstore-tool", arguments)
                #expect(!run.errorOutput.contains("Fatal error") && !run.errorOutput.contains("crashed"), "\(arguments.first!): \(run.errorOutput.split(separator: "\n").filter { $0.contains("Fatal") || $0.contains(" at /work") }.prefix(4))")
            }
            // No frame can follow the largest number: the open is refused, typed.
            if sequence == .max {
                for options in [Self.options, JournalOptions(access: .readOnly)] {
                    #expect { try Store(path: path, model: Self.model, options: options).close() } throws: { error in
                        (error as? LogStoreError)?.kind == .corruptFrame && (error as? LogStoreError)?.message.contains(path) == true
                    }
                }
            } else {
                // A frame numbered UInt64.max (here the model's, or a key
                // reservation's, or a save's) is never written.
                let saved = Result {
                    let store = try Store(path: path, model: Self.model, options: Self.options)
                    defer { store.close() }
                    let context = store.newContext()
                    let item = try context.insert("Item")
                    item["name"] = "b"
                    try context.save()
                }
                if sequence == .max - 1 {
                    #expect { try saved.get() } throws: { ($0 as? LogStoreError)?.kind == .corruptFrame }
                    #expect(try JournalFixtures.read(path) == bytes, "a refused save changed the file")
                }
                let listing = try Executables.run("logstore-tool", ["history", path, "--json"])
                #expect(listing.status == 0 && listing.output.contains("\(sequence)"), "\(listing.output.prefix(300)) \(listing.errorOutput.prefix(300))")
            }
        }
    }

    @Test("The content mutation of the store-content fuzz target changes what files say, never their checksums")
    func mutationKeepsChecksums() throws {
        try withTemporaryDirectory { directory in
            var seeds: [[UInt8]] = []
            for (compacted, format) in [(false, SnapshotFormat.paged), (true, .indexFrame), (true, .paged)] {
                let path = directory + "/seed-\(compacted)-\(format).logstore"
                try Self.makeStore(at: path, compacted: compacted, format: format)
                try Self.append(to: path) { [Self.insert($0, key: 9, owner: 2)] }
                seeds.append(try JournalFixtures.read(path))
            }
            var changed = 0, refused = 0
            for seed in 0..<450 {
                var random = JournalFixtures.SeededGenerator(seed: UInt64(seed))
                let original = seeds[seed % seeds.count]
                let mutated = ContentMutation.mutate(original, rounds: 1 + seed % 3) { Int.random(in: 0..<$0, using: &random) }
                if mutated != original { changed += 1 }
                let path = directory + "/mutated.logstore"
                try JournalFixtures.write(mutated, to: path)
                let problems = (try? StoreInspector.verify(path: path))?.problems ?? []
                if !problems.isEmpty { refused += 1 }
                for problem in problems {
                    #expect(!problem.message.contains("fails its checksum") && !problem.message.contains("header checksum"), "seed \(seed): \(problem.message)")
                }
            }
            // Most mutations change the file, and some of those are content a reader refuses.
            #expect(changed > 360 && refused > 45, "\(changed) of 450 changed, \(refused) refused")
        }
    }

    @Test("Re-encoding a store's content unchanged gives a store that opens with the same objects")
    func contentRoundTrip() throws {
        try withTemporaryDirectory { directory in
            for (compacted, format) in [(false, SnapshotFormat.paged), (true, .indexFrame), (true, .paged)] {
                let path = directory + "/\(compacted)-\(format).logstore"
                try Self.makeStore(at: path, compacted: compacted, format: format)
                try Self.append(to: path) { [Self.insert($0, key: 9, owner: 2)] }
                let content = try #require(ContentMutation.Content(try JournalFixtures.read(path)))
                try JournalFixtures.write(content.encoded(fixingDirectory: true), to: path)
                let store = try Store(path: path, model: Self.model, options: Self.options)
                defer { store.close() }
                #expect(Self.names(store) == ["a", "b", "c", "d", "e", "hostile"])
                #expect(try StoreInspector.verify(path: path).isValid)
            }
        }
    }
}
