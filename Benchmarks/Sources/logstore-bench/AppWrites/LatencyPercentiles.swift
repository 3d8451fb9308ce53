// Percentiles of measured latencies: what the slowest saves an app's user waits for look like.

/// The nearest-rank percentiles of a list of latencies, in seconds.
struct LatencyPercentiles {
    private let sorted: [Double]

    init(_ latencies: [Double]) { sorted = latencies.sorted() }

    var count: Int { sorted.count }

    /// The smallest latency that `fraction` of them are at or below.
    func at(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// The report's percentiles, by name.
    static let reported: [(name: String, fraction: Double)] = [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999), ("max", 1)]
}
