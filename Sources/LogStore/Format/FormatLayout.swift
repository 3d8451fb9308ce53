// The sizes, magics and limits of the file format: FORMAT.md §2–§4, in one place.

/// Constants of the on-disk format that every reader and writer shares.
///
/// Change nothing here without bumping ``FileLayout/currentVersion`` and
/// updating FORMAT.md: files already written depend on these numbers.
enum FileLayout {
    /// "LOGSTORE" in ASCII.
    static let magic: [UInt8] = Array("LOGSTORE".utf8)
    /// The newest format this code reads and writes: version 2 adds the
    /// snapshot (FORMAT.md §11), version 3 the decimal value type (§5.2),
    /// version 4 the durable distance in transaction frames (§3, §6) and
    /// self-describing snapshot blocks (§11.2), version 5 the paged
    /// snapshot (§13), version 6 runs of keys in a paged table's leaves
    /// (§13.5), version 7 delete runs in transactions (§5.1).
    static let currentVersion: UInt16 = 7
    /// The version of every file this code creates empty (a new store, and
    /// the store a salvage writes): the current one, so that its first
    /// saves may delete runs of keys (FORMAT.md §5.1). Its frames start at
    /// ``pagedFramesStart``, after the anchor pages (§13.2).
    static let createdVersion: UInt16 = 7
    /// The version of a compaction's file written as one index frame
    /// (FORMAT.md §11), which the tests of version 4 files still write.
    static let indexFrameVersion: UInt16 = 4
    /// The first version whose header may place a snapshot.
    static let snapshotVersion: UInt16 = 2
    /// The first version with decimal values; before it a Decimal
    /// attribute's value was stored as its text.
    static let decimalVersion: UInt16 = 3
    /// The first version whose transaction frames record what their writer
    /// knew durable (FORMAT.md §3); a writer appending to an older file
    /// leaves the field 0, as that version's readers require.
    static let durableClaimVersion: UInt16 = 4
    /// The first version whose snapshots are known to name each
    /// reference's destination entity (FORMAT.md §12.2); object-layer
    /// compactions before it wrote the source entity there.
    static let destinationReferenceVersion: UInt16 = 4
    /// The first version whose snapshot blocks start with a copy of what the
    /// index says of every block (FORMAT.md §11.2), so that a damaged index
    /// can be rebuilt from them.
    static let selfDescribingBlockVersion: UInt16 = 4
    /// The first version whose snapshot is paged (FORMAT.md §13): its
    /// header names a root frame, not an index frame.
    static let pagedSnapshotVersion: UInt16 = 5
    /// The version a compaction's paged snapshot is written as: its
    /// tables' leaves may hold runs of keys (FORMAT.md §13.5, version 6 on),
    /// which a version 5 reader would take for damage, and its transactions
    /// delete runs (§5.1), which a version 6 reader would.
    static let pagedWriteVersion: UInt16 = 7
    /// The first version whose transactions may hold delete runs (FORMAT.md
    /// §5.1, change tag 4): a writer writes them only into a file whose
    /// readVersion is at least this, and a reader takes one in an older
    /// file for damage.
    static let deleteRunVersion: UInt16 = 7
    /// Where a version 2 header keeps the offset of the snapshot index
    /// frame, and a version 5 header the base root's (FORMAT.md §13.2).
    static let snapshotOffsetField = 40
    /// Where the frames of a version 5 file start: after the header's page
    /// and the two anchor pages (FORMAT.md §13.2).
    static let pagedFramesStart = 0x3000
    /// The size of the file header, in bytes.
    static let headerSize = 64
    /// Where the header's CRC32C sits: it covers the bytes before it.
    static let headerChecksumOffset = 60
    /// The header byte a compaction sets to 1 in the file it renamed a new
    /// one over (FORMAT.md §2, §11.5), in what were reserved bytes.
    static let replacedField = 48
}

/// Constants of the frame header (FORMAT.md §3).
enum FrameLayout {
    /// "LSFR" in ASCII, the first four bytes of every frame.
    static let magic: UInt32 = 0x5246_534C
    /// magic 4, crc 4, stored size 4, raw size 4, sequence 8, timestamp 8,
    /// kind 1, codec 1, flags 2, durable distance 4 (reserved before
    /// version 4).
    static let headerSize = 40
    /// Where a transaction frame records its durable distance (§3).
    static let durableDistanceOffset = 36
    /// The checksum covers the header from this offset on, then the payload.
    static let checksummedHeaderStart = 8
    /// The largest payload a frame may declare, stored or raw. A larger
    /// declared size is damage, never an allocation: a reader checks it
    /// before allocating anything.
    static let maxPayloadSize = 256 << 20
    /// LZ4 cannot expand data by more than this factor when decompressing
    /// (a match can copy at most 255 bytes per input byte, and a little
    /// slack for the final literals), so a raw size beyond it is a lie.
    static let maxCompressionRatio = 255
    /// Flags bit 0: the payload begins with a store dictionary (§5.3).
    static let carriesDictionaryFlag: UInt16 = 1
    /// A store dictionary holds 1 to this many bytes (LZ4 uses at most 64 KiB).
    static let maxDictionarySize = 64 << 10
}

/// Constants of the snapshot (FORMAT.md §11).
enum SnapshotLayout {
    /// The raw size a block is filled to before it is compressed and
    /// written (a record is never split, so a block can exceed it by one
    /// record).
    static let defaultBlockSize = JournalOptions.defaultSnapshotBlockSize
}
