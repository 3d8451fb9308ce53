// `logstore-tool query FILE ENTITY PREDICATE`: a fetch, as an app would make it.

import ArgumentParser
import LogStore

struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch the records of an entity that match a predicate.",
        discussion: """
            PREDICATE uses the library's predicate language, Core Data's format: \
            "valueInDollars > 50 AND itemName BEGINSWITH[c] 'red'", "assetType.label == 'Jewelry'", \
            "TRUEPREDICATE". --explain prints how the fetch found its results (full scan, \
            index lookup, index order or relationship lookup) and how many records it examined.
            """)

    @Argument(help: "The store file.")
    var file: String

    @Argument(help: "The entity to fetch.")
    var entity: String

    @Argument(help: "The predicate, in Core Data's format.")
    var predicate: String

    @Option(name: .customLong("sort"), help: "Sort by KEY, or KEY:desc for descending; repeat for more keys.")
    var sortKeys: [String] = []

    @Option(help: "Return at most N records.")
    var limit: Int?

    @Flag(help: "Print only how many records match.")
    var count = false

    @Flag(help: "Print the plan the fetch used instead of the records.")
    var explain = false

    @Option(help: "table (the default), jsonl or csv.")
    var format: RecordFormat = .table

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        for key in sortKeys where key.isEmpty || key.hasPrefix(":") {
            throw ValidationError("--sort takes KEY or KEY:desc, not \"\(key)\"")
        }
    }

    func run() throws {
        let store = try openStore(file)
        defer { store.close() }
        let context = store.newContext()
        let request = try reporting { () throws(LogStoreError) in
            let description = try store.model.entity(named: entity)
            var request = FetchRequest(entityName: description.name, predicate: try ObjectPredicate(predicate), fetchLimit: limit ?? 0)
            request.sortDescriptors = try sortKeys.map { (key) throws(LogStoreError) in try Self.sortKey(key) }
            return request
        }
        if explain {
            let plan = try reporting { () throws(LogStoreError) in try context.explain(request) }
            print(plan.description)
        } else if count {
            print(try reporting { () throws(LogStoreError) in try context.count(for: request) })
        } else {
            let reader = RecordReader(store: store, entity: try reporting { () throws(LogStoreError) in try store.model.entity(named: entity) })
            var printer = RecordPrinter(format: format, entity: entity, columns: reader.columns)
            try reporting { () throws(LogStoreError) in
                try reader.forEach(request) { id, values in printer.row(id: id, values: values) }
            }
            printer.finish()
        }
    }

    /// `KEY`, `KEY:asc` or `KEY:desc`.
    static func sortKey(_ text: String) throws(LogStoreError) -> SortKey {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch parts.count == 2 ? parts[1].lowercased() : "asc" {
        case "asc": return SortKey(parts[0])
        case "desc": return SortKey(parts[0], ascending: false)
        case let other: throw LogStoreError(.invalidArgument, "--sort \(text): the direction \"\(other)\" is neither asc nor desc")
        }
    }
}
