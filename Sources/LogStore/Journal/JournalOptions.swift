// How a journal is opened: access, durability, creation and recovery.

/// Options for opening a ``Journal``.
public struct JournalOptions: Sendable, Hashable {
    /// Whether the journal may write.
    public enum Access: Sendable, Hashable {
        /// Take the writer's lock, repair a torn tail, and accept appends.
        case readWrite
        /// Read without locking or changing the file. Works while another
        /// journal, in this process or another, writes: it then reads only
        /// the transactions that frames record as durable, never one the
        /// writer could still cut off after a failed flush, so it may lag
        /// the newest saves (``RecoveryReport/framesNotYetDurable`` says by
        /// how many; FORMAT.md §7). With no writer it reads every whole
        /// frame, as a writer's open would keep them.
        case readOnly
    }

    /// What to do when the file is damaged (a bad frame with valid frames after it).
    public enum RecoveryMode: Sendable, Hashable {
        /// Refuse to open, with a `.corruptFrame` error naming the offset.
        case strict
        /// Keep every transaction before the damage. When opened read-write,
        /// the bytes from the damage on are first copied to a file named
        /// `PATH.damaged-OFFSET` next to the store, then cut off.
        case salvage
    }

    /// How appended payloads are stored. Reading needs no option: every
    /// frame names its own codec, so a file can mix both.
    public enum Compression: Sendable, Hashable {
        /// LZ4 block compression, kept when it saves bytes (the default).
        case lz4
        /// Store payloads as they are. LZ4 compresses text-like records to
        /// roughly two thirds, but on a slow CPU it costs more time than
        /// writing the bytes it saves (BENCHMARKS.md §1): choose this for
        /// saves of incompressible data, or when write throughput matters
        /// more than file size.
        case none
    }

    /// Read-write (the default) or read-only.
    public var access: Access
    /// When saves are durable; see ``Durability``.
    public var durability: Durability
    /// Create the file when it does not exist (read-write only).
    public var createIfMissing: Bool
    /// Strict (the default) or salvage.
    public var recoveryMode: RecoveryMode
    /// Permission bits for a file this journal creates (owner only by
    /// default). A compaction's new file takes the store file's own mode,
    /// owner, group and extended attributes instead.
    public var filePermissions: UInt16
    /// LZ4 (the default) or none, for frames this journal appends and the
    /// snapshots its compactions write.
    public var compression: Compression
    /// When a store compacts its journal by itself; see ``CompactionPolicy``.
    public var compaction: CompactionPolicy
    /// The raw size of a snapshot block: larger blocks compress better and
    /// cost less memory per record once open, smaller ones make reading one
    /// record from the disk cheaper, since a block is read and checked
    /// whole. ``defaultSnapshotBlockSize`` unless set. Every block repeats
    /// the names of the model's entities and slots, so a compaction fills
    /// blocks to at least three times that context: a model with many
    /// names gets larger blocks.
    public var snapshotBlockSize: Int
    /// 4 KiB, SQLite's page size: a lookup after a cold open reads and
    /// decodes one block for one record, and BENCHMARKS.md (issue 24)
    /// measures 4 against 16 KiB.
    public static let defaultSnapshotBlockSize = 4 << 10
    /// The most memory, in bytes, that decoded snapshot blocks may take;
    /// nil (the default) for 1/16 of physical memory, between 16 MiB and 1 GiB.
    public var blockCacheCapacity: Int?
    /// How many bytes of file space the writer reserves ahead of its last
    /// frame (`posix_fallocate`), ``defaultPreallocationSize`` unless set;
    /// 0 reserves none.
    ///
    /// A save written into reserved space does not change the file's size,
    /// so its `fdatasync` need not commit one; an append past the end makes
    /// the file system's journal commit the new size every time. While the store is open, the file ends in up to
    /// this many zero bytes; ``Journal/close()`` cuts them off, and after a
    /// crash the next open finds them and writes its frames into them
    /// (FORMAT.md §7, *Reserved space*). Where reserving fails (a full disk,
    /// a file system without allocation), saves append as without it.
    public var preallocationSize: Int
    /// 1 MiB: one reservation per several thousand small saves, and no
    /// more than that left unused in a file that stays open.
    public static let defaultPreallocationSize = 1 << 20
    /// How compactions lay out their snapshot: the paged layout (format
    /// version 7, FORMAT.md §13); tests choose version 4's index frame or
    /// version 5's leaves here, to write files of those versions.
    var snapshotFormat = SnapshotFormat.paged
    /// The payload size a compaction fills index blocks to; tests choose
    /// less, for tables of many leaves from few records.
    var snapshotIndexBlockSize = SnapshotWriter.indexBlockSize

