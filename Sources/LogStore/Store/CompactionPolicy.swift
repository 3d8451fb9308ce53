// When a store compacts its journal without being asked.

/// When a store compacts its journal by itself, in the background.
///
/// A compaction writes every live record into a new snapshot and drops the
/// history before it, so that the file and the time to open it follow the
/// live data rather than the number of saves. ``Store/compact(progress:)``
/// compacts on request under any policy.
public enum CompactionPolicy: Sendable, Hashable {
    /// Never by itself.
    case manual
    /// After a save leaves the journal after the snapshot larger than both
    /// `minimumJournalBytes` and `liveDataRatio` times the raw size of the
    /// live records. With the defaults (32 KiB, 0.5) the file stays under
    /// about twice the live data (the snapshot, compressed, plus at most
    /// half as much journal again), and a store whose whole history is under
    /// 32 KiB is never compacted. A compaction costs about as much as
    /// writing the live data once, so each one folds away at least half
    /// that much journal.
    case automatic(minimumJournalBytes: UInt64 = 32 << 10, liveDataRatio: Double = 0.5)

    /// Whether a journal of `journalBytes` after the snapshot is due for
    /// compaction, with `liveBytes` of live records.
    func isDue(journalBytes: UInt64, liveBytes: Int) -> Bool {
        guard case .automatic(let minimum, let ratio) = self else { return false }
        return journalBytes > minimum && Double(journalBytes) > ratio * Double(liveBytes)
    }
}
