// Fuzz target: the input bytes as the choices that build a store of items
// and fetch requests over them (QueryDifferential). Every plan that can
// answer a request, with each fast path on and off, as objects, IDs and a
// count, must agree with the objects filtered and sorted in memory by the
// one order of values; a disagreement is a crash that prints the request,
// every answer and the objects involved.

import Foundation

enum QueryPlansTarget {
    /// Small stores: libFuzzer wants many executions a second, and the
    /// edges of the value order need few items to show.
    static let size = QueryDifferential.Size(items: 12, requests: 4)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let path = StoreFileTarget.directory + "-query-plans.logstore"
        try? FileManager.default.removeItem(atPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var differential = QueryDifferential()
        do {
            try differential.run(Choices(bytes: bytes), size: size, at: path, label: "query-plans input of \(bytes.count) bytes")
        } catch {
            // Filling the store must work whatever the choices: a failure
            // there is a finding too.
            fatalError("query-plans: building the store failed: \(error)")
        }
        if let failure = differential.failures.first { fatalError("query plans disagree\n\(failure)") }
    }
}
