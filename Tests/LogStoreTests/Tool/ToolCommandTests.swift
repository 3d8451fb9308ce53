// Every logstore-tool subcommand run as a subprocess on a demo store:
// output (parsed from --json where there is one), exit codes, damage,
// recovery, read-only use beside a writer, and compaction's progress.

import Foundation
import Testing
@testable import LogStore

@Suite("logstore-tool subcommands")
struct ToolCommandTests {
    private static let items = 400
    private static let extraSaves = 5
    /// The frames after the demo's snapshot: the saves, the recorded model,
    /// and one reservation of keys for the items the saves insert.
    private static let framesAfterSnapshot = extraSaves + 2

    private func tool(_ arguments: String...) throws -> Executables.Run {
        try Executables.run("logstore-tool", arguments)
    }

    /// The demo's inventory store (compacted once, as the demo does), plus
    /// `extraSaves` saves of one item each through the recorded model, so
    /// that the journal after the snapshot holds several transactions.
    private func demoStore(in directory: String) throws -> String {
        let path = directory + "/demo.logstore"
        let demo = try tool("demo", path, "--items", "\(Self.items)")
        try #require(demo.status == 0, "\(demo.errorOutput)")
        let store = try Store(recordedModelAt: path, options: JournalOptions(access: .readWrite, createIfMissing: false, compaction: .manual))
        let context = store.newContext()
        for number in 1...Self.extraSaves {
            let item = try context.insert("Item")
            item["itemName"] = "Added \(number)"
            item["valueInDollars"] = Int32(1_000 + number)
            item["thumbnail"] = Data([1, 2, 3, UInt8(number)])
            try context.save()
        }
        store.close()
        return path
    }

    /// The demo's store, verified clean, then `changes` appended behind the
    /// object layer's back (what a buggy writer could leave), and verify's
    /// run on the result.
    private func verifyAfterWriting(in directory: String, _ changes: (Journal) -> [RecordChange]) throws -> (path: String, run: Executables.Run) {
        let path = try demoStore(in: directory)
        let clean = try tool("verify", path)
        #expect(clean.status == 0, "\(clean.output)")
        let journal = try Journal(path: path)
        try journal.append(changes(journal))
        journal.close()
        return (path, try tool("verify", path))
    }

    private func json(_ run: Executables.Run) throws -> Any {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
        #expect(document["formatVersion"] as? Int == 1)
        return try #require(document["result"])
    }

    private func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    @Test("info, schema and stats describe the demo store, as text and as JSON")
    func describing() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            let info = try #require(try json(try tool("info", path, "--json")) as? [String: Any])
            let records = try #require(info["records"] as? [String: Int])
            #expect(records == ["Item": Self.items - 50 + Self.extraSaves, "AssetType": 3])
            #expect(info["compactionDue"] as? Bool == false)
            let file = try #require(info["file"] as? [String: Any])
            #expect(file["writeVersion"] as? Int == Int(JournalOptions().snapshotFormat.fileVersion), "the demo store is compacted")
            #expect((file["snapshot"] as? [String: Any])?["blocks"] as? Int ?? 0 >= 1)
            #expect(file["frameCount"] as? Int == Self.framesAfterSnapshot)
            let text = try tool("info", path)
            #expect(text.status == 0 && text.output.contains("records:") && text.output.contains("compaction due:    no"))

            let schema = try #require(try json(try tool("schema", path, "--json")) as? [String: Any])
            let entities = try #require(schema["entities"] as? [[String: Any]])
            #expect(entities.map { $0["name"] as? String } == ["Item", "AssetType"])
            let attributes = try #require(entities[0]["attributes"] as? [[String: Any]])
            let thumbnail = try #require(attributes.first { $0["name"] as? String == "thumbnail" })
            #expect(thumbnail["type"] as? String == "transformable(ThumbnailTransformer)")
            #expect(attributes.filter { $0["indexed"] as? Bool == true }.map { $0["name"] as? String } == ["valueInDollars", "orderingValue"])
            let items = try #require((entities[1]["relationships"] as? [[String: Any]])?.first)
            #expect(items["deleteRule"] as? String == "deny" && items["inverse"] as? String == "assetType")
            let schemaText = try tool("schema", path)
            #expect(schemaText.output.contains("relationship items -> Item, inverse assetType (to-many, delete rule deny)"))

