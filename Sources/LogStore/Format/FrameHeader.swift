// The 40-byte frame header (FORMAT.md §3) and the frame validity rule.

import Foundation

/// What a frame holds. Stable: files depend on the raw values.
public enum FrameKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// One save's changes (FORMAT.md §5.1).
    case transaction = 1
    /// Live records of a snapshot, sorted (FORMAT.md §11.2).
    case snapshotBlock = 2
    /// A snapshot's directory and indexes (FORMAT.md §11.3), versions 2–4.
    case snapshotIndex = 3
    /// One block of a paged table: a key directory, secondary index or
    /// relationship's pointers (FORMAT.md §13.5), version 5.
    case indexBlock = 4
    /// The names, model and dictionary a paged snapshot's runs are read
    /// with (FORMAT.md §13.4), version 5.
    case catalog = 5
    /// The top of a paged snapshot: its runs and their tables (FORMAT.md
    /// §13.4), version 5.
    case root = 6

    public var description: String {
        switch self {
        case .transaction: "transaction"
        case .snapshotBlock: "snapshot block"
        case .snapshotIndex: "snapshot index"
        case .indexBlock: "index block"
        case .catalog: "catalog"
        case .root: "root"
        }
    }
}

/// How a frame's payload is stored. Stable: files depend on the raw values.
public enum PayloadCodec: UInt8, Sendable, CustomStringConvertible {
    /// The raw payload as is (used when compression would not make it smaller).
    case raw = 0
    /// One LZ4 block (the block format, not the LZ4 frame format).
    case lz4Block = 1
    /// One LZ4 block compressed against the store dictionary: the one
    /// carried by the latest earlier frame that carries one (FORMAT.md §5.3).
    case lz4BlockWithDictionary = 2

    public var description: String {
        switch self {
        case .raw: "raw"
        case .lz4Block: "lz4"
        case .lz4BlockWithDictionary: "lz4+dictionary"
        }
    }
}

/// The fields of a frame header.
public struct FrameHeader: Hashable, Sendable {
    /// The checksum stored in the frame.
    public var checksum: UInt32
    /// The size of the payload as stored after the header.
    public var storedSize: UInt32
    /// The size of the payload after decompression.
    public var rawSize: UInt32
    /// The frame's sequence number: one more than the previous frame's.
    public var sequence: UInt64
    /// When the frame was written, in microseconds since 1970.
    public var timestampMicroseconds: Int64
    public var kind: FrameKind
    public var codec: PayloadCodec
    /// The raw payload begins with a new store dictionary (flags bit 0,
    /// FORMAT.md §5.3).
    public var carriesDictionary = false
    /// How many frames back the last one lies that the writer knew durable
    /// when it wrote this one: `sequence` minus that frame's sequence, or 0
    /// when the frame records nothing (snapshot frames, files before format
    /// version 4). FORMAT.md §3 and §6.
    public var durableDistance: UInt32 = 0

    /// The last sequence number the writer knew durable when it wrote this
    /// frame, or nil when the frame records none. A power cut cannot have
    /// taken a frame at or below it, so a hole there is damage (FORMAT.md §6).
    public var durableSequence: UInt64? {
        guard durableDistance > 0 else { return nil }
        return sequence >= UInt64(durableDistance) ? sequence - UInt64(durableDistance) : 0
    }

    /// The distance to record in frame `sequence` when the frames up to
    /// `durable` are known durable: saturating, so that a distance too large
    /// for the field claims less than is true, never more.
    static func durableDistance(sequence: UInt64, durable: UInt64) -> UInt32 {
        UInt32(clamping: sequence - min(durable, sequence - 1))
    }

    /// The time the frame was written.
    public var timestamp: Date { Date(timeIntervalSince1970: TimeInterval(timestampMicroseconds) / 1_000_000) }

    /// The size of the whole frame, header and payload.
    public var frameSize: UInt64 { UInt64(FrameLayout.headerSize) + UInt64(storedSize) }

