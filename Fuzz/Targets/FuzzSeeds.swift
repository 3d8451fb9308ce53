// The seed corpus, written by the fuzz executables' `--write-seeds DIR`:
// real store files (whole, compacted, torn, damaged), each structure of the
// format cut from them, and predicates covering the language. Checked in
// under Fuzz/Corpus; when the format changes, add the new version's files
// beside the older ones (named for their version), which stay seeds.

import Foundation
@_spi(Fuzzing) import LogStore

enum FuzzSeeds {
    /// Writes `target`'s seeds into `directory`, one file each; returns how many.
    static func write(_ target: FuzzTarget, to directory: String) throws -> Int {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let seeds: [(name: String, bytes: [UInt8])]
        switch target {
        case .storeFile: seeds = try storeFiles()
        case .storeContent: seeds = contentSeeds()
        case .decoders:
            let stores = try storeFiles().filter { $0.name == "saves.logstore" || $0.name == "compacted.logstore" }
            seeds = stores.flatMap { store in
                FormatDecoders.seeds(fromStore: store.bytes, model: model).enumerated().map { ("\(store.name)-\($0.offset)", $0.element) }
            }
        case .predicate:
            seeds = predicates.enumerated().map { ("predicate-\($0.offset)", Array($0.element.utf8)) }
        case .queryPlans:
            seeds = queryPlanSeeds()
        }
        for seed in seeds {
            guard FileManager.default.createFile(atPath: directory + "/" + seed.name, contents: Data(seed.bytes)) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: directory + "/" + seed.name])
            }
        }
        return seeds.count
    }

    static let model: Model = {
        ValueTransformers.register(CodableTransformer<[String]>(), named: "FuzzSeedTags")
        return try! Model {
            Entity("Item") {
                Attribute("name", .string, indexed: true)
                Attribute("flag", .bool)
                Attribute("small", .int16)
                Attribute("medium", .int32)
                Attribute("large", .int64, indexed: true)
                Attribute("ratio", .float)
                Attribute("price", .double)
                Attribute("when", .date)
                Attribute("blob", .data)
                Attribute("uid", .uuid)
                Attribute("link", .url)
                Attribute("amount", .decimal)
                Attribute("tags", .transformable("FuzzSeedTags"))
                Relationship("owner", to: "Owner", inverse: "items")
            }
            Entity("Owner") {
                Attribute("label", .string)
                Relationship("items", to: "Item", inverse: "owner", toMany: true, deleteRule: .cascade)
            }
        }
    }()

    /// Small store files: empty, a few saves, compacted with saves after,
    /// and those cut short and with a flipped byte.
    static func storeFiles() throws -> [(name: String, bytes: [UInt8])] {
        let directory = NSTemporaryDirectory() + "/logstore-seeds-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))) }
        let options = JournalOptions(durability: .deferredToOS, compaction: .manual, snapshotBlockSize: 512)

        try Store(path: directory + "/empty.logstore", model: model, options: options).close()
        let store = try Store(path: directory + "/saves.logstore", model: model, options: options)
        try fill(store.newContext())
        // Consecutive keys deleted in one save: a delete run (FORMAT.md §5.1).
        let batch = store.newContext()
        for index in 0..<4 { try batch.insert("Item")["name"] = "run \(index)" }
        try batch.save()
        try store.execute(BatchDeleteRequest(entityName: "Item", predicate: ObjectPredicate("name BEGINSWITH 'run '")))
        store.close()
        try FileManager.default.copyItem(atPath: directory + "/saves.logstore", toPath: directory + "/compacted.logstore")
        let compacted = try Store(path: directory + "/compacted.logstore", model: model, options: options)
        try compacted.compact()
        let context = compacted.newContext()
        let late = try context.insert("Item")
        late["name"] = "after the snapshot"
        try context.save()
        compacted.close()

        // A journal of version 4, frames from 64, as stores were created
        // until version 7 began creating them as version 7.
        try Journal.createEmptyFile(at: directory + "/version4.logstore", formatVersion: 4)
        let older = try Store(path: directory + "/version4.logstore", model: model, options: options)
        try fill(older.newContext())
        older.close()

        var files = [("empty.logstore", try bytes("empty.logstore")), ("saves.logstore", try bytes("saves.logstore")), ("compacted.logstore", try bytes("compacted.logstore")),
                     ("version4.logstore", try bytes("version4.logstore"))]
        for (name, whole) in files where whole.count > 200 {
            files.append(("\(name)-torn", Array(whole.dropLast(9))))
            // Inside the frames: from format version 5 the bytes before the
            // first frame are anchor pages no open reads.
            let framesStart = try whole.withUnsafeBytes { try Int(FileHeader.decode(UnsafeRawBufferPointer(rebasing: $0.prefix(64)), path: name).framesStart) }
            var flipped = whole
            flipped[framesStart + (whole.count - framesStart) * 2 / 3] ^= 0x40
            files.append(("\(name)-flipped", flipped))
            var header = whole
            header[20] ^= 0x01
            files.append(("\(name)-bad-header", header))
        }
        return files
    }

    static func fill(_ context: ObjectContext) throws {
        let owners = try ["Ada", "Bo"].map { label in
            let owner = try context.insert("Owner")
            owner["label"] = label
            return owner
        }
        var items: [ManagedObject] = []
        for index in 0..<12 {
            let item = try context.insert("Item")
            item["name"] = ["chair", "Lamp", "désk", "", "tablé"][index % 5] + "\(index)"
            item["flag"] = index % 2 == 0
            item["small"] = Int16(index * 3 - 7)
            item["medium"] = Int32(index * 100_000)
            item["large"] = Int64(index) << 40
            item["ratio"] = Float(index) / 3
            item["price"] = Double(index) * 9.99
            item["when"] = Date(timeIntervalSinceReferenceDate: Double(index) * 3_600)
            item["blob"] = index % 3 == 0 ? nil : Data(repeating: UInt8(index), count: index * 5)
            item["uid"] = UUID(uuid: (UInt8(index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
            item["link"] = URL(string: "https://example.com/\(index)")
            item["amount"] = Decimal(index) / 7
            item["tags"] = ["t\(index)", "shared"]
            item["owner"] = owners[index % 2]
            items.append(item)
            if index % 4 == 3 { try context.save() }
        }
        for item in items where (item["small"] as? Int16 ?? 0) > 10 { item["price"] = 0.5 }
        try context.save()
        try context.delete(items[1])
        try context.delete(owners[1])
        try context.save()
    }

    /// Inputs for the store-content target: choices from seeded
    /// generators, a few for each seed store, since every byte is a choice.
    static func contentSeeds() -> [(name: String, bytes: [UInt8])] {
        (0..<24).map { seed in
            var choices = Choices(seed: UInt64(seed) + 1_000)
            return ("store-content-\(seed)", [UInt8(seed % 3)] + (0..<(32 + 8 * seed)).map { _ in UInt8(choices.next(256)) })
        }
    }

    /// Inputs for the query-plans target: choices from seeded generators,
    /// long enough to fill a store and make its requests (past the end of
    /// an input every choice is the simplest). Random bytes are as good a
    /// start as any, since every byte is a choice.
    static func queryPlanSeeds() -> [(name: String, bytes: [UInt8])] {
        (0..<16).map { seed in
            var choices = Choices(seed: UInt64(seed))
            return ("query-plans-\(seed)", (0..<(256 + 64 * seed)).map { _ in UInt8(choices.next(256)) })
        }
    }

    /// Predicates over the predicate target's people: every operator,
    /// modifier, keyword and argument kind, and some that fail to parse.
    static let predicates: [String] = [
        "name == 'Ada'", "name = \"Zoë\"", "name != 'Bo'", "name <> nil", "age < 10", "age <= 10", "age > 3", "age >= 3",
        "age =< 4", "age => 4", "age BETWEEN {1, 20}", "age IN {4, 11, 25}", "name IN %@", "name BEGINSWITH 'A'",
        "name ENDSWITH[c] 'E'", "name CONTAINS[cd] 'zoe'", "name LIKE 'A*'", "name LIKE[c] '?o'", "name MATCHES '[A-Z].*'",
        "age > 3 AND score < 2", "age > 3 && score < 2", "age < 3 OR active == YES", "age < 3 || active == TRUE",
        "NOT (age > 3)", "!(active == NO)", "TRUEPREDICATE", "FALSEPREDICATE", "nickname == nil", "nickname == NULL",
        "active == FALSE", "score == 1e300", "score < -0.5", "age == -3", "born > CAST(100000, 'NSDate')",
        "team.label == 'Red'", "team.label ==[c] 'red'", "ANY friends.age > 10", "ALL friends.age > 0", "NONE friends.name == 'Ada'",
        "SOME friends.active == YES", "friends.@count > 1", "friends.@sum.age > 20", "friends.@avg.score < 1", "friends.@min.age < 0",
        "friends.@max.age >= 40", "SELF == SELF", "%K == %@", "age == %d", "score > %f", "name == $NAME", "photo != nil",
        "name == 'O\\'Brien'", "name == '\\\\'", "team.members.@count > 2", "age IN {}", "(age > 3 OR age < 1) AND NOT active == YES",
        "name BEGINSWITH[cd] 'e'", "name LIKE[cd] 'a*'", "name ==[d] 'Emile'",
        "age >== 3", "name ==", "AND", "age IN {1, 2", "name == 'open", "(age > 3", "friends.@bogus > 1", "age BETWEEN 3",
        "%@ == %@ == %@", "$ == 1", "name MATCHES '('", "",
    ]
}
