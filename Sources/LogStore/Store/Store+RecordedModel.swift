// Opening a store with the model recorded in its file, for tools.

import Foundation

extension Store {
    /// Opens the store at `path` with the model recorded in the file rather
    /// than the app's, for tools that do not have the app's code.
    ///
    /// Objects are plain ``ManagedObject``s, read and written by key. A
    /// transformable attribute reads as the `Data` its transformer made.
    /// Validation rules, derived attributes and fetched properties are the
    /// app's code, so they are absent. The recorded model is kept as it is:
    /// opening read-write never records a new one.
    ///
    /// - Parameter options: read-only and never creating a file by default.
    /// - Throws: `.modelMismatch` when the file records no model (it was
    ///   written with the ``Journal`` API alone); any error of
    ///   ``Journal/init(path:options:)``.
    public convenience init(
        recordedModelAt path: String, options: JournalOptions = JournalOptions(access: .readOnly, createIfMissing: false)
    ) throws(LogStoreError) {
        let journal = try Journal(path: path, options: options)
        let model: Model
        do throws(LogStoreError) {
            guard let schema = try Store.recordedSchema(in: journal) else {
                throw LogStoreError(.modelMismatch, "\(path) records no model: it was written with the Journal API, not through a Store, or the first save of a Store never completed, so its records have no entities to read; inspect its frames with \"logstore-tool info\" and \"logstore-tool history\"", path: path)
            }
            model = try Model(recorded: schema, path: path)
        } catch {
            journal.close()
            throw error
        }
        try self.init(journal: journal, model: model)
    }

    /// The model as the file records it: the recorded one for a store
    /// opened with ``init(recordedModelAt:options:)``, else the app's.
    public var storedSchema: StoredSchema { model.recordedSchema ?? StoredSchema(model) }

    /// The model recorded in the journal's file: the snapshot's, replaced by
    /// any recorded in the transactions after it (a lightweight migration).
    private static func recordedSchema(in journal: Journal) throws(LogStoreError) -> StoredSchema? {
        var schema: StoredSchema?
        if let index = journal.snapshotIndex, !index.schema.isEmpty {
            schema = try StoredSchema.decode(Data(index.schema), path: journal.path)
        }
        try journal.forEachTransaction { transaction in
            for change in transaction.changes where journal.name(of: change.recordID.entity) == Store.schemaEntity {
                schema = (try? recordedSchema(in: change, path: journal.path)) ?? schema
            }
        }
        return schema
    }

    /// The model a change to the reserved schema record writes, if it writes one.
    static func recordedSchema(in change: RecordChange, path: String) throws(LogStoreError) -> StoredSchema? {
        switch change {
        case .insert(_, let fields), .update(_, let fields):
            guard case .data(let data)? = fields.first?.value else { return nil }
            return try StoredSchema.decode(data, path: path)
        case .delete, .deleteRun:
            return nil
        }
    }
}
