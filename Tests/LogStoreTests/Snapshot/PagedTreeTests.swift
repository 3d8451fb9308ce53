// Paged tables (FORMAT.md §13.5) written by PagedTreeWriter and read back
// by PagedTreeReader, against a sorted array of the same entries; and
// blocks whose bytes were changed after their checksum was taken.

import Foundation
import Synchronization
import Testing
@_spi(Benchmarks) @testable import LogStore

/// Frames kept in memory by offset, as a file would hold them: a handle
/// names a payload by offset, sizes and checksum.
final class MemoryFrames: Sendable {
    let type: PagedTableType
    private let payloads = Mutex<[UInt64: [UInt8]]>([:])
    private let end = Mutex<UInt64>(0x3000)

    init(type: PagedTableType) { self.type = type }

    func write(_ block: PagedBlock) -> FrameHandle {
        let bytes = block.encoded(as: type)
        let offset = end.withLock { end in
            defer { end += UInt64(FrameLayout.headerSize + bytes.count) }
            return end
        }
        payloads.withLock { $0[offset] = bytes }
        return FrameHandle(offset: offset, storedSize: UInt32(bytes.count), rawSize: UInt32(bytes.count), checksum: bytes.withUnsafeBytes { CRC32C.checksum($0) })
    }

    func load(_ handle: FrameHandle) throws(LogStoreError) -> PagedBlock {
        guard let bytes = payloads.withLock({ $0[handle.offset] }), bytes.count == Int(handle.storedSize) else {
            throw PagedTreeReader.damage(path: "memory", run: 0, offset: handle.offset, reason: "no frame of that size")
        }
        do throws(DecodeFailure) {
            return try bytes.withBytes { (raw) throws(DecodeFailure) in try PagedBlock(decoding: raw, as: type) }
        } catch {
            throw PagedTreeReader.damage(path: "memory", run: 0, offset: handle.offset, reason: error.reason)
        }
    }

    /// Replaces a payload, as a writer that computed the checksum over
    /// crafted bytes would.
    func replace(at offset: UInt64, with bytes: [UInt8]) { payloads.withLock { $0[offset] = bytes } }
    func payload(at offset: UInt64) -> [UInt8] { payloads.withLock { $0[offset]! } }
    var offsets: [UInt64] { payloads.withLock { $0.keys.sorted() } }

    func reader(_ tree: PagedTree) -> PagedTreeReader {
        PagedTreeReader(tree: tree, path: "memory", load: { (handle) throws(LogStoreError) in try self.load(handle) })
    }
}

@Suite("Paged tables")
struct PagedTreeTests {
    typealias Row = (group: PagedGroup, entry: PagedEntry)

    /// Entries of a secondary index: `count` records over a few hundred
    /// values, some tombstones, sorted by the one order.
    static func indexRows(count: Int, seed: UInt64) -> [Row] {
        var random = JournalFixtures.SeededGenerator(seed: seed)
        var rows: [Row] = []
        var keys = Set<UInt64>()
        while rows.count < count {
            let key = UInt64.random(in: 1...UInt64(count * 4), using: &random)
            guard keys.insert(key).inserted else { continue }
            let value: StoredValue = switch Int.random(in: 0..<4, using: &random) {
            case 0: .null
            case 1: .int64(Int64.random(in: -50...50, using: &random))
            case 2: .double(Double(Int.random(in: -50...50, using: &random)) + 0.5)
            default: .int64(Int64.random(in: 0...5, using: &random) * 1_000_000)
            }
            rows.append((PagedGroup.indexing(value), PagedEntry(key: key, state: Int.random(in: 0..<10, using: &random) == 0 ? .tombstone : .present)))
        }
        return rows.sorted { PagedGroup.order(($0.group, $0.entry.key), ($1.group, $1.entry.key)) == .orderedAscending }
    }

    static func write(_ rows: [Row], type: PagedTableType, blockSize: Int, into frames: MemoryFrames) throws -> PagedTree {
        var writer = PagedTreeWriter(type: type, run: 7, table: 3, blockSize: blockSize, write: { block in frames.write(block) })
        for row in rows { try writer.append(row.group, row.entry) }
        return try writer.finish()
    }

