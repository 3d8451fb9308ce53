// Records as JSON Lines, CSV or a table, for dump and query.

import ArgumentParser
import LogStore

enum RecordFormat: String, ExpressibleByArgument, CaseIterable {
    case jsonl, csv, table
}

/// Prints rows of one entity's records: an ID and one value per column.
///
/// JSON Lines: one object per record, `{"id": URI, "entity": NAME, column: value, …}`.
/// CSV (RFC 4180): a header line `id,column,…`, then one line per record.
/// Table: aligned columns, long cells cut to 40 characters; it holds every
/// row until the end to size the columns, so prefer JSON Lines or CSV for
/// large dumps.
struct RecordPrinter {
    let format: RecordFormat
    let entity: String
    let columns: [String]
    private var output = BufferedOutput()
    private var tableRows: [[String]] = []
    private var headerWritten = false

    init(format: RecordFormat, entity: String, columns: [String]) {
        self.format = format
        self.entity = entity
        self.columns = columns
    }

    mutating func row(id: ObjectID, values: [Any?]) {
        switch format {
        case .jsonl:
            output.write { bytes in
                ValueText.append("{\"id\":", to: &bytes)
                ValueText.appendQuoted(id.uriString, to: &bytes)
                ValueText.append(",\"entity\":", to: &bytes)
                ValueText.appendQuoted(entity, to: &bytes)
                for (column, value) in zip(columns, values) {
                    bytes.append(UInt8(ascii: ","))
                    ValueText.appendQuoted(column, to: &bytes)
                    bytes.append(UInt8(ascii: ":"))
                    ValueText.appendJSON(value, to: &bytes)
                }
                ValueText.append("}\n", to: &bytes)
            }
        case .csv:
            if !headerWritten {
                output.write((["id"] + columns).map(Self.csvCell).joined(separator: ",") + "\r\n")
                headerWritten = true
            }
            let cells = [id.uriString] + values.map { ValueText.plain($0) }
            output.write(cells.map(Self.csvCell).joined(separator: ",") + "\r\n")
        case .table:
            tableRows.append(["\(entity)/p\(id.key)"] + values.map { Self.cut(ValueText.plain($0, shortIDs: true)) })
        }
    }

    /// Writes what is held back and flushes.
    mutating func finish() {
        if format == .csv && !headerWritten {
            output.write((["id"] + columns).map(Self.csvCell).joined(separator: ",") + "\r\n")
        }
        if format == .table {
            let header = ["id"] + columns
            var widths = header.map(\.count)
            for row in tableRows {
                for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
            }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { column, cell in
                    column == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
                }.joined(separator: "  ") + "\n"
            }
            output.write(line(header))
            output.write(line(widths.map { String(repeating: "-", count: $0) }))
            for row in tableRows { output.write(line(row)) }
            output.write("(\(tableRows.count) \(tableRows.count == 1 ? "record" : "records"))\n")
        }
        output.flush()
    }

    private static func csvCell(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func cut(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count <= 40 ? flat : String(flat.prefix(39)) + "…"
    }
}

/// Reads records of one entity through a context, a chunk at a time, so
/// memory holds one chunk of objects however many records match.
struct RecordReader {
    let store: Store
    let entity: EntityDescription

    /// Attributes in the model's order, then relationships.
    var columns: [String] { entity.attributes.map(\.name) + entity.relationshipDefinitions.map(\.name) }

    /// Calls `body` with each record `request` fetches, in its order.
    func forEach(_ request: FetchRequest, _ body: (ObjectID, [Any?]) -> Void) throws(LogStoreError) {
        let context = store.newContext()
        let ids = try context.fetchIDs(request)
        let attributes = entity.attributes.map(\.name)
        let relationships = entity.relationshipDefinitions
        for chunkStart in stride(from: 0, to: ids.count, by: 4096) {
            for id in ids[chunkStart..<min(chunkStart + 4096, ids.count)] {
                let object = try context.object(with: id)
                var values: [Any?] = []
                values.reserveCapacity(attributes.count + relationships.count)
                for name in attributes { values.append(try object.value(forKey: name)) }
                for relationship in relationships {
                    let targets = try object.objectIDs(forRelationshipNamed: relationship.name)
                    values.append(relationship.isToMany ? targets : targets.first)
                }
                body(id, values)
            }
            // Objects of records already printed are not needed again.
            context.reset()
        }
    }
}
