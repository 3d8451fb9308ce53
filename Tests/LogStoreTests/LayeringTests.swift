// Layers depend one way (Context and Query, the object layer that makes
// and fetches objects → Store → Model → Journal → Format | IO, and
// Inspection → Journal). The model names predicates (fetched properties)
// but nothing that runs them. One module
// cannot enforce that, so this test reads each folder's sources and fails
// when a lower layer names a type from a layer above it.

import Foundation
import Testing

@Suite("Layering")
struct LayeringTests {
    /// For each folder, type names it must not mention.
    static let forbidden: [(folder: String, names: [String])] = [
        ("Format", ["Journal", "JournalWriter", "FrameScanner", "JournalOptions", "SystemFile", "FileIO", "FileLock", "StoreInspector", "RecoveryReport", "Store", "Model", "ObjectContext", "ManagedObject", "EntityDescription", "ObjectID"]),
        ("IO", ["Journal", "JournalWriter", "FrameScanner", "JournalOptions", "StoreInspector", "FrameHeader", "TransactionPayload", "Store", "Model", "ObjectContext", "ManagedObject", "EntityDescription", "ObjectID"]),
        ("Journal", ["StoreInspector", "StoreInfo", "VerificationReport", "Store", "Model", "ObjectContext", "ManagedObject", "EntityDescription", "ObjectPredicate", "FetchRequest"]),
        ("Model", ["Store", "ObjectContext", "BackgroundContext", "CommittedState", "StateSnapshot", "FetchExecution", "PredicateBinder", "BoundPredicate", "PredicateEvaluation"]),
        ("Store", ["FetchExecution", "PredicateBinder", "BoundPredicate", "PredicateEvaluation", "RecordSubject", "ObjectSubject", "FetchRequest"]),
    ]

    @Test("No layer names a type from a layer above it", arguments: forbidden.map(\.folder))
    func lowerLayersDoNotReachUp(folder: String) throws {
        let names = Self.forbidden.first { $0.folder == folder }!.names
        let directory = PackageRoot.url.appendingPathComponent("Sources/LogStore/\(folder)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty, "no sources found in \(directory.path)")
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            for name in names {
                let pattern = try Regex("\\b\(name)\\b")
                #expect(!code.contains(pattern), "\(folder)/\(file) mentions \(name), a type from a layer above \(folder)")
            }
        }
    }
}
