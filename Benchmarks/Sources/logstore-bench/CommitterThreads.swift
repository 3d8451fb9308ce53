// Threads that commit in a loop at the same time, for group commit.

import Foundation
import LogStore
import Synchronization

/// Runs `count` threads that each call `commit` in a loop until `duration`
/// has passed. Threads, not tasks: committers block in `fdatasync`, and the
/// point is that they do so at the same time, which a 2-core pool would not allow.
enum CommitterThreads {
    /// The sample's work is the number of commits of all threads together.
    /// `commit` gets the thread's number and its own count of commits so far.
    static func run(
        count: Int, for duration: Duration, _ commit: @escaping @Sendable (_ thread: Int, _ iteration: Int) throws(LogStoreError) -> Void
    ) throws -> Sample {
        let tally = Tally()
        let finished = DispatchGroup()
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + duration
        for thread in 0..<count {
            finished.enter()
            Thread {
                var commits = 0
                do throws(LogStoreError) {
                    while clock.now < deadline {
                        try commit(thread, commits)
                        commits += 1
                    }
                } catch {
                    tally.record(error)
                }
                tally.add(commits)
                finished.leave()
            }.start()
        }
        finished.wait()
        let seconds = (clock.now - start).seconds
        let (commits, failure) = tally.result
        if let failure { throw failure }
        return Sample(work: Double(commits), seconds: seconds)
    }

    /// The threads' commits and their first error.
    private final class Tally: Sendable {
        private let state = Mutex<(commits: Int, failure: LogStoreError?)>((0, nil))

        func add(_ commits: Int) { state.withLock { $0.commits += commits } }
        func record(_ error: LogStoreError) { state.withLock { $0.failure = $0.failure ?? error } }
        var result: (Int, LogStoreError?) { state.withLock { ($0.commits, $0.failure) } }
    }
}
