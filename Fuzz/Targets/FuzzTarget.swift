// The fuzz targets by name: what each feeds its input to, and where its seed
// corpus lives. The executables in Fuzz/Entry hand libFuzzer's inputs to
// these; the regression tests replay the corpus through the same functions.

import Foundation

/// One fuzz target: a function that takes any bytes and must not crash.
///
/// Each returns normally for every input; errors are the expected answer to
/// bad input. A trap (a broken invariant, an out-of-bounds read caught by
/// AddressSanitizer, an allocation over libFuzzer's limit) is a finding.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The bytes as a store file: info, verify, open read-only with the model
    /// it records and read every value, and recover (whose output must verify).
    case storeFile = "store-file"
    /// The bytes as the choices that change a seed store's content (keys,
    /// counts, offsets, values, names, the snapshot index) and then make
    /// every checksum match: open, fetch everything, save, compact, reopen.
    case storeContent = "store-content"
    /// The bytes as one of the file format's structures, picked by the first byte.
    case decoders
    /// The bytes as a predicate format string, fetched three ways that must agree.
    case predicate
    /// The bytes as the choices that make a store of items and fetch
    /// requests over it; every plan and fast path must agree with the
    /// objects filtered and sorted in memory.
    case queryPlans = "query-plans"

    /// Feeds one input to the target.
    public func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .storeFile: StoreFileTarget.run(bytes)
        case .storeContent: StoreContentTarget.run(bytes)
        case .decoders: DecodersTarget.run(bytes)
        case .predicate: PredicateTarget.run(bytes)
        case .queryPlans: QueryPlansTarget.run(bytes)
        }
    }

    /// The target `LOGSTORE_FUZZ_TARGET` names, as scripts/fuzz sets it
    /// for libFuzzer (whose command line is its own); stops with the
    /// choices when it names none.
    public static func fromEnvironment() -> FuzzTarget {
        let name = ProcessInfo.processInfo.environment["LOGSTORE_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("set LOGSTORE_FUZZ_TARGET to one of \(allCases.map(\.rawValue).joined(separator: ", ")); it is \(name.isEmpty ? "unset" : "'\(name)'")")
        }
        return target
    }

    /// The seed corpus, relative to the package root.
    public var corpusDirectory: String { "Fuzz/Corpus/\(rawValue)" }

    /// Inputs that once crashed this target, relative to the package root;
    /// replayed by the tests so the bug stays fixed.
    public var regressionsDirectory: String { "Fuzz/Regressions/\(rawValue)" }
}
