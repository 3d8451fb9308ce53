// When a save is durable: the per-store durability policy.

/// When an acknowledged save is on stable storage.
///
/// | mode | `append` returns after | a power cut loses |
/// |---|---|---|
/// | ``fsyncEveryCommit`` | its frame is written and `fdatasync` returned | nothing acknowledged |
/// | ``groupCommit(window:)`` | an `fdatasync` that began after its frame was written returned | nothing acknowledged |
/// | ``deferredToOS`` | its frame is written to the OS | the saves of the last few seconds (the kernel's writeback delay, 30 s at most by default on Linux) |
///
/// In every mode a process crash (not a power cut) loses nothing acknowledged,
/// because the frame is in the kernel's page cache before `append` returns,
/// and a torn frame is never visible: recovery cuts it off.
///
/// After a power cut under ``groupCommit(window:)`` or ``deferredToOS``, the
/// disk may have kept a later unsynced frame and lost an earlier one. Every
/// frame records the last save its writer knew durable, so open sees that
/// no later frame vouches for the lost one: it cuts the hole and the frames
/// after it off, none of them acknowledged, and reports
/// ``RecoveryReport/Outcome/unsyncedFramesDiscarded`` (FORMAT.md §6, §7).
/// No salvage is needed; what remains is a prefix of the saves. Under
/// ``fsyncEveryCommit`` at most one frame is ever unsynced, so this cannot
/// happen. (Files of format version 3 or older record nothing; a hole in
/// them is refused as damage, as before.)
public enum Durability: Sendable, Hashable {
    /// `fdatasync` after every transaction (the default). Commits are
    /// serialized with their fsyncs, so throughput is one commit per disk flush.
    case fsyncEveryCommit
    /// Concurrent committers share one `fdatasync`. The first committer to
    /// need a flush leads: it waits, at most `window`, until about as many
    /// frames are waiting as the previous flush covered, then flushes
    /// everything written so far. Every `append` still returns only after its
    /// own frame is durable. A lone committer never waits for the window, so
    /// this costs nothing over ``fsyncEveryCommit`` when saves do not overlap.
    /// Use it when several threads save at once.
    case groupCommit(window: Duration)
    /// Never `fdatasync`; leave writeback to the operating system.
    case deferredToOS

    /// Group commit with a 1 ms gathering window.
    public static var groupCommit: Durability { .groupCommit(window: .milliseconds(1)) }
}
