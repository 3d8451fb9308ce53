// The 64-byte file header (FORMAT.md §2): magic, versions, store UUID, creation time.

import Foundation

/// The fixed header at the start of every store file.
public struct FileHeader: Hashable, Sendable {
    /// The format version of the code that wrote the file.
    public var writeVersion: UInt16
    /// The oldest reader version that can read the file.
    public var readVersion: UInt16
    /// The store's identity, fixed at creation and kept across compactions.
    public var storeID: UUID
    /// When the store was created, to the microsecond.
    public var createdAt: Date
    /// Where the snapshot index frame starts, or nil when the file holds no
    /// snapshot (versions 2 to 4; FORMAT.md §11).
    public var snapshotIndexOffset: UInt64?
    /// Where the base root frame of a paged snapshot starts, or nil when
    /// the file holds none (version 5; FORMAT.md §13.2).
    public var snapshotRootOffset: UInt64?
    /// Whether a compaction or a salvage of the store renamed a new file
    /// over this one: the store is elsewhere now, and a name still reaching
    /// this file (a hard link) reaches a copy that no save may extend
    /// (FORMAT.md §2).
    public var isReplaced = false

    /// A header of `version`: ``FileLayout/createdVersion`` for a file
    /// created empty, ``FileLayout/pagedWriteVersion`` (or, for the tests of
    /// version 5 files, ``FileLayout/pagedSnapshotVersion``) for a paged
    /// snapshot's file, ``FileLayout/indexFrameVersion`` for the tests'
    /// snapshots in one index frame.
    init(storeID: UUID, createdAt: Date, version: UInt16, snapshotIndexOffset: UInt64? = nil, snapshotRootOffset: UInt64? = nil) {
        precondition(version >= FileLayout.pagedSnapshotVersion ? snapshotIndexOffset == nil : snapshotRootOffset == nil)
        writeVersion = version
        readVersion = version
        self.storeID = storeID
        self.createdAt = Date(timeIntervalSince1970: TimeInterval(Microseconds(createdAt)) / 1_000_000)
        self.snapshotIndexOffset = snapshotIndexOffset
        self.snapshotRootOffset = snapshotRootOffset
    }

    /// Where the first frame after the header may start: at 64, or after
    /// the anchor pages of a version 5 file (FORMAT.md §13.2).
    @_spi(Benchmarks) @_spi(Fuzzing)
    public var framesStart: UInt64 {
        UInt64(readVersion >= FileLayout.pagedSnapshotVersion ? FileLayout.pagedFramesStart : FileLayout.headerSize)
    }

    /// ``framesStart``, for a file of `fileSize` bytes at `path`, which must
    /// not end before it: a version 5 file is created whole up to its first
    /// frame (FORMAT.md §13.2), so a shorter one was cut short.
    func framesStart(fileSize: UInt64, path: String) throws(LogStoreError) -> UInt64 {
        guard fileSize >= framesStart else {
            throw LogStoreError(.corruptHeader, "\(path) is \(fileSize) bytes long, but a format version \(readVersion) file holds \(framesStart) bytes of header and anchor pages before its first frame: it was cut short, and holds no saves; restore it from a backup, or remove it to start a new store", path: path, offset: fileSize)
        }
        return framesStart
    }

