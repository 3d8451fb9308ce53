// When a LogStore store has finished the work its saves started: a clock
// that stops when the last save returns would leave an automatic compaction
// running after it, outside the measurement.

import Foundation
import LogStore

extension Store {
    /// Returns once no automatic compaction is due or under way. A
    /// compaction folds the journal into the snapshot, so the policy stops
    /// finding the store due only when the one its saves started has
    /// finished. Throws when a compaction failed, or none finishes in
    /// `limit` (the policy only starts one after a save).
    func waitUntilQuiescent(limit: Duration = .seconds(600)) throws {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while isCompactionDue {
            if let error = lastCompactionError { throw BenchmarkError("a compaction the saves started failed: \(error)") }
            guard clock.now < deadline else { throw BenchmarkError("the store still needs compacting \(limit) after its last save") }
            usleep(200)
        }
    }
}
