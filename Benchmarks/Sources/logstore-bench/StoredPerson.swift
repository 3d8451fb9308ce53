// A person as an engine gives it back, so two engines' answers can be compared value by value.

import Foundation
import GRDB
import LogStore

/// One person as an engine gives it back, or as it was written, by key:
/// what two engines' answers are compared by, every value exactly (both
/// store the date as the same double).
struct StoredPerson: PersonFields, Equatable, CustomStringConvertible {
    var key: Int64
    var values: PersonValues

    init(key: Int64, _ values: PersonValues) {
        self.key = key
        self.values = values
    }

    /// A copy of `person`'s values (its context must be alive), keyed by
    /// `key`, or by its own key.
    init(_ person: BenchPerson, key: Int64? = nil) {
        self.init(key: key ?? person.key, person.values)
    }

    init(_ record: some PersonFields, key: Int64? = nil) {
        self.init(key: key ?? record.key, record.values)
    }

    var firstName: String { values.firstName }
    var lastName: String { values.lastName }
    var age: Int64 { values.age }
    var orderingValue: Double { values.orderingValue }
    var dateCreated: Date { values.dateCreated }

    var description: String {
        "#\(key) \(values.firstName) \(values.lastName), age \(values.age), ordering \(values.orderingValue), created \(values.dateCreated.timeIntervalSinceReferenceDate)"
    }

    // MARK: - Reading back

    /// The people at `keys`, in that order, read from `store` in a fresh context.
    static func read(_ keys: [Int64], from store: Store) throws -> [StoredPerson] {
        let objects = store.newContext()
        return try zip(keys, AppWritesData.ids(keys, in: store)).map { key, id in
            StoredPerson(try objects.existingObject(with: id) as! BenchPerson, key: key)
        }
    }

    /// The people at `keys`, in that order, read from `database`.
    static func read(_ keys: [Int64], from database: GRDBPeople) throws -> [StoredPerson] {
        try database.writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM person WHERE id = ?")
            return try keys.map { key in
                guard let record = try GRDBPerson.fetchOne(statement, arguments: [key]) else {
                    throw BenchmarkError("SQLite has no person \(key)")
                }
                return StoredPerson(record, key: key)
            }
        }
    }

    /// The inserted people (see ``AppWritesData/insertedOrderingBase``) in
    /// `store`, by `orderingValue`, keys left out: each engine numbers its own rows.
    static func inserted(in store: Store) throws -> [StoredPerson] {
        let request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate(AppWritesData.insertedPredicate))
        return try store.newContext().fetch(request, as: BenchPerson.self)
            .map { StoredPerson($0, key: 0) }.sorted { $0.values.orderingValue < $1.values.orderingValue }
    }

    static func inserted(in database: GRDBPeople) throws -> [StoredPerson] {
        try database.writer.read { db in
            try GRDBPerson.fetchAll(db, sql: "SELECT * FROM person WHERE orderingValue >= ? ORDER BY orderingValue",
                                    arguments: [AppWritesData.insertedOrderingBase])
        }.map { StoredPerson($0, key: 0) }
    }

    /// Every person of `store`, by key.
    static func all(in store: Store) throws -> [StoredPerson] {
        // The context lives until the values are read: objects hold it weakly.
        let objects = store.newContext()
        return try objects.fetchAll(BenchPerson.self).map { StoredPerson($0) }.sorted { $0.key < $1.key }
    }

    /// Every person of `database`, by id.
    static func all(in database: GRDBPeople) throws -> [StoredPerson] {
        try database.writer.read { db in
            try GRDBPersonRow.fetchAll(db, sql: "SELECT * FROM person ORDER BY id").map { StoredPerson($0) }
        }
    }

    /// Throws unless `found` is `expected`, naming the first difference.
    static func requireEqual(_ found: [StoredPerson], _ expected: [StoredPerson], _ what: String) throws {
        guard found != expected else { return }
        guard found.count == expected.count else {
            throw BenchmarkError("\(what): \(found.count) people, not \(expected.count)")
        }
        let index = found.indices.first { found[$0] != expected[$0] }!
        throw BenchmarkError("\(what): person \(index + 1) of \(found.count) is \(found[index]), not \(expected[index])")
    }
}