    /// Creates options; every parameter has the safe default.
    public init(
        access: Access = .readWrite, durability: Durability = .fsyncEveryCommit,
        createIfMissing: Bool = true, recoveryMode: RecoveryMode = .strict, filePermissions: UInt16 = 0o600,
        compression: Compression = .lz4, compaction: CompactionPolicy = .automatic(),
        snapshotBlockSize: Int = defaultSnapshotBlockSize, blockCacheCapacity: Int? = nil,
        preallocationSize: Int = defaultPreallocationSize
    ) {
        self.access = access
        self.durability = durability
        self.createIfMissing = createIfMissing
        self.recoveryMode = recoveryMode
        self.filePermissions = filePermissions
        self.compression = compression
        self.compaction = compaction
        self.snapshotBlockSize = snapshotBlockSize
        self.blockCacheCapacity = blockCacheCapacity
        self.preallocationSize = max(0, preallocationSize)
    }
}

/// What opening a journal found and repaired.
public struct RecoveryReport: Sendable, Hashable {
    /// What open did about the end of the file.
    public enum Outcome: Sendable, Hashable {
        /// Every byte from the first frame on belongs to a valid frame, or to
        /// space reserved after the last one (``RecoveryReport/reservedByteCount``).
        case clean
        /// An append was cut short (a crash or power cut mid-save): its bytes
        /// were cut off (read-write) or ignored (read-only). Only that
        /// unacknowledged transaction is gone.
        case tornTail
        /// A power cut left a hole among frames that were written but not
        /// yet durable (the disk wrote some pages of a flush and not
        /// others), and valid frames after it. No later frame claims the
        /// missing one durable (FORMAT.md §6), so no save was acknowledged
        /// from there on: those bytes were cut off (read-write) or ignored
        /// (read-only), as a torn tail is. ``RecoveryReport/droppedByteCount``
        /// says how much, for a log line such as "N bytes of unsynced
        /// frames discarded after a power cut".
        case unsyncedFramesDiscarded
        /// Salvage mode met damage and kept what came before it.
        case salvaged
    }

    public var outcome: Outcome
    /// Valid transaction frames in the file after recovery.
    public var frameCount: Int
    /// Where the dropped bytes started, when any were dropped.
    public var droppedOffset: UInt64?
    /// How many bytes at the end were cut off or ignored.
    public var droppedByteCount: UInt64
    /// Why the bytes were dropped, for logs.
    public var reason: String?
    /// In salvage mode, the file holding the bytes cut off (for damage in
    /// the snapshot, the damaged file itself, which salvage rewrote, with
    /// its replaced mark set: open it read-only, or recover it).
    public var preservedDamagePath: String?
    /// Read-only, while a writer holds the store: the whole, valid frames
    /// at the end that no frame yet records as durable, which this journal
    /// leaves out because the writer could still cut them off after a
    /// failed flush (FORMAT.md §7). 0 otherwise. Such a reader may lag the
    /// newest saves: under `.fsyncEveryCommit` by the last one, under
    /// `.deferredToOS` by every save since the writer opened or compacted.
    public var framesNotYetDurable = 0
    /// Zero bytes after the last frame: space a writer reserved for its
    /// next frames and did not cut off, because it did not close (a crash,
    /// or a live writer seen by a read-only open). Neither data nor damage:
    /// a read-write open keeps them and writes its frames into them
    /// (FORMAT.md §7, *Reserved space*). The outcome is then `.clean`.
    public var reservedByteCount: UInt64 = 0
    /// In salvage mode, the records lost with damaged snapshot blocks.
    public var lostRecords: [LostRecords] = []

    static func clean(frames: Int) -> RecoveryReport {
        RecoveryReport(outcome: .clean, frameCount: frames, droppedOffset: nil, droppedByteCount: 0)
    }
}
