// Aggregates over stored values: the @sum, @avg, @min and @max of key paths
// and of dictionary results.

import Foundation

/// Aggregates of stored values: `@sum`, `@avg`, `@min`, `@max`.
enum Aggregation {
    static func aggregate(_ kind: KeyPathComponent, _ values: [StoredValue]) -> StoredValue {
        let present = values.filter { $0 != .null }
        switch kind {
        case .sum:
            // Integers add as integers; a sum past Int64 continues in
            // floating point rather than wrap (SQLite's total() rule).
            var total: Int64 = 0
            var integral = true
            for value in present {
                guard let integer = value.integer else { integral = false; break }
                let (sum, overflow) = total.addingReportingOverflow(integer)
                if overflow { integral = false; break }
                total = sum
            }
            if integral { return .int64(total) }
            if let sum = decimalSum(present) { return .decimal(sum) }
            return .double(present.reduce(0) { $0 + ($1.number ?? 0) })
        case .average:
            guard !present.isEmpty else { return .null }
            if let sum = decimalSum(present) { return .decimal(sum / Decimal(present.count)) }
            return .double(present.reduce(0) { $0 + ($1.number ?? 0) } / Double(present.count))
        case .minimum:
            return present.min { StoredValue.sortOrder($0, $1) == .orderedAscending } ?? .null
        case .maximum:
            return present.max { StoredValue.sortOrder($0, $1) == .orderedAscending } ?? .null
        case .count:
            return .int64(Int64(values.count))
        case .key:
            return .null
        }
    }

    /// The exact sum of decimals (and integers among them), or nil when
    /// there is no decimal or a value of another kind.
    private static func decimalSum(_ values: [StoredValue]) -> Decimal? {
        var sum = Decimal(0), sawDecimal = false
        for value in values {
            switch value {
            case .decimal(let number): sum += number; sawDecimal = true
            default:
                guard let integer = value.integer else { return nil }
                sum += Decimal(integer)
            }
        }
        return sawDecimal ? sum : nil
    }
}