    static func readAll(_ reader: PagedTreeReader) throws -> [Row] {
        var cursor = try reader.first()
        var rows: [Row] = []
        while let row = try cursor.next() { rows.append(row) }
        return rows
    }

    static func same(_ a: [Row], _ b: [Row]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { PagedGroup.order(($0.group, $0.entry.key), ($1.group, $1.entry.key)) == .orderedSame && $0.entry == $1.entry }
    }

    @Test("An index table reads back entry for entry, at every block size", arguments: [48, 200, 4096])
    func indexRoundTrip(blockSize: Int) throws {
        let rows = Self.indexRows(count: 5_000, seed: UInt64(blockSize))
        let frames = MemoryFrames(type: .values)
        let tree = try Self.write(rows, type: .values, blockSize: blockSize, into: frames)
        #expect(tree.entryCount == 5_000)
        #expect(tree.height >= (blockSize < 4096 ? 2 : 1))
        let reader = frames.reader(tree)
        #expect(Self.same(try Self.readAll(reader), rows))
        // Every block stays within its size plus one entry's worth.
        for offset in frames.offsets { #expect(frames.payload(at: offset).count <= blockSize + 64) }
    }

    @Test("Seeking finds the first entry at or after any position, as a search of the sorted entries does")
    func seekAgreesWithTheSortedEntries() throws {
        let rows = Self.indexRows(count: 3_000, seed: 11)
        let frames = MemoryFrames(type: .values)
        let reader = frames.reader(try Self.write(rows, type: .values, blockSize: 96, into: frames))
        var random = JournalFixtures.SeededGenerator(seed: 12)
        var probes: [(PagedGroup, UInt64)] = rows.map { ($0.group, $0.entry.key) }
        for _ in 0..<500 {
            let value: StoredValue = Bool.random(using: &random) ? .int64(Int64.random(in: -60...60, using: &random)) : .double(Double.random(in: -60...60, using: &random))
            probes.append((PagedGroup.indexing(value), UInt64.random(in: 0...13_000, using: &random)))
        }
        probes.append((.value(.null, cut: false), 0))
        probes.append((.value(.string("after every number"), cut: false), 0))
        for (group, key) in probes {
            let expected = rows.firstIndex { PagedGroup.order(($0.group, $0.entry.key), (group, key)) != .orderedAscending }
            var cursor = try reader.seek(group, key: key)
            let found = try cursor.next()
            if let expected {
                #expect(found.map { Self.same([$0], [rows[expected]]) } == true)
                // And it goes on from there in order.
                let following = try cursor.next()
                #expect(following.map { Self.same([$0], [rows[expected + 1]]) } ?? (expected == rows.count - 1))
            } else {
                #expect(found == nil)
            }
        }
    }

    @Test("A key directory finds each record's data block and position, and no key it lacks")
    func keyDirectoryLocates() throws {
        let frames = MemoryFrames(type: .keys)
        var writer = PagedTreeWriter(type: .keys, run: 7, table: 0, blockSize: 120, write: { block in frames.write(block) })
        var random = JournalFixtures.SeededGenerator(seed: 21)
        var expected: [Int: [UInt64: (FrameHandle, Int)]] = [:]
        var nextKey: [UInt64] = [1, 1, 1]
        var entity = 0
        for number in 0..<400 {
            // A data block of 1 to 30 records, possibly spanning entities.
            let handle = FrameHandle(offset: 0x100000 + UInt64(number) * 100, storedSize: 60, rawSize: 90, checksum: UInt32(number))
            var records: [(entity: Int, entry: PagedEntry)] = []
            entity = max(entity, number * 3 / 400)
            for position in 0..<Int.random(in: 1...30, using: &random) {
                if entity < 2 && Int.random(in: 0..<60, using: &random) == 0 { entity += 1 }
                let key = nextKey[entity] + UInt64.random(in: 0...3, using: &random)
                nextKey[entity] = key + 1
                records.append((entity, PagedEntry(key: key, state: .present)))
                expected[entity, default: [:]][key] = (handle, position)
            }
            try writer.append(dataBlock: handle, records: records)
        }
        let tree = try writer.finish()
        #expect(tree.height >= 2)
        let reader = frames.reader(tree)
        for entity in 0..<3 {
            for key in 0...nextKey[entity] {
                let found = try reader.locate(entity: entity, key: key)
                if let (handle, position) = expected[entity]?[key] {
                    #expect(found?.dataBlock == handle && found?.record == position && found?.state == .present)
                } else {
                    #expect(found == nil)
                }
            }
        }
        #expect(try reader.locate(entity: 3, key: 1) == nil)
    }

    @Test("A key-directory leaf read as runs holds the entries of the same leaf read whole, and is refused exactly when that one is")
    func keyLeafRuns() throws {
        let frames = MemoryFrames(type: .keys)
        var writer = PagedTreeWriter(type: .keys, run: 7, table: 0, blockSize: 200, write: { block in frames.write(block) })
        var random = JournalFixtures.SeededGenerator(seed: 77)
        var nextKey: [UInt64] = [1, 1, 1]
        var entity = 0
        for number in 0..<120 {
            // Runs of consecutive keys, gaps, tombstones, and blocks that
            // span entities.
            let handle = FrameHandle(offset: 0x100000 + UInt64(number) * 100, storedSize: 60, rawSize: 90, checksum: UInt32(number))
            var records: [(entity: Int, entry: PagedEntry)] = []
            for _ in 0..<Int.random(in: 1...40, using: &random) {
                if entity < 2 && Int.random(in: 0..<90, using: &random) == 0 { entity += 1 }
                let key = nextKey[entity] + (Int.random(in: 0..<8, using: &random) == 0 ? UInt64.random(in: 1...5, using: &random) : 0)
                nextKey[entity] = key + 1
                records.append((entity, PagedEntry(key: key, state: Int.random(in: 0..<12, using: &random) == 0 ? .tombstone : .present)))
            }
            try writer.append(dataBlock: handle, records: records)
        }
        _ = try writer.finish()
        var leaves = 0, refused = 0, accepted = 0
        func read(_ bytes: [UInt8]) -> (runs: KeyDirectoryLeaf?, whole: KeyDirectoryLeaf?) {
            let runs = bytes.withUnsafeBytes { try? KeyDirectoryLeaf(decoding: $0) }
            let whole = bytes.withUnsafeBytes { try? PagedBlock(decoding: $0, as: .keys) }.flatMap { $0.isLeaf ? KeyDirectoryLeaf($0) : nil }
            // Both go through one reading; this test's own, entry by entry,
            // is what that reading is held to.
            let reference = bytes.withUnsafeBytes { Self.referenceKeyLeaf($0) }
            #expect(runs.map { leaf in leaf.runs.flatMap { run in (0..<run.count).map { (run.entity, run.firstKey + UInt64($0), run.state) } } }.map { $0.map(String.init(describing:)) }
                    == reference.map { $0.entries.map(String.init(describing:)) })
            #expect(runs?.dataBlocks == reference?.dataBlocks)
            return (runs, whole)
        }
        for offset in frames.offsets {
            let original = frames.payload(at: offset)
            guard let block = try? original.withUnsafeBytes({ try PagedBlock(decoding: $0, as: .keys) }), block.isLeaf else { continue }
            leaves += 1
            let (runs, whole) = read(original)
            #expect(runs != nil && runs == whole)
            // Runs expand back to the leaf's entries, one for one.
            let expanded = runs?.runs.flatMap { run in (0..<run.count).map { PagedEntry(key: run.firstKey + UInt64($0), state: run.state) } }
            #expect(expanded == block.entries)
            #expect(runs?.runs.count ?? 0 < block.entries.count)
            // A step of one written in two bytes is the same entry.
            if let at = original.indices.last(where: { $0 > 0 && original[$0] == 0x04 && original[$0 - 1] == 0x04 }) {
                var longer = original
                longer.replaceSubrange(at...at, with: [0x84, 0x00])
                let (runs, whole) = read(longer)
                #expect(runs != nil && runs == whole)
            }
            for position in original.indices {
                for change: UInt8 in [0x01, 0x04, 0x80] {
                    var bytes = original
                    bytes[position] ^= change
                    let (runs, whole) = read(bytes)
                    #expect(runs == whole)
                    if runs == nil { refused += 1 } else { accepted += 1 }
                }
            }
        }
        #expect(leaves > 3)
        #expect(refused > 0 && accepted > 0)
    }

