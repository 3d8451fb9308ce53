// Fuzz target: arbitrary bytes as a store file, through everything that
// reads one: the tool's info and verify, a read-only open with the model the
// file records, a read-write open that salvages, and recover.

import Foundation
import LogStore

enum StoreFileTarget {
    /// A directory of this process's own, in memory where the system has
    /// one, so that each input costs no disk I/O.
    static let directory = scratchDirectory("store-file")

    /// A directory of this process's own for `target`'s files: the tests
    /// replay the targets side by side, and each clears its own.
    static func scratchDirectory(_ target: String) -> String {
        let parent = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let directory = parent + "/logstore-fuzz-\(getpid())-\(target)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let path = directory + "/input.logstore"
        clear()
        defer { clear() }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            fatalError("cannot write the fuzz input to \(path)")
        }
        _ = try? StoreInspector.info(path: path)
        _ = try? StoreInspector.verify(path: path)
        readEverything(path, options: JournalOptions(access: .readOnly, createIfMissing: false))

        // Recovery must always produce a store that verifies and opens.
        let recovered = directory + "/recovered.logstore"
        if let recovery = try? StoreInspector.recover(path: path, to: recovered) {
            mustBeSound(recovered, "the output of recover", modelLost: recovery.recordedModelLost)
        }

        // So must an open that salvages, on what it leaves behind.
        let salvage = JournalOptions(createIfMissing: false, recoveryMode: .salvage, compaction: .manual)
        if readEverything(path, options: salvage) {
            mustBeSound(path, "a store after an open with salvage")
        }
    }

    /// Opens the store with the model it records and reads every value of
    /// every record; returns whether it opened.
    @discardableResult
    static func readEverything(_ path: String, options: JournalOptions) -> Bool {
        guard let store = try? Store(recordedModelAt: path, options: options) else { return false }
        defer { store.close() }
        readObjects(of: store, in: store.newContext())
        return true
    }

    /// Fetches every object of each entity into `context` and reads each
    /// of its values, then hands the entity's objects to `body`.
    static func readObjects(of store: Store, in context: ObjectContext, _ body: (EntityDescription, [ManagedObject]) -> Void = { _, _ in }) {
        for entity in store.model.entities {
            guard let objects = try? context.fetchAll(entity.name) else { continue }
            for object in objects {
                for attribute in entity.attributes { _ = try? object.value(forKey: attribute.name) }
                for relationship in entity.relationshipDefinitions { _ = try? object.value(forKey: relationship.name) }
            }
            body(entity, objects)
        }
    }

    /// `modelLost`: the recovery said the recorded model was lost with the
    /// damage, so the store may not open without the app's.
    static func mustBeSound(_ path: String, _ what: String, modelLost: Bool = false) {
        let report: VerificationReport
        do { report = try StoreInspector.verify(path: path) } catch { fatalError("\(what) does not verify: \(error)") }
        precondition(report.isValid, "\(what) has problems: \(report.problems)")
        let readOnly = JournalOptions(access: .readOnly, createIfMissing: false)
        do {
            try Store(recordedModelAt: path, options: readOnly).close()
            precondition(readEverything(path, options: readOnly), "\(what) opens once but not twice")
        } catch where error.kind == .modelMismatch && (modelLost || holdsOnlyKeyReservations(path)) {
            // Sound, and empty but for the keys it keeps reserved: the
            // damage took the first save, which carried the model, so there
            // is no model to open it with.
        } catch {
            fatalError("\(what) does not open: \(error)")
        }
    }

    /// Whether the store at `path` has no snapshot and no transaction but
    /// key reservations (`__Keys`, FORMAT.md §5.5), which recover writes
    /// after damage so that keys the lost frames gave out stay given out.
    static func holdsOnlyKeyReservations(_ path: String) -> Bool {
        guard let journal = try? Journal(path: path, options: JournalOptions(access: .readOnly, createIfMissing: false)) else { return false }
        defer { journal.close() }
        guard journal.header.snapshotIndexOffset == nil, let transactions = try? journal.transactions() else { return false }
        return transactions.allSatisfy { $0.changes.allSatisfy { journal.name(of: $0.recordID.entity) == "__Keys" } }
    }

    /// Removes everything an input left: the copy, recover's output, and
    /// the `.damaged-OFFSET` copies a salvage makes.
    static func clear(_ directory: String = directory) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            unlink(directory + "/" + name)
        }
    }
}
