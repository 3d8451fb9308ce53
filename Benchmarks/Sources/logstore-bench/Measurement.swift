// Timing: a monotonic stopwatch, repeated runs in rounds, and the median of their rates.

/// What one run of a case did: units of work (bytes, commits) in some seconds.
struct Sample: Sendable {
    var work: Double
    var seconds: Double

    var rate: Double { work / seconds }
}

extension Sample {
    /// `work` units done by `body`, timed by the monotonic clock.
    static func timing(work: Double, _ body: () throws -> Void) rethrows -> Sample {
        Sample(work: work, seconds: try Stopwatch.seconds(body))
    }
}

/// The rates (work per second) of a case's repeated runs. Reports use the
/// median, which one run slowed by writeback or a neighbour's build does not move.
struct Rates: Sendable {
    let samples: [Double]

    var median: Double {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    var minimum: Double { samples.min() ?? .nan }
    var maximum: Double { samples.max() ?? .nan }
}

enum Stopwatch {
    /// The seconds `body` took, by the monotonic clock.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return (clock.now - start).seconds
    }

    /// Calls `body` until `duration` has passed; the sample's work is the
    /// number of calls.
    static func repeatFor(_ duration: Duration, _ body: () throws -> Void) rethrows -> Sample {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + duration
        var calls = 0
        var now = start
        while now < deadline {
            try body()
            calls += 1
            now = clock.now
        }
        return Sample(work: Double(calls), seconds: (now - start).seconds)
    }
}

/// Runs every case `repetitions` times in rounds (each case once per round,
/// in order), so that slow drift over the run (page-cache writeback, other
/// load on the machine) falls on every case alike. Returns one `Rates` per case.
func measureInRounds(repetitions: Int, _ cases: [() throws -> Sample]) throws -> [Rates] {
    var samples = Array(repeating: [Double](), count: cases.count)
    for _ in 0..<repetitions {
        for (index, run) in cases.enumerated() {
            samples[index].append(try run().rate)
        }
    }
    return samples.map(Rates.init(samples:))
}

/// Uses `value` in a way the optimizer cannot see through, so the loop that
/// computed it is not optimized away.
@inline(never) @_optimize(none)
func keep<T>(_ value: T) {}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
