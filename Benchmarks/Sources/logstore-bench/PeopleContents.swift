// Every person a store or database holds, in key order, boiled down to one
// digest, so a timed write is checked to have stored every value.

import GRDB
import LogStore

enum PeopleContents {
    /// The digest of `people` stored under keys 1, 2, 3… in order.
    static func expected(_ people: [PersonValues]) -> ResultDigest {
        digest(people.enumerated().map { (Int64($0.offset + 1), $0.element) })
    }

    /// The digest of the people in `store`, by key.
    static func of(_ store: Store) throws -> ResultDigest {
        // The context lives until the values are read: objects read through it.
        let objects = store.newContext()
        let people = try withExtendedLifetime(objects) {
            try objects.fetchAll(BenchPerson.self).map { ($0.key, $0.values) }
        }
        return digest(people.sorted { $0.0 < $1.0 })
    }

    /// The digest of the people in `database`, by id.
    static func of(_ database: GRDBPeople) throws -> ResultDigest {
        let rows = try database.writer.read { db in try GRDBPersonRow.fetchAll(db, sql: "SELECT * FROM person ORDER BY id") }
        return digest(rows.map { ($0.key, $0.values) })
    }

    /// Throws unless `found` is `expected`, naming the engine.
    static func check(_ engine: String, _ found: ResultDigest, _ expected: ResultDigest) throws {
        guard found == expected else { throw BenchmarkError("\(engine) holds other people than were written: \(found), expected \(expected)") }
    }

    private static func digest(_ people: [(Int64, PersonValues)]) -> ResultDigest {
        var digest = ResultDigest()
        for (key, values) in people {
            digest.add(key)
            digest.add(values.firstName)
            digest.add(values.lastName)
            digest.add(values.age)
            digest.add(values.orderingValue)
            digest.add(values.dateCreated.timeIntervalSinceReferenceDate)
        }
        return digest
    }
}