    /// Writes the header into the first 40 bytes of `frame` (header then
    /// payload) and sets ``checksum`` over them.
    mutating func write(into frame: UnsafeMutableRawBufferPointer) {
        precondition(frame.count == FrameLayout.headerSize + Int(storedSize))
        frame.storeBytes(of: FrameLayout.magic.littleEndian, toByteOffset: 0, as: UInt32.self)
        frame.storeBytes(of: storedSize.littleEndian, toByteOffset: 8, as: UInt32.self)
        frame.storeBytes(of: rawSize.littleEndian, toByteOffset: 12, as: UInt32.self)
        frame.storeBytes(of: sequence.littleEndian, toByteOffset: 16, as: UInt64.self)
        frame.storeBytes(of: timestampMicroseconds.littleEndian, toByteOffset: 24, as: Int64.self)
        frame.storeBytes(of: kind.rawValue, toByteOffset: 32, as: UInt8.self)
        frame.storeBytes(of: codec.rawValue, toByteOffset: 33, as: UInt8.self)
        frame.storeBytes(of: (carriesDictionary ? FrameLayout.carriesDictionaryFlag : 0).littleEndian, toByteOffset: 34, as: UInt16.self)
        frame.storeBytes(of: durableDistance.littleEndian, toByteOffset: FrameLayout.durableDistanceOffset, as: UInt32.self)
        checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: frame[FrameLayout.checksummedHeaderStart...]))
        frame.storeBytes(of: checksum.littleEndian, toByteOffset: 4, as: UInt32.self)
    }
}

extension FrameHeader {
    /// LZ4 never pays below a few dozen bytes, so smaller payloads stay raw.
    static let smallestCompressedPayload = 32

    /// Replaces the contents of `frame` with a whole frame: header, then
    /// `payload` compressed with LZ4 (against `dictionary` when given) if
    /// that makes it smaller, else as it is. Every frame kind is written here.
    @discardableResult
    static func encodeFrame(
        kind: FrameKind, sequence: UInt64, timestampMicroseconds: Int64, payload raw: UnsafeRawBufferPointer,
        compressor: LZ4.Compressor?, dictionary: LZ4.PresetDictionary? = nil, carriesDictionary: Bool = false,
        durableDistance: UInt32 = 0, into frame: inout ByteWriter
    ) -> FrameHeader {
        frame.removeAll()
        frame.append(contentsOf: repeatElement(0, count: FrameLayout.headerSize))
        var codec = PayloadCodec.raw
        if let compressor, raw.count >= smallestCompressedPayload {
            frame.appendUninitialized(count: LZ4.compressBound(raw.count)) { destination in
                let size = if let dictionary {
                    compressor.compress(raw, into: destination, dictionary: dictionary)
                } else {
                    compressor.compress(raw, into: destination)
                }
                return size > 0 && size < raw.count ? size : 0
            }
            if frame.count > FrameLayout.headerSize { codec = dictionary == nil ? .lz4Block : .lz4BlockWithDictionary }
        }
        if codec == .raw { frame.append(raw) }
        var header = FrameHeader(
            checksum: 0, storedSize: UInt32(frame.count - FrameLayout.headerSize), rawSize: UInt32(raw.count),
            sequence: sequence, timestampMicroseconds: timestampMicroseconds, kind: kind, codec: codec,
            carriesDictionary: carriesDictionary, durableDistance: durableDistance)
        frame.withUnsafeMutableBytes { header.write(into: $0) }
        return header
    }
}

/// Why bytes at an offset are not a valid frame header.
enum FrameHeaderProblem: Error, Sendable, Equatable {
    /// The magic is missing: zeros from a torn append, or not a frame at all.
    case badMagic
    /// A declared size is over ``FrameLayout/maxPayloadSize``, or the raw size
    /// is impossible for the codec. A torn append never produces this, so it
    /// is always damage.
    case impossibleSize(String)
    /// The kind or codec byte is not one this version knows, or reserved bits are set.
    case unknownField(String)
}