    /// A key-directory leaf read entry by entry as FORMAT.md §13.5 gives
    /// it, without PagedBlock: its data blocks and its entries as (entity,
    /// key, state); nil for bytes that are not a valid leaf.
    static func referenceKeyLeaf(_ raw: UnsafeRawBufferPointer) -> (dataBlocks: [PagedBlock.DataBlock], entries: [(Int, UInt64, PagedEntry.State)])? {
        var reader = ByteReader(raw)
        do {
            _ = try reader.readVarint()
            guard try reader.readVarint() <= UInt64(Int.max), try reader.readVarint() == 0 else { return nil }
            var dataBlocks: [PagedBlock.DataBlock] = []
            var records = 0
            for _ in 0..<(try reader.readCount(minimumItemSize: FrameHandle.minimumEncodedSize + 1)) {
                let handle = try reader.readHandle()
                let count = try reader.readVarint()
                guard count >= 1, count <= UInt64(reader.remaining) else { return nil }
                records += Int(count)
                dataBlocks.append(PagedBlock.DataBlock(handle: handle, recordCount: Int(count)))
            }
            var entries: [(Int, UInt64, PagedEntry.State)] = []
            var lastEntity: UInt64?
            for _ in 0..<(try reader.readCount(minimumItemSize: 2)) {
                let entity = try reader.readVarint(), count = try reader.readVarint()
                guard entity <= UInt64(Int.max), lastEntity.map({ $0 < entity }) ?? true, count >= 1, count <= UInt64(reader.remaining) else { return nil }
                lastEntity = entity
                var previous: UInt64?
                for _ in 0..<count {
                    let word = try reader.readVarint()
                    guard let state = PagedEntry.State(rawValue: UInt8(word & 3)) else { return nil }
                    let step = word >> 2
                    var key = step
                    if let previous {
                        guard (state == .olderVersion) == (step == 0) else { return nil }
                        let (sum, overflow) = previous.addingReportingOverflow(step)
                        guard !overflow else { return nil }
                        key = sum
                    }
                    guard key < RecordID.keyLimit else { return nil }
                    entries.append((Int(entity), key, state))
                    previous = key
                }
            }
            guard reader.isAtEnd, records == entries.count else { return nil }
            return (dataBlocks, entries)
        } catch {
            return nil
        }
    }

