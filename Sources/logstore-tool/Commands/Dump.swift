// `logstore-tool dump FILE`: every record, or those a predicate selects.

import ArgumentParser
import LogStore

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print records as JSON Lines, CSV or a table.",
        discussion: """
            Each record has its ID in URI form (logstore://STORE/Entity/pKEY), its attributes, \
            and its relationships as the IDs of their targets. Data and transformable values \
            are base64; dates are ISO 8601 in UTC. Records come in key order (the order they \
            were inserted). CSV and table print one entity: name it with --entity when the \
            store has several.
            """)

    @Argument(help: "The store file.")
    var file: String

    @Option(help: "Only records of this entity (default: every entity).")
    var entity: String?

    @Option(name: .customLong("where"), help: "Only records matching this predicate, in Core Data's format (needs --entity when the store has several).")
    var predicate: String?

    @Option(help: "jsonl (the default), csv or table.")
    var format: RecordFormat = .jsonl

    func run() throws {
        let store = try openStore(file)
        defer { store.close() }
        let entities: [EntityDescription] = try reporting { () throws(LogStoreError) in
            if let entity { return [try store.model.entity(named: entity)] }
            return store.model.entities
        }
        if entities.count > 1 && (format != .jsonl || predicate != nil) {
            let what = predicate != nil ? "--where" : "--format \(format.rawValue)"
            printError("logstore-tool: \(what) needs one entity, and \(file) has \(entities.count): add --entity with one of \(entities.map(\.name).joined(separator: ", "))")
            throw ExitStatus.usage
        }
        let filter = try predicate.map { format in try reporting { () throws(LogStoreError) in try ObjectPredicate(format) } }
        var printer = RecordPrinter(format: format, entity: "", columns: [])
        for entity in entities {
            let reader = RecordReader(store: store, entity: entity)
            printer = RecordPrinter(format: format, entity: entity.name, columns: reader.columns)
            try reporting { () throws(LogStoreError) in
                try reader.forEach(FetchRequest(entityName: entity.name, predicate: filter)) { id, values in
                    printer.row(id: id, values: values)
                }
            }
            printer.finish()
        }
    }
}