    /// The 64 bytes of the header.
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: FileLayout.headerSize)
        writer.append(contentsOf: FileLayout.magic)
        writer.appendFixed(writeVersion)
        writer.appendFixed(readVersion)
        writer.appendFixed(UInt32(FileLayout.headerSize))
        withUnsafeBytes(of: storeID.uuid) { writer.append($0) }
        writer.appendFixed(Microseconds(createdAt))
        writer.appendFixed(snapshotIndexOffset ?? snapshotRootOffset ?? 0)
        writer.append(isReplaced ? 1 : 0)
        writer.append(contentsOf: repeatElement(0, count: FileLayout.headerChecksumOffset - writer.count))
        let checksum = writer.bytes.withUnsafeBytes { CRC32C.checksum($0) }
        writer.appendFixed(checksum)
        return writer.bytes
    }

    /// Parses and checks a header. `bytes` holds what the file has of its
    /// first 64 bytes (fewer when the file is shorter).
    @_spi(Benchmarks) @_spi(Fuzzing)
    public static func decode(_ bytes: UnsafeRawBufferPointer, path: String) throws(LogStoreError) -> FileHeader {
        if bytes.isEmpty {
            throw LogStoreError(.notAStore, "\(path) is empty, so it is not a LogStore store; remove it or pass the path of a store", path: path)
        }
        guard bytes.count >= FileLayout.magic.count, bytes.prefix(FileLayout.magic.count).elementsEqual(FileLayout.magic) else {
            throw LogStoreError(.notAStore, "\(path) does not start with the LogStore magic \"LOGSTORE\", so it is another kind of file; check the path", path: path, offset: 0)
        }
        guard bytes.count >= FileLayout.headerSize else {
            throw LogStoreError(.corruptHeader, "\(path) ends inside its \(FileLayout.headerSize)-byte header (\(bytes.count) bytes); the file was cut short and holds no data: restore it from a backup, or remove it to start a new store", path: path, offset: 0)
        }
        var reader = ByteReader(bytes)
        do {
            _ = try reader.readBytes(count: FileLayout.magic.count)
            let writeVersion = try reader.readFixed(UInt16.self)
            let readVersion = try reader.readFixed(UInt16.self)
            let headerSize = try reader.readFixed(UInt32.self)
            // Versions come before the checksum: a newer header may lay out
            // its other fields differently, and deserves a version message.
            if readVersion > FileLayout.currentVersion {
                throw LogStoreError(.unsupportedFormatVersion, "\(path) needs a reader of format version \(readVersion) or later (written as version \(writeVersion)); this LogStore reads versions up to \(FileLayout.currentVersion): open it with a newer LogStore", path: path, offset: 10)
            }
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: FileLayout.headerChecksumOffset, as: UInt32.self))
            let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<FileLayout.headerChecksumOffset]))
            guard stored == computed else {
                throw LogStoreError(.corruptHeader, "the header of \(path) fails its checksum (stored \(hex(stored)), computed \(hex(computed))), so its store UUID and creation time cannot be trusted and the file is not opened; restore the file from a backup", path: path, offset: 0)
            }
            guard headerSize == UInt32(FileLayout.headerSize) else {
                throw LogStoreError(.corruptHeader, "the header of \(path) declares a size of \(headerSize) bytes where format version \(writeVersion) has \(FileLayout.headerSize); the file was not written by LogStore, or by a broken build of it: restore it from a backup", path: path, offset: 12)
            }
            let uuidBytes = try reader.readBytes(count: 16)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: uuidBytes) }
            let micros = try reader.readFixed(Int64.self)
            // Version 1 leaves these bytes reserved; only a version 2 file
            // (one that needs a version 2 reader) has a snapshot.
            let snapshotOffset = try reader.readFixed(UInt64.self)
            var header = FileHeader(storeID: UUID(uuid: uuid), createdAt: Date(timeIntervalSince1970: TimeInterval(micros) / 1_000_000), version: readVersion)
            header.writeVersion = writeVersion
            header.readVersion = readVersion
            // Any other value there is read as unset: older writers left
            // these bytes reserved, and never checked them.
            header.isReplaced = bytes[FileLayout.replacedField] == 1
            if readVersion >= FileLayout.pagedSnapshotVersion {
                // The base root, or 0 in a file without a snapshot.
                guard snapshotOffset == 0 || snapshotOffset >= UInt64(FileLayout.pagedFramesStart) else {
                    throw LogStoreError(.corruptHeader, "the header of \(path) places its snapshot's root at offset \(snapshotOffset), before the first frame at \(FileLayout.pagedFramesStart); restore the file from a backup", path: path, offset: UInt64(FileLayout.snapshotOffsetField))
                }
                header.snapshotRootOffset = snapshotOffset == 0 ? nil : snapshotOffset
            } else if readVersion >= FileLayout.snapshotVersion && !(readVersion >= FileLayout.decimalVersion && snapshotOffset == 0) {
                // From version 3 a file without a snapshot holds 0 there.
                guard snapshotOffset >= UInt64(FileLayout.headerSize) else {
                    throw LogStoreError(.corruptHeader, "the header of \(path) says the file starts with a snapshot but places its index at offset \(snapshotOffset), inside the header; restore the file from a backup", path: path, offset: UInt64(FileLayout.snapshotOffsetField))
                }
                header.snapshotIndexOffset = snapshotOffset
            }
            return header
        } catch let failure as DecodeFailure {
            throw LogStoreError(.corruptHeader, "the header of \(path) does not decode: \(failure.reason)", path: path, offset: 0)
        } catch let error as LogStoreError {
            throw error
        } catch {
            throw LogStoreError(.corruptHeader, "the header of \(path) does not decode", path: path, offset: 0)
        }
    }

    /// Whether this code may append to the file: a newer writer may have
    /// added frame kinds or fields this code would not keep up to date.
    var isWritableByThisVersion: Bool { writeVersion <= FileLayout.currentVersion }

    /// Whether the file's transactions may hold delete runs (FORMAT.md
    /// §5.1): a file that keeps readers older than version 7 out.
    var holdsDeleteRuns: Bool { readVersion >= FileLayout.deleteRunVersion }
}

/// Microseconds since 1970-01-01T00:00:00Z, the time unit of the format.
func Microseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
}

func hex<T: FixedWidthInteger>(_ value: T) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, MemoryLayout<T>.size * 2 - digits.count)) + digits
}
