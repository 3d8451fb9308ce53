// What verify checks beyond frames and blocks: that the records, the
// relationship pointers and the secondary indexes kept beside them agree.

extension Store {
    /// What `logstore-tool verify` reports beyond frames: dangling or
    /// misnamed references, pointers and indexes that disagree with the records.
    var crossReferenceProblems: [String] {
        state.withLock { $0.crossReferenceProblems(entityName: journal.name(of:)) }
    }
}

extension CommittedState {
    /// Each disagreement between the records and what is derived from them:
    /// a stored relationship pointing at a record that does not exist, a
    /// reverse pointer or a secondary index entry the records do not imply
    /// (or one missing). A snapshot carries the pointers and indexes
    /// (FORMAT.md §11.3), so a damaged or forged index shows here.
    ///
    /// A reference also names its target's entity (FORMAT.md §12.2), which
    /// must be the relationship's destination: `entityName` resolves the
    /// symbol a reference carries.
    ///
    /// Decodes every record: it costs about as much as a full scan.
    func crossReferenceProblems(entityName: (Symbol) -> String?) -> [String] {
        var problems: [String] = []
        var rebuilt = CommittedState(model: model)
        for entity in model.entities {
            let table = tables[entity.index]
            var misnamed: [String: (count: Int, name: String, first: UInt64)] = [:]
            var mistyped: [String: (count: Int, type: String, first: UInt64)] = [:]
            // The rebuilt state needs only what indexes and pointers are made
            // of; copying every value (blobs included) would double the cost.
            let indexed = Set(indexes[entity.index].map(\.slot))
            let needed = (0..<(entity.attributes.count + entity.relationships.count)).map { slot in
                slot < entity.attributes.count ? indexed.contains(slot) : entity.relationships[slot - entity.attributes.count].isStored
            }
            let failedBefore = table.snapshot?.failedReadCount ?? 0
            defer {
                // A key-directory leaf that fails leaves its records out.
                do throws(LogStoreError) {
                    try table.snapshot?.checkNoReadFailed(since: failedBefore)
                } catch {
                    problems.append("the records of \(entity.name) could not all be read: \(error.message)")
                }
            }
            table.forEachKey { key in
                guard let record = table.record(key) else {
                    problems.append("\(entity.name)/p\(key) is listed but its values cannot be read")
                    return
                }
                for (slot, attribute) in entity.attributes.enumerated() where slot < record.values.count && !attribute.type.stores(record.values[slot]) {
                    mistyped[attribute.name, default: (0, record.values[slot].typeName, key)].count += 1
                }
                var values = record.values
                for slot in values.indices where slot >= needed.count || !needed[slot] { values[slot] = .null }
                rebuilt.apply(.insert(entity: entity, key: key, values: values), version: record.version)
                for (index, relationship) in entity.relationships.enumerated() where relationship.isStored {
                    let slot = entity.attributes.count + index
                    guard slot < record.values.count else { continue }
                    for target in Self.targets(record.values[slot]) where self.record(relationship.destination, target) == nil {
                        problems.append("\(entity.name)/p\(key).\(relationship.name) points to \(relationship.destination)/p\(target), which does not exist (its inverse \(relationship.destination).\(relationship.definition.inverse) cannot hold it)")
                    }
                    // A snapshot from before format version 4 may name the
                    // source there; the next compaction writes the destination.
                    for id in Self.recordIDs(record.values[slot]) where legacyReferenceDestinations == nil && entityName(id.entity) != relationship.destination {
                        misnamed[relationship.name, default: (0, entityName(id.entity) ?? "undeclared name \(id.entity.rawValue)", key)].count += 1
                    }
                }
            }
            for (attribute, found) in mistyped.sorted(by: { $0.key < $1.key }) {
                let type = entity.attributes.first { $0.name == attribute }.map { "\($0.type)" } ?? "?"
                problems.append("\(found.count) value(s) of \(entity.name).\(attribute) are of type \(found.type), not \(type), the first in \(entity.name)/p\(found.first); the object layer reads them as nil")
            }
            for (relationship, found) in misnamed.sorted(by: { $0.key < $1.key }) {
                let destination = entity.relationships.first { $0.name == relationship }?.destination ?? "?"
                problems.append("\(found.count) reference(s) of \(entity.name).\(relationship) name the entity \(found.name) instead of the destination \(destination), the first in \(entity.name)/p\(found.first); a reader that trusts the entity field would follow them to the wrong records")
            }
        }
        rebuilt.settleIndexes()
        for entity in model.entities {
            for (index, relationship) in entity.relationships.enumerated() where relationship.isStored {
                let slot = entity.attributes.count + index
                let kept = pointers[entity.name]?[slot] ?? [:], implied = rebuilt.pointers[entity.name]?[slot] ?? [:]
                if kept.filter({ !$0.value.isEmpty }) != implied.filter({ !$0.value.isEmpty }) {
                    problems.append("the inverse of \(entity.name).\(relationship.name) (\(relationship.destination).\(relationship.definition.inverse)) disagrees with the records: it is read from pointers that do not match what the records point to")
                }
            }
            for (kept, implied) in zip(indexes[entity.index], rebuilt.indexes[entity.index]) {
                // An index read a leaf at a time leaves out a leaf that fails
                // to read: that is the problem to report, not a disagreement.
                let snapshot = tables[entity.index].snapshot, failedBefore = snapshot?.failedReadCount ?? 0
                let entries = Self.entries(kept)
                do throws(LogStoreError) {
                    try snapshot?.checkNoReadFailed(since: failedBefore)
                } catch {
                    problems.append("the index of \(entity.name).\(entity.attributes[kept.slot].name) could not be read: \(error.message)")
                    continue
                }
                if entries != Self.entries(implied) {
                    problems.append("the index of \(entity.name).\(entity.attributes[kept.slot].name) disagrees with the records: fetches through it would return wrong results")
                }
            }
        }
        return problems
    }

    /// An index's entries: its groups of equal values, each group's keys in
    /// order, so that two indexes built in different orders compare equal
    /// when they hold the same entries.
    private struct Entries: Equatable {
        /// Compared by the index's own order, in which NaN equals NaN.
        var values: [SortedValue]
        var counts: [Int]
        var keys: [UInt64]
    }

    private static func recordIDs(_ value: StoredValue) -> [RecordID] {
        switch value {
        case .reference(let id): [id]
        case .references(let ids): ids
        default: []
        }
    }

    private static func entries(_ index: SecondaryIndex) -> Entries {
        let groups = index.groups()
        var keys = groups.keys
        var start = 0
        for count in groups.counts {
            keys[start..<(start + count)].sort()
            start += count
        }
        return Entries(values: groups.values.map(SortedValue.init), counts: groups.counts, keys: keys)
    }
}