            let stats = try #require(try json(try tool("stats", path, "--json")) as? [[String: Any]])
            #expect(stats.first?["records"] as? Int == Self.items - 50 + Self.extraSaves)
            let value = try #require((stats.first?["attributes"] as? [[String: Any]])?.first { $0["name"] as? String == "valueInDollars" })
            #expect(value["maximum"] as? String == "\(1_000 + Self.extraSaves)")
        }
    }

    @Test("dump prints every record as JSON Lines, CSV or a table, with IDs as URIs and data as base64")
    func dump() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            let live = Self.items - 50 + Self.extraSaves
            let all = try tool("dump", path)
            #expect(all.status == 0)
            let objects = try lines(all.output).map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            #expect(objects.count == live + 3)
            let added = try #require(objects.first { $0["itemName"] as? String == "Added 2" })
            #expect(added["thumbnail"] as? String == Data([1, 2, 3, 2]).base64EncodedString())
            #expect((added["id"] as? String)?.hasPrefix("logstore://") == true)
            let item = try #require(objects.first { $0["entity"] as? String == "Item" && $0["assetType"] is String })
            let type = try #require(objects.first { $0["id"] as? String == item["assetType"] as? String })
            #expect((type["items"] as? [String])?.contains(item["id"] as! String) == true, "the inverse holds the item")
            #expect(ISO8601DateFormatter().date(from: (item["dateCreated"] as? String ?? "").replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression)) != nil)

            let csv = try tool("dump", path, "--entity", "AssetType", "--format", "csv")
            let rows = lines(csv.output.replacingOccurrences(of: "\r", with: ""))
            #expect(rows.first == "id,label,items" && rows.count == 4)
            let table = try tool("dump", path, "--entity", "AssetType", "--format", "table")
            #expect(table.output.contains("AssetType/p1") && table.output.contains("(3 records)"))

            let filtered = try tool("dump", path, "--entity", "Item", "--where", "valueInDollars >= 1000")
            #expect(lines(filtered.output).count == Self.extraSaves)
            let ambiguous = try tool("dump", path, "--format", "csv")
            #expect(ambiguous.status == 2 && ambiguous.errorOutput.contains("--entity"))
        }
    }

    @Test("query fetches with the library's predicates, sorts, limits, counts and explains")
    func query() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            let count = try tool("query", path, "Item", "valueInDollars > 150 AND assetType.label == 'Jewelry'", "--count")
            #expect(count.status == 0)
            let expected = try #require(Int(count.output.trimmingCharacters(in: .whitespacesAndNewlines)))
            let rows = try tool("query", path, "Item", "valueInDollars > 150 AND assetType.label == 'Jewelry'", "--sort", "valueInDollars:desc", "--format", "jsonl")
            let values = try lines(rows.output).map { try #require((try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["valueInDollars"] as? Int) }
            #expect(values.count == expected && expected > 0)
            #expect(values == values.sorted(by: >) && values.allSatisfy { $0 > 150 })

            let limited = try tool("query", path, "Item", "TRUEPREDICATE", "--sort", "orderingValue", "--limit", "3")
            #expect(limited.output.contains("(3 records)"))
            let plan = try tool("query", path, "Item", "valueInDollars > 190", "--explain")
            #expect(plan.output.contains("index lookup on valueInDollars"))
        }
    }

    @Test("history lists the journal's transactions and shows one; folded ones are reported as such")
    func history() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            let listing = try #require(try json(try tool("history", path, "--json")) as? [String: Any])
            let transactions = try #require(listing["transactions"] as? [[String: Any]])
            let folded = try #require(listing["foldedThrough"] as? Int)
            #expect(transactions.count == Self.framesAfterSnapshot)
            #expect(transactions.first?["sequence"] as? Int == folded + 1)
            let last = try #require(transactions.last)
            #expect((last["changes"] as? [[String: Any]])?.first?["inserted"] as? Int == 1)

            let since = try tool("history", path, "--since", "\(folded + 3)", "--limit", "2")
            #expect(lines(since.output).filter { !$0.hasPrefix("(") }.count == 2)

            let shown = try #require(try json(try tool("history", path, "--show", "\(last["sequence"] as! Int)", "--json")) as? [String: Any])
            let operation = try #require((shown["operations"] as? [[String: Any]])?.first)
            #expect(operation["operation"] as? String == "insert")
            #expect((operation["values"] as? [String: Any])?["itemName"] as? String == "Added \(Self.extraSaves)")

            let gone = try tool("history", path, "--show", "1")
            #expect(gone.status == 1 && gone.errorOutput.contains("folded into the snapshot"))
        }
    }

    @Test("verify: 0 when good; 1 with the offset for a torn tail, a flipped bit in a journal frame, a damaged snapshot block")
    func verify() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            #expect(try tool("verify", path).status == 0)
            let frames = JournalFixtures.frames(in: try JournalFixtures.read(path))

            let torn = directory + "/torn.logstore"
            try FileManager.default.copyItem(atPath: path, toPath: torn)
            try StoreFileSurgery(path: torn).truncate(removing: 5)
            let tornRun = try tool("verify", torn, "--json")
            #expect(tornRun.status == 1)
            let tornReport = try #require(try json(tornRun) as? [String: Any])
            #expect((tornReport["interruptedSave"] as? [String: Any])?["offset"] as? Int == frames.last?.offset)

            let flipped = directory + "/flipped.logstore"
            try FileManager.default.copyItem(atPath: path, toPath: flipped)
            let damaged = frames[frames.count - 3].offset
            try StoreFileSurgery(path: flipped).flipBit(at: damaged + FrameLayout.headerSize + 2)
            let flippedRun = try tool("verify", flipped)
            #expect(flippedRun.status == 1)
            #expect(flippedRun.output.contains("at offset \(damaged)"))

            let block = directory + "/block.logstore"
            try FileManager.default.copyItem(atPath: path, toPath: block)
            let secondBlock = frames[1].offset
            try StoreFileSurgery(path: block).flipBit(at: secondBlock + FrameLayout.headerSize + 10)
            let blockRun = try tool("verify", block)
            #expect(blockRun.status == 1)
            #expect(blockRun.output.contains("offset \(secondBlock)"), "\(blockRun.output)")
        }
    }

    @Test("verify checks cross-references: a relationship pointing at a record that no longer exists is a problem")
    func danglingRelationship() throws {
        try withTemporaryDirectory { directory in
            // An asset type deleted, so that its items still point at it.
            let (_, run) = try verifyAfterWriting(in: directory) { journal in
                [.delete(RecordID(entity: journal.symbol(for: "AssetType"), key: 1))]
            }
            #expect(run.status == 1)
            #expect(run.output.contains("points to AssetType/p1, which does not exist"), "\(run.output)")
        }
    }

    @Test("verify checks that every reference names its relationship's destination, also after the store compacted itself")
    func referenceEntities() throws {
        try withTemporaryDirectory { directory in
            // The demo's store was compacted by the object layer, and its
            // items' assetType references come from both the snapshot and
            // the journal: verify first finds them clean. Then a reference
            // whose entity field names the source entity.
            let (_, run) = try verifyAfterWriting(in: directory) { journal in
                let item = journal.symbol(for: "Item"), assetType = journal.symbol(for: "assetType")
                return [.update(RecordID(entity: item, key: 1), [Field(assetType, .reference(RecordID(entity: item, key: 1)))])]
            }
            #expect(run.status == 1)
            #expect(run.output.contains("1 reference(s) of Item.assetType name the entity Item instead of the destination AssetType"), "\(run.output)")
        }
    }

    @Test("verify checks every value's type against its attribute's; the object layer reads a value of another type as nil")
    func valueTypes() throws {
        try withTemporaryDirectory { directory in
            let (path, run) = try verifyAfterWriting(in: directory) { journal in
                let item = journal.symbol(for: "Item"), name = journal.symbol(for: "itemName"), value = journal.symbol(for: "valueInDollars")
                return [.update(RecordID(entity: item, key: 2), [Field(name, .int64(7)), Field(value, .string("seven"))])]
            }
            #expect(run.status == 1)
            #expect(run.output.contains("1 value(s) of Item.itemName are of type int64, not String, the first in Item/p2"), "\(run.output)")
            #expect(run.output.contains("1 value(s) of Item.valueInDollars are of type string, not Int32, the first in Item/p2"), "\(run.output)")

            let store = try Store(recordedModelAt: path, options: JournalOptions(access: .readOnly, createIfMissing: false, compaction: .manual))
            defer { store.close() }
            let context = store.newContext()
            let unnamed = try context.fetch(FetchRequest(entityName: "Item")).filter { $0["itemName"] == nil }
            #expect(unnamed.count == 1)
            #expect(unnamed.first?["valueInDollars"] == nil)
        }
    }

    @Test("recover writes a store that verify accepts, with every transaction before the damage, and lists what was lost")
    func recover() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            let frames = JournalFixtures.frames(in: try JournalFixtures.read(path))
            let listing = try #require(try json(try tool("history", path, "--json")) as? [String: Any])
            let sequences = try #require(listing["transactions"] as? [[String: Any]]).map { $0["sequence"] as! Int }
            let damaged = frames[frames.count - 3].offset  // the third transaction from the end
            try StoreFileSurgery(path: path).flipBit(at: damaged + FrameLayout.headerSize + 2)
            let before = try JournalFixtures.read(path)

            let output = directory + "/recovered.logstore"
            let run = try tool("recover", path, "--output", output, "--json")
            #expect(run.status == 1, "something was lost: \(run.errorOutput)")
            let recovery = try #require(try json(run) as? [String: Any])
            #expect((recovery["damage"] as? [String: Any])?["offset"] as? Int == damaged)
            #expect(recovery["lastKeptSequence"] as? Int == sequences[sequences.count - 4])
            #expect(recovery["lostTransactions"] as? Int == 2)
            #expect(recovery["firstLostSequence"] as? Int == sequences[sequences.count - 2])
            #expect(try JournalFixtures.read(path) == before, "the damaged file is not changed")

            #expect(try tool("verify", output).status == 0)
            let kept = try #require(try json(try tool("history", output, "--json")) as? [String: Any])
            // Then one reservation of the keys that the readable frames after the damage gave out.
            #expect((kept["transactions"] as? [[String: Any]])?.map { $0["sequence"] as! Int } == Array(sequences.dropLast(2)))
            let items = try tool("query", output, "Item", "itemName BEGINSWITH 'Added'", "--count")
            #expect(items.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(Self.extraSaves - 3)")

            let again = try tool("recover", path, "--output", output)
            #expect(again.status == 2 && again.errorOutput.contains("exists"))
            let whole = try tool("recover", output, "--output", directory + "/copy.logstore")
            #expect(whole.status == 0 && whole.output.contains("nothing lost"))
        }
    }

    @Test("recover of a store with a damaged snapshot block keeps every other block's records and the journal after the snapshot, and lists the lost keys")
    func recoverDamagedSnapshot() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            // The values of each record but its references (those to lost records become null).
            func stable(_ line: Substring) throws -> [String] {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return ["id", "itemName", "serialNumber", "thumbnail", "valueInDollars", "label"].map { "\(object[$0] ?? "")" }
            }
            let original = Set(try lines(try tool("dump", path).output).map(stable))
            let frames = JournalFixtures.frames(in: try JournalFixtures.read(path))
            let secondBlock = frames[1].offset
            try StoreFileSurgery(path: path).flipBit(at: secondBlock + FrameLayout.headerSize + 10)

            let output = directory + "/recovered.logstore"
            let run = try tool("recover", path, "--output", output, "--json")
            #expect(run.status == 1, "\(run.errorOutput)")
            let recovery = try #require(try json(run) as? [String: Any])
            #expect((recovery["damage"] as? [String: Any])?["offset"] as? Int == secondBlock)
            let kept = try #require(recovery["snapshotRecordsKept"] as? Int)
            let lost = try #require(recovery["snapshotRecordsLost"] as? Int)
            #expect(kept > 0 && lost > 0 && kept + lost == Self.items - 50 + 3)
            #expect(recovery["lostTransactions"] as? Int == 0)
            #expect(recovery["keptTransactions"] as? Int == Self.framesAfterSnapshot, "the journal after the snapshot is kept")
            let lostRecords = try #require(recovery["lostRecords"] as? [[String: Any]])
            #expect(lostRecords.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == lost)

            let text = try tool("recover", path, "--output", directory + "/again.logstore")
            #expect(text.status == 1)
            let entity = try #require(lostRecords.first?["entity"] as? String)
            #expect(text.output.contains("lost: \(lostRecords.first?["count"] as? Int ?? 0) \(entity) record(s), keys "), "\(text.output)")
            #expect(text.output.contains("damaged: snapshot block 2 at offset \(secondBlock)"), "\(text.output)")

            #expect(try tool("verify", output).status == 0)
            let recovered = lines(try tool("dump", output).output)
            #expect(recovered.count == kept + Self.extraSaves)
            let added = try tool("query", output, "Item", "itemName BEGINSWITH 'Added'", "--count")
            #expect(added.output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(Self.extraSaves)")
            // Records keep their IDs and values, the changes after the snapshot included.
            let changed = try recovered.map(stable).filter { !original.contains($0) }
            #expect(changed.isEmpty, "\(changed.prefix(2))")
            let nullified = try #require(recovery["nullifiedReferences"] as? Int)
            #expect(nullified == 0 || text.output.contains("\(nullified) reference(s) to lost records set to null"))
        }
    }

    /// A store at `path` of Sample objects with `attributes`, one per row,
    /// each row's values set by name, saved once.
    private static func samples(at path: String, _ attributes: [(String, AttributeType)], _ rows: [[String: Any]]) throws {
        let model = try Model {
            Entity("Sample") {
                for (name, type) in attributes { Attribute(name, type) }
            }
        }
        let store = try Store(path: path, model: model)
        defer { store.close() }
        let context = store.newContext()
        for row in rows {
            let sample = try context.insert("Sample")
            for (key, value) in row { sample[key] = value }
        }
        try context.save()
    }

    @Test("dump, query and stats print NaN, infinite and out-of-range dates and numbers without crashing")
    func unusualValues() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/unusual.logstore"
            let seconds: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, 0]
            try Self.samples(at: path, [("when", .date), ("x", .double)], seconds.map { ["when": Date(timeIntervalSinceReferenceDate: $0), "x": $0] })
            for arguments in [["dump", path], ["dump", path, "--format", "csv"], ["dump", path, "--format", "table"],
                              ["query", path, "Sample", "x != 1"], ["stats", path], ["stats", path, "--json"]] {
                let run = try Executables.run("logstore-tool", arguments)
                #expect(run.status == 0, "\(arguments): \(run.errorOutput)")
            }
            let dump = try tool("dump", path).output
            #expect(dump.contains("2001-01-01T00:00:00.000Z"))
            #expect(dump.contains("nan s since 2001-01-01T00:00:00Z") && dump.contains("-inf s since") && dump.contains("1e+300 s since"), "\(dump)")
        }
    }

    @Test("demo works for every item count from 1 up")
    func demoSmallCounts() throws {
        try withTemporaryDirectory { directory in
            for items in [1, 2, 3, 7] {
                let path = directory + "/demo-\(items).logstore"
                let run = try tool("demo", path, "--items", "\(items)")
                #expect(run.status == 0, "--items \(items): \(run.errorOutput)")
                #expect(try tool("verify", path).status == 0)
            }
        }
    }

    @Test("stats reports integer, decimal and NaN extremes exactly (Int64.max does not pass through Double)")
    func exactExtremes() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/extremes.logstore"
            let rows: [(Int64, Double, String)] = [(.max, .nan, "0.1"), (.max - 1, 2.5, "100.000000000000000000000001"), (.min, -1, "-3")]
            try Self.samples(at: path, [("n", .int64), ("x", .double), ("price", .decimal)], rows.map { ["n": $0.0, "x": $0.1, "price": Decimal(string: $0.2)!] })
            let run = try tool("stats", path, "--json")
            #expect(run.status == 0, "\(run.errorOutput)")
            let stats = try #require(try json(run) as? [[String: Any]])
            let attributes = try #require(stats.first?["attributes"] as? [[String: Any]])
            func extremes(_ name: String) -> [String?] {
                let attribute = attributes.first { $0["name"] as? String == name }
                return [attribute?["minimum"] as? String, attribute?["maximum"] as? String]
            }
            #expect(extremes("n") == ["\(Int64.min)", "\(Int64.max)"])
            #expect(extremes("x") == ["-1.0", "2.5"])
            #expect(extremes("price") == ["-3", "100.000000000000000000000001"])
        }
    }

    @Test("Read-only subcommands leave the file unchanged and work while another process writes; compact refuses then")
    func readOnlyBesideAWriter() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            // This process is the app: it holds the store open for writing.
            let store = try Store(recordedModelAt: path, options: JournalOptions(access: .readWrite, createIfMissing: false, compaction: .manual))
            defer { store.close() }
            let before = try JournalFixtures.read(path)
            let runs = [
                try tool("info", path), try tool("schema", path), try tool("stats", path), try tool("verify", path),
                try tool("dump", path), try tool("query", path, "Item", "valueInDollars > 10", "--count"), try tool("history", path),
            ]
            for run in runs { #expect(run.status == 0, "\(run.errorOutput)") }
            #expect(try JournalFixtures.read(path) == before, "byte for byte")

            let compact = try tool("compact", path)
            #expect(compact.status == 4)
            #expect(compact.errorOutput.contains("locked"), "\(compact.errorOutput)")
            #expect(try JournalFixtures.read(path) == before)
        }
    }

    @Test("compact draws a bar reaching 100% on a terminal and plain lines into a pipe, and keeps every record")
    func compact() throws {
        try withTemporaryDirectory { directory in
            let path = try demoStore(in: directory)
            let dumpBefore = try tool("dump", path).output

            let piped = try tool("compact", path)
            #expect(piped.status == 0)
            #expect(piped.errorOutput.contains("writing snapshot: 0%") && piped.errorOutput.contains("finished: 100%"))
            #expect(!piped.errorOutput.contains("\r"), "no bar into a pipe")
            #expect(piped.output.contains("before") && piped.output.contains("after"))

            // script(1) gives the tool a pseudo-terminal.
            let executable = try Executables.url(of: "logstore-tool").path
            let terminal = try Executables.run("/usr/bin/script", ["-qec", "\(executable) compact \(path)", "/dev/null"], absolute: true)
            #expect(terminal.status == 0, "\(terminal.output)")
            #expect(terminal.output.contains("\r[##############################] 100%"), "\(terminal.output)")

            let report = try #require(try json(try tool("compact", path, "--json")) as? [String: Any])
            #expect(report["records"] as? Int == Self.items - 50 + Self.extraSaves + 3)
            #expect((report["seconds"] as? Double).map { $0 > 0 } == true && (report["bytesAfter"] as? Int).map { $0 > 0 } == true)

            #expect(try tool("dump", path).output == dumpBefore)
            #expect(try tool("verify", path).status == 0)
        }
    }

    @Test("Usage errors exit 2 with help; a missing file or a file that is not a store exits 3; a bad predicate exits 2 with its column")
    func usageErrors() throws {
        try withTemporaryDirectory { directory in
            let unknown = try tool("frobnicate")
            #expect(unknown.status == 2 && unknown.errorOutput.contains("logstore-tool --help"))
            let missingArgument = try tool("dump")
            #expect(missingArgument.status == 2 && missingArgument.errorOutput.contains("Missing expected argument"))
            let missing = try tool("dump", directory + "/none.logstore")
            #expect(missing.status == 3 && missing.errorOutput.contains("none.logstore"))
            let text = directory + "/notes.txt"
            try Data("notes\n".utf8).write(to: URL(fileURLWithPath: text))
            #expect(try tool("query", text, "Item", "TRUEPREDICATE").status == 3)

            let path = try demoStore(in: directory)
            let bad = try tool("query", path, "Item", "valueInDollars >== 3")
            #expect(bad.status == 2)
            #expect(bad.errorOutput.contains("column"), "\(bad.errorOutput)")
            let unknownKey = try tool("query", path, "Item", "price > 3")
            #expect(unknownKey.status == 2 && unknownKey.errorOutput.contains("price"))
            let help = try tool("--help")
            #expect(help.status == 0)
            let helpText = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for code in ["0 ok", "1 problem found", "2 usage error", "3 cannot open", "4 locked", "5 the operation failed"] { #expect(helpText.contains(code)) }
        }
    }
}