extension FrameHeader {
    /// The first check of the validity rule, before anything is read or
    /// allocated for the payload: the magic, and declared sizes within the
    /// limit. Returns the stored payload size.
    static func declaredPayloadSize(_ bytes: UnsafeRawBufferPointer) -> Result<UInt32, FrameHeaderProblem> {
        precondition(bytes.count >= FrameLayout.headerSize)
        let magic = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        guard magic == FrameLayout.magic else { return .failure(.badMagic) }
        let storedSize = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        let rawSize = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard storedSize <= FrameLayout.maxPayloadSize, rawSize <= FrameLayout.maxPayloadSize else {
            return .failure(.impossibleSize("declares a payload of \(max(storedSize, rawSize)) bytes, over the limit of \(FrameLayout.maxPayloadSize)"))
        }
        return .success(storedSize)
    }

    /// Parses the 40 header bytes. Call it once the checksum matched (see
    /// ``FrameHeader/checksumMatches(header:payload:)``): a torn append can
    /// leave any bytes in the kind and codec fields, but a frame whose
    /// checksum matches and whose fields are unknown was written that way.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<FrameHeader, FrameHeaderProblem> {
        func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let storedSize: UInt32
        switch declaredPayloadSize(bytes) {
        case .success(let size): storedSize = size
        case .failure(let problem): return .failure(problem)
        }
        let rawSize = load(12, UInt32.self)
        guard let kind = FrameKind(rawValue: load(32, UInt8.self)) else {
            return .failure(.unknownField("has unknown frame kind \(load(32, UInt8.self))"))
        }
        guard let codec = PayloadCodec(rawValue: load(33, UInt8.self)) else {
            return .failure(.unknownField("has unknown payload codec \(load(33, UInt8.self))"))
        }
        let flags = load(34, UInt16.self)
        guard flags & ~FrameLayout.carriesDictionaryFlag == 0 else {
            return .failure(.unknownField("has reserved bits set"))
        }
        // Only a transaction records what its writer knew durable; in a
        // snapshot frame the field stays reserved.
        let durableDistance = load(FrameLayout.durableDistanceOffset, UInt32.self)
        guard kind == .transaction || durableDistance == 0 else {
            return .failure(.unknownField("is a \(kind) frame with a durable distance of \(durableDistance), which only transaction frames have"))
        }
        switch codec {
        case .raw where rawSize != storedSize:
            return .failure(.impossibleSize("stores a raw payload of \(storedSize) bytes but declares \(rawSize)"))
        case .lz4Block where UInt64(rawSize) > UInt64(storedSize) * UInt64(FrameLayout.maxCompressionRatio) + 16,
             .lz4BlockWithDictionary where UInt64(rawSize) > UInt64(storedSize) * UInt64(FrameLayout.maxCompressionRatio) + 16:
            return .failure(.impossibleSize("declares \(rawSize) raw bytes, more than LZ4 can expand \(storedSize) stored bytes to"))
        default:
            break
        }
        return .success(FrameHeader(
            checksum: load(4, UInt32.self), storedSize: storedSize, rawSize: rawSize,
            sequence: load(16, UInt64.self), timestampMicroseconds: load(24, Int64.self),
            kind: kind, codec: codec, carriesDictionary: flags & FrameLayout.carriesDictionaryFlag != 0,
            durableDistance: durableDistance))
    }

    /// The validity rule's checksum half: CRC32C over header bytes 8..<40,
    /// then the stored payload, equals the header's checksum field.
    static func checksumMatches(header: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> Bool {
        var crc = CRC32C()
        crc.update(UnsafeRawBufferPointer(rebasing: header[FrameLayout.checksummedHeaderStart..<FrameLayout.headerSize]))
        crc.update(payload)
        let stored = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        return crc.value == stored
    }
}