    @Test("A key whose versions run over several leaves is found at its newest version", arguments: [PagedTableType.keys, .values])
    func versionsAcrossLeaves(type: PagedTableType) throws {
        let frames = MemoryFrames(type: type)
        var writer = PagedTreeWriter(type: type, run: 7, table: 3, blockSize: 12, write: { block in frames.write(block) })
        let group: PagedGroup = type == .keys ? .entity(0) : .value(.int64(5), cut: false)
        // Keys 1 to 9, key 5 with 60 older versions: more than a leaf holds.
        var rows: [Row] = []
        for key in UInt64(1)...9 {
            rows.append((group, PagedEntry(key: key, state: .present)))
            if key == 5 { rows += Array(repeating: (group, PagedEntry(key: 5, state: .olderVersion)), count: 60) }
        }
        if type == .keys {
            for start in stride(from: 0, to: rows.count, by: 3) {
                let records = rows[start..<min(start + 3, rows.count)].map { (entity: 0, entry: $0.entry) }
                try writer.append(dataBlock: FrameHandle(offset: 0x10000 + UInt64(start) * 64, storedSize: 30, rawSize: 40, checksum: UInt32(start)), records: records)
            }
        } else {
            for row in rows { try writer.append(row.group, row.entry) }
        }
        let tree = try writer.finish()
        #expect(tree.height >= 2)
        let reader = frames.reader(tree)
        #expect(Self.same(try Self.readAll(reader), rows))
        for key in UInt64(1)...9 {
            var cursor = try reader.seek(group, key: key)
            let found = try cursor.next()
            #expect(found?.entry == PagedEntry(key: key, state: .present), "key \(key)")
        }
        if type == .keys {
            let five = try #require(try reader.locate(entity: 0, key: 5))
            #expect(five.state == .present && five.dataBlock.offset == 0x10000 + 3 * 64 && five.record == 1)
        }
    }

