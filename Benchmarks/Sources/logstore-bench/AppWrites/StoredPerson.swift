// A person as either engine gives it back, so the two answers can be compared field by field.

import Foundation
import GRDB
import LogStore

/// One person as read back from either engine or as written: what the two
/// engines' answers are compared by. Dates to the millisecond: LogStore
/// keeps seconds since 2001 and SQLite seconds since 1970 (or text to the
/// millisecond), and converting between them can move the last bit.
struct StoredPerson: Equatable, CustomStringConvertible {
    var key: Int64
    var firstName: String
    var lastName: String
    var age: Int64
    var orderingValue: Double
    var dateCreatedMilliseconds: Int64

    init(key: Int64, firstName: String, lastName: String, age: Int64, orderingValue: Double, dateCreated: Date?) {
        self.key = key
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
        self.orderingValue = orderingValue
        dateCreatedMilliseconds = Int64(((dateCreated?.timeIntervalSince1970 ?? 0) * 1000).rounded())
    }

    init(key: Int64, _ values: PersonValues) {
        self.init(key: key, firstName: values.firstName, lastName: values.lastName, age: values.age,
                  orderingValue: values.orderingValue, dateCreated: values.dateCreated)
    }

    init(_ person: BenchPerson, key: Int64) {
        self.init(key: key, firstName: person.firstName ?? "", lastName: person.lastName ?? "", age: person.age,
                  orderingValue: person.orderingValue, dateCreated: person.dateCreated)
    }

    init(_ record: GRDBPerson, key: Int64) {
        self.init(key: key, firstName: record.firstName, lastName: record.lastName, age: record.age,
                  orderingValue: record.orderingValue, dateCreated: record.dateCreated)
    }

    var description: String { "#\(key) \(firstName) \(lastName), age \(age), ordering \(orderingValue), created \(dateCreatedMilliseconds) ms" }

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
            .map { StoredPerson($0, key: 0) }.sorted { $0.orderingValue < $1.orderingValue }
    }

    static func inserted(in database: GRDBPeople) throws -> [StoredPerson] {
        try database.writer.read { db in
            try GRDBPerson.fetchAll(db, sql: "SELECT * FROM person WHERE orderingValue >= ? ORDER BY orderingValue",
                                    arguments: [AppWritesData.insertedOrderingBase])
        }.map { StoredPerson($0, key: 0) }
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
