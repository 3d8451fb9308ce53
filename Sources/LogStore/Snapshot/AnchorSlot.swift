// The two anchor slots of a version 5 file (FORMAT.md §13.2): 64 bytes
// each, rewritten in place in turn, naming the newest durable root.

/// What one anchor slot says: the root a flush or merge made durable.
///
/// A slot is written (one 64-byte `pwrite`) only once the root it names is
/// durable, always over the slot of lower generation, so a torn or lost
/// write spoils only that slot, and its checksum shows it; the other still
/// names a root that opens the same store. A slot is a hint: open checks
/// the root it names against it before using it.
struct AnchorSlot: Hashable, Sendable {
    /// The root's generation, at least 2 (a base root, named by the file
    /// header, has generation 1).
    var generation: UInt64
    /// The root frame's offset, at or after ``AnchorSlot/firstFrameOffset``.
    var rootOffset: UInt64
    var rootStoredSize: UInt32
    /// The root frame's checksum field.
    var rootChecksum: UInt32
    /// The last transaction the root's runs hold (its *L*).
    var sequence: UInt64

    static let size = 64
    /// Where the two slots are: each owns a 4 KiB page of its own.
    static let offsets: [UInt64] = [0x1000, 0x2000]
    /// Where the first frame of a version 5 file starts.
    static let firstFrameOffset: UInt64 = 0x3000
    static let magic = Array("LSANCHOR".utf8)

    /// What a slot's 64 bytes hold.
    enum Reading: Hashable, Sendable {
        /// 64 zero bytes: never written.
        case empty
        case slot(AnchorSlot)
        /// Anything else: a torn or damaged write, to be passed over.
        case damaged(String)
    }

    /// The slot's 64 bytes (FORMAT.md §13.2).
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.append(contentsOf: Self.magic)
        writer.appendFixed(generation)
        writer.appendFixed(rootOffset)
        writer.appendFixed(rootStoredSize)
        writer.appendFixed(rootChecksum)
        writer.appendFixed(sequence)
        writer.append(contentsOf: repeatElement(0, count: 20))
        let checksum = writer.bytes.withUnsafeBytes { CRC32C.checksum($0) }
        writer.appendFixed(checksum)
        return writer.bytes
    }

    /// Reads a slot's 64 bytes: empty, a slot whose checksum and fields
    /// hold, or damaged with the reason.
    static func read(_ bytes: UnsafeRawBufferPointer) -> Reading {
        guard bytes.count == size else { return .damaged("the slot is \(bytes.count) bytes, not \(size)") }
        if bytes.allSatisfy({ $0 == 0 }) { return .empty }
        guard bytes.prefix(8).elementsEqual(magic) else { return .damaged("no magic \"LSANCHOR\"") }
        let stored = bytes.loadUnaligned(fromByteOffset: 60, as: UInt32.self).littleEndian
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes.prefix(60))) == stored else {
            return .damaged("the slot fails its checksum")
        }
        guard bytes[40..<60].allSatisfy({ $0 == 0 }) else { return .damaged("its reserved bytes are not zero") }
        func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T { T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        let slot = AnchorSlot(generation: load(8, UInt64.self), rootOffset: load(16, UInt64.self), rootStoredSize: load(24, UInt32.self),
                              rootChecksum: load(28, UInt32.self), sequence: load(32, UInt64.self))
        guard slot.generation >= 2 else { return .damaged("it names generation \(slot.generation), below 2") }
        guard slot.rootOffset >= firstFrameOffset else { return .damaged("it names a root at offset \(slot.rootOffset), before the first frame") }
        return .slot(slot)
    }

    /// The slots worth trying, newest generation first.
    static func candidates(_ readings: [Reading]) -> [AnchorSlot] {
        readings.compactMap { if case .slot(let slot) = $0 { slot } else { nil } }.sorted { $0.generation > $1.generation }
    }

    /// Which of the two slots the next write goes to: an empty or damaged
    /// one, else the one of lower generation, so the newest stays whole.
    static func slotToWrite(_ readings: [Reading]) -> Int {
        precondition(readings.count == 2)
        switch (readings[0], readings[1]) {
        case (.slot(let first), .slot(let second)): return first.generation <= second.generation ? 0 : 1
        case (.slot, _): return 1
        default: return 0
        }
    }
}