    @Test("Crafted branches sharing a child are damage, not the child's entries twice")
    func sharedChildren() throws {
        let rows = Self.indexRows(count: 2_000, seed: 61)
        let frames = MemoryFrames(type: .values)
        var tree = try Self.write(rows, type: .values, blockSize: 48, into: frames)
        try #require(tree.height >= 2)
        func decode(_ handle: FrameHandle) throws -> PagedBlock { try frames.payload(at: handle.offset).withUnsafeBytes { try PagedBlock(decoding: $0, as: .values) } }
        // The second branch also lists the first branch's last child, and
        // every count and first entry above it is made to agree: each block
        // is one its parent would accept.
        var top = try decode(tree.top)
        let first = try decode(top.children[0].handle)
        var second = try decode(top.children[1].handle)
        second.children.insert(first.children[first.children.count - 1], at: 0)
        let shared = second.children[0]
        top.children[1] = PagedBlock.Child(group: shared.group, key: shared.key, entryCount: second.entryCount, handle: frames.write(second))
        tree.top = frames.write(top)
        tree.entryCount = top.entryCount
        let error = #expect(throws: LogStoreError.self) { try Self.readAll(frames.reader(tree)) }
        #expect(error?.kind == .corruptSnapshot)
    }

    @Test("An empty table is one empty leaf")
    func emptyTable() throws {
        let frames = MemoryFrames(type: .targets)
        let tree = try Self.write([], type: .targets, blockSize: 100, into: frames)
        #expect(tree.height == 0 && tree.entryCount == 0)
        var cursor = try frames.reader(tree).seek(.target(5), key: 1)
        #expect(try cursor.next() == nil)
        #expect(try Self.readAll(frames.reader(tree)).isEmpty)
    }

