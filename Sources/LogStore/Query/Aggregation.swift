// Aggregates over stored values: the @sum, @avg, @min and @max of key paths
// and of dictionary results.

import Foundation

/// Aggregates of stored values: `@sum`, `@avg`, `@min`, `@max`.
enum Aggregation {
    static func aggregate(_ kind: KeyPathComponent, _ values: [StoredValue]) -> StoredValue {
        let present = values.filter { $0 != .null }
        switch kind {
        case .sum:
            if present.allSatisfy(Comparing.isInteger) {
                return .int64(present.reduce(0) { $0 &+ (Comparing.integer($1) ?? 0) })
            }
            return .double(present.reduce(0) { $0 + (Comparing.number($1) ?? 0) })
        case .average:
            guard !present.isEmpty else { return .null }
            return .double(present.reduce(0) { $0 + (Comparing.number($1) ?? 0) } / Double(present.count))
        case .minimum:
            return present.min { Comparing.order($0, $1, []) == .orderedAscending } ?? .null
        case .maximum:
            return present.max { Comparing.order($0, $1, []) == .orderedAscending } ?? .null
        case .count:
            return .int64(Int64(values.count))
        case .key:
            return .null
        }
    }
}