    @Test("Long strings and data are cut, and the cut groups keep the order of the whole values")
    func cutValuesKeepTheOrder() throws {
        var random = JournalFixtures.SeededGenerator(seed: 31)
        // Shared prefixes of one- to four-byte scalars, so cuts land before
        // scalars of every width, and composed and decomposed accents.
        let pieces = ["a", "b", "é", "e\u{301}", "ü", "語", "𝄞", "😀", "z"]
        var values: [StoredValue] = []
        let stem = String(repeating: "x", count: 1_018)
        for _ in 0..<600 {
            var text = Bool.random(using: &random) ? stem : ""
            for _ in 0..<Int.random(in: 0...12, using: &random) { text += pieces.randomElement(using: &random)! }
            if Int.random(in: 0..<4, using: &random) == 0 { text += String(repeating: "q", count: Int.random(in: 0...1_100, using: &random)) }
            values.append(.string(text))
        }
        for _ in 0..<200 {
            var bytes = Data(repeating: 7, count: Int.random(in: 1_000...1_030, using: &random))
            for _ in 0..<3 { bytes[Int.random(in: (bytes.count - 15)..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            values.append(.data(bytes))
        }
        // Found in review: Foundation's NFC on Linux leaves a Hangul LV
        // syllable and a trailing T apart, the one order composes them.
        let hangulStem = String(repeating: "x", count: 1_018) + "\u{ac00}"
        values += [.string(hangulStem + "\u{11a8}"), .string(hangulStem + "\u{1f600}yyyyyyyyyy"), .string(hangulStem + "\u{11a8}\u{1f600}yyy")]
        values.sort { StoredValue.sortOrder($0, $1) == .orderedAscending }
        let groups = values.map(PagedGroup.indexing)
        for (value, group) in zip(values, groups) {
            guard case .value(let held, let cut) = group else { Issue.record("not a value group"); continue }
            #expect(PagedGroup.isValidIndexedValue(held, cut: cut))
            if case .string(let text) = value { #expect(cut == (text._nfcCodeUnits.count > PagedGroup.longestWholeValue)) }
        }
        for index in groups.indices.dropLast() {
            #expect(PagedGroup.order(groups[index], groups[index + 1]) != .orderedDescending, "\(index): a value's group sorts after the next value's: \(Self.describe(values[index])) / \(Self.describe(values[index + 1])) as \(Self.describe(groups[index])) / \(Self.describe(groups[index + 1]))")
        }
        #expect(groups.contains { if case .value(_, true) = $0 { true } else { false } })
    }

    static func describe(_ value: StoredValue) -> String {
        switch value {
        case .string(let text): "string \(text.utf8.count)B: …" + String(text.unicodeScalars.dropFirst(1_010).prefix(30).map { String($0.value, radix: 16) }.joined(separator: " "))
        case .data(let bytes): "data \(bytes.count)B: …" + bytes.suffix(from: 1_010).prefix(24).map { String($0, radix: 16) }.joined(separator: " ")
        default: "\(value)"
        }
    }

    static func describe(_ group: PagedGroup) -> String {
        guard case .value(let value, let cut) = group else { return "\(group)" }
        return (cut ? "cut " : "") + describe(value)
    }

    @Test("A block whose bytes changed after its checksum was taken fails to decode or is refused by its parent; reads never trap")
    func craftedBlocks() throws {
        let rows = Self.indexRows(count: 300, seed: 41)
        let frames = MemoryFrames(type: .values)
        let tree = try Self.write(rows, type: .values, blockSize: 64, into: frames)
        let reader = frames.reader(tree)
        var refused = 0, unchanged = 0
        for offset in frames.offsets {
            let original = frames.payload(at: offset)
            for position in original.indices {
                for change: UInt8 in [0x01, 0x80, 0xFF] {
                    var bytes = original
                    bytes[position] ^= change
                    frames.replace(at: offset, with: bytes)
                    do {
                        let read = try Self.readAll(reader)
                        // A change the tree cannot see (a value's bits that
                        // keep the order) still reads the whole table.
                        #expect(read.count == rows.count)
                        unchanged += 1
                    } catch let error as LogStoreError {
                        #expect(error.kind == .corruptSnapshot)
                        refused += 1
                    }
                }
            }
            frames.replace(at: offset, with: original)
        }
        #expect(refused > unchanged)
        #expect(Self.same(try Self.readAll(reader), rows))
    }

    @Test("A branch naming another table's block, or its children swapped, is damage")
    func misplacedBlocks() throws {
        let rows = Self.indexRows(count: 400, seed: 51)
        let frames = MemoryFrames(type: .values)
        let tree = try Self.write(rows, type: .values, blockSize: 80, into: frames)
        let top = frames.payload(at: tree.top.offset)
        var block = try top.withUnsafeBytes { try PagedBlock(decoding: $0, as: .values) }
        block.children.swapAt(0, 1)
        frames.replace(at: tree.top.offset, with: block.encoded(as: .values))
        #expect(throws: LogStoreError.self) { try Self.readAll(frames.reader(tree)) }
        frames.replace(at: tree.top.offset, with: top)
        var wrongTable = tree
        wrongTable.table = 4
        let error = #expect(throws: LogStoreError.self) { try Self.readAll(frames.reader(wrongTable)) }
        #expect(error?.kind == .corruptSnapshot && error?.message.contains("table 3") == true)
    }
}
