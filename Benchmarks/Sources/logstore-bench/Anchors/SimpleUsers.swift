// Anchor 2, the RealmVsSwiftData workload: create simple users (a UUID, a
// first and a last name, an age) in one transaction, fetch them all, delete
// them all, at 100,000 and 1,000,000 users.

import Foundation
import GRDB
import LogStore

/// A simple user as a LogStore object; the UUID is a `.uuid` attribute (16 bytes), indexed.
final class SimpleUser: ManagedObject {
    @Managed("uuid") var uuid: UUID?
    @Managed("firstName") var firstName: String?
    @Managed("lastName") var lastName: String?
    @Managed("age") var age: Int64
}

/// The same user as a GRDB record; GRDB stores a UUID as a 16-byte BLOB.
struct SimpleUserRecord: FetchableRecord {
    var uuid: UUID
    var firstName: String
    var lastName: String
    var age: Int64

    init(row: Row) {
        (uuid, firstName, lastName, age) = (row[0], row[1], row[2], row[3])
    }

    init(uuid: UUID, firstName: String, lastName: String, age: Int64) {
        (self.uuid, self.firstName, self.lastName, self.age) = (uuid, firstName, lastName, age)
    }
}

enum SimpleUsers {
    // The UUID is Realm's primary key in the original; here it is indexed on both sides.
    static let schema = [
        "CREATE TABLE IF NOT EXISTS user (uuid BLOB NOT NULL, firstName TEXT NOT NULL, lastName TEXT NOT NULL, age INTEGER NOT NULL)",
        "CREATE UNIQUE INDEX IF NOT EXISTS user_uuid ON user(uuid)",
    ]
    static let request = FetchRequest(entityName: "User")

    static func model() throws -> Model {
        try Model {
            Entity("User", SimpleUser.self) {
                Attribute("uuid", .uuid, indexed: true)
                Attribute("firstName", .string)
                Attribute("lastName", .string)
                Attribute("age", .int64, default: Int64(0))
            }
        }
    }

    static func make(_ count: Int, seed: UInt64) -> [SimpleUserRecord] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in
            let (high, low) = (random.next(), random.next())
            let uuid = withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { UUID(uuid: $0.load(as: uuid_t.self)) }
            return SimpleUserRecord(uuid: uuid, firstName: random.pick(PersonValues.firstNames),
                                    lastName: random.pick(PersonValues.lastNames), age: Int64(random.next() % 99))
        }
    }

    static func digest(_ users: [SimpleUserRecord]) -> ResultDigest {
        var digest = ResultDigest()
        for user in users {
            digest.add(user.uuid.uuidString)
            digest.add(user.firstName)
            digest.add(user.lastName)
            digest.add(user.age)
        }
        return digest
    }

    static func run(_ context: BenchmarkContext, into report: inout GroupReport) throws {
        let model = try model()
        for count in context.scaled(full: [100_000, 1_000_000], quick: [2_000, 10_000]) {
            try run(count, model: model, context, into: &report)
        }
        report.note("users: LogStore stores the UUID as a .uuid attribute (16 bytes), SQLite as GRDB's 16-byte BLOB; both index it (a unique index in SQLite), as Realm's primary key does in the original; users are created in one durable transaction, fetched all as objects or records (init(row:)) in insertion order, then deleted in one durable transaction: LogStore's context deletes each object, SQLite runs DELETE FROM user, which SQLite empties without visiting each row; a fresh file per round")
        report.note("users, batch: in the same LogStore round, after the context's delete, the users are created again by a BatchInsertRequest (values, no objects; one durable transaction per 10,000 users) and deleted by a BatchDeleteRequest (one durable transaction; consecutive keys deleted together are one delete run, FORMAT.md §5.1, in a file of format version 7); each beside SQLite's create and DELETE FROM user of its round. LogStore compacts once after the context's create (untimed, as SQLite checkpoints after its create: the default automatic policy would, in the background), which makes its file format version 7. File sizes: LogStore's file before and after the batch delete and after compact() (untimed); SQLite's database plus WAL before and after DELETE and after a TRUNCATE checkpoint (untimed)")
        report.published("RealmVsSwiftData, Realm, simple create 100,000 / 1,000,000 users",
                         "0.52 s / 5.05 s; delete all 0.0094 s / 0.0287 s (M2 Mac mini Pro, iOS simulator; github.com/Data-swift/RealmVsSwiftData README.md, code from github.com/jacobsapps/RealmVsSwiftData, article emergetools.com/blog/posts/swiftdata-vs-realm-performance-comparison)")
        report.published("RealmVsSwiftData, Core Data, simple create 100,000 / 1,000,000 users",
                         "58.87 s / 4749.45 s in the simulator; on an iPhone 14 Pro 0.90 s / 39.78 s, delete all 0.087 s / 3.88 s (same repository, README.md and core-data-results-14Pro/14Pro-core-data-01.txt)")
        report.published("RealmVsSwiftData, SwiftData, simple create 100,000 / 1,000,000 users",
                         "165.10 s / 10333.91 s in the simulator (same README.md)")
        report.published("RealmVsSwiftData, Lighter (SQLite), simple create 1,000,000 users", "7.85 s, delete all 10.05 s (same README.md)")
        report.note("users: the published workload's read is 'fetch users named Jane in age order', not a fetch of every user; no published figure exists for fetching them all")
    }

    private static func run(_ count: Int, model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let users = make(count, seed: 23)
        let expected = digest(users)
        let label = "\(count.formatted()) users"
        context.log("anchors: create, fetch and delete \(label)")
        var times: [[Double]] = Array(repeating: [], count: 8)  // LogStore create, fetch, delete, batch create, batch delete; GRDB create, fetch, delete
        var sizes: [[Double]] = Array(repeating: [], count: 6)  // LogStore, then SQLite: before, after the delete, after maintenance
        // A million users take about a minute a round on both sides: three rounds.
        for _ in 0..<(count >= 1_000_000 ? 3 : context.repetitions) {
            let logStore = try logStoreRound(users, model: model, expected: expected, context)
            for (index, seconds) in logStore.times.enumerated() { times[index].append(seconds) }
            for (index, bytes) in logStore.sizes.enumerated() { sizes[index].append(bytes) }
            let grdb = try grdbRound(users, expected: expected, context)
            for (index, seconds) in grdb.times.enumerated() { times[5 + index].append(seconds) }
            for (index, bytes) in grdb.sizes.enumerated() { sizes[3 + index].append(bytes) }
        }
        for (index, step) in ["create", "fetch all", "delete all"].enumerated() {
            let logStore = report.addSeconds("\(step) \(label): LogStore", times[index])
            let grdb = report.addSeconds("\(step) \(label): GRDB", times[5 + index])
            report.compareTimes("\(step) \(label)", grdb: grdb, logStore: logStore)
        }
        for (index, step) in ["create (batch insert)", "delete all (batch delete)"].enumerated() {
            let logStore = report.addSeconds("\(step) \(label): LogStore", times[3 + index])
            let grdb = report.addSeconds("\(step) \(label): GRDB", times[5 + 2 * index])
            report.compareTimes("\(step) \(label)", grdb: grdb, logStore: logStore)
        }
        for (engine, offset) in [("LogStore", 0), ("GRDB", 3)] {
            for (index, moment) in ["before deleting all", "after deleting all", "after maintenance"].enumerated() {
                let median = sizes[offset + index].sorted()[sizes[offset + index].count / 2]
                _ = report.add("file size \(moment) \(label): \(engine)", value: median / 1_048_576, unit: "MiB")
            }
        }
    }

    private static func bytes(_ paths: String...) -> Double {
        Double(paths.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) })
    }

    private static func logStoreRound(_ users: [SimpleUserRecord], model: Model, expected: ResultDigest, _ context: BenchmarkContext) throws -> (times: [Double], sizes: [Double]) {
        let path = context.scratch.freshPath("anchor-users.logstore")
        defer { context.scratch.remove(path) }
        let store = try Store(path: path, model: model, options: Anchor.durable)
        defer { store.close() }
        let create = try Stopwatch.seconds { try insert(users, into: store) }
        // Untimed, as SQLite's checkpoint after its create is: what the
        // default automatic policy does in the background after a save this
        // large, which the manual policy leaves to the app. It also makes
        // the file one of the newest format, whose saves delete runs of keys.
        try store.compact()
        let fetch = try Stopwatch.seconds { keep(try store.newContext().fetch(request).count) }
        let found = try store.newContext().fetch(request, as: SimpleUser.self).map {
            SimpleUserRecord(uuid: $0.uuid ?? UUID(), firstName: $0.firstName ?? "", lastName: $0.lastName ?? "", age: $0.age)
        }
        try Anchor.check(digest(found), expected, "LogStore's fetch of every user")
        let delete = try Stopwatch.seconds {
            let objects = store.newContext()
            for id in try objects.fetchIDs("User") { try objects.delete(try objects.object(with: id)) }
            try objects.save()
        }
        try Anchor.check(ResultDigest(count: try store.newContext().count("User")), ResultDigest(count: 0), "LogStore after deleting every user")
        let values = users.lazy.map { user -> [String: Any?] in
            ["uuid": user.uuid, "firstName": user.firstName, "lastName": user.lastName, "age": user.age]
        }
        let batchCreate = try Stopwatch.seconds { try store.execute(BatchInsertRequest(entityName: "User", objects: values)) }
        let batchFound = try store.newContext().fetch(request, as: SimpleUser.self).map {
            SimpleUserRecord(uuid: $0.uuid ?? UUID(), firstName: $0.firstName ?? "", lastName: $0.lastName ?? "", age: $0.age)
        }
        try Anchor.check(digest(batchFound), expected, "LogStore's fetch of every user after the batch insert")
        let before = bytes(path)
        let batchDelete = try Stopwatch.seconds { try store.execute(BatchDeleteRequest(entityName: "User")) }
        try Anchor.check(ResultDigest(count: try store.newContext().count("User")), ResultDigest(count: 0), "LogStore after the batch delete")
        let after = bytes(path)
        try store.compact()
        return ([create, fetch, delete, batchCreate, batchDelete], [before, after, bytes(path)])
    }

    /// Inserts `users` into `store` through one context, saved once.
    static func insert(_ users: [SimpleUserRecord], into store: Store) throws {
        let objects = store.newContext()
        for values in users {
            let user = try objects.insert(SimpleUser.self)
            (user.uuid, user.firstName, user.lastName, user.age) = (values.uuid, values.firstName, values.lastName, values.age)
        }
        try objects.save()
    }

    /// A new database at `path` with the users' table, as the anchors open it.
    static func database(_ path: String) throws -> any DatabaseWriter {
        try Anchor.database(path, schema: schema)
    }

    /// Inserts `users` in one transaction through a cached statement.
    static func insert(_ users: [SimpleUserRecord], into database: any DatabaseWriter) throws {
        try database.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO user (uuid, firstName, lastName, age) VALUES (?, ?, ?, ?)")
            for user in users {
                statement.setUncheckedArguments([user.uuid, user.firstName, user.lastName, user.age])
                try statement.execute()
            }
        }
    }

    /// Every user as a record, in insertion order.
    static func fetchAll(_ database: any DatabaseReader) throws -> [SimpleUserRecord] {
        try database.read { db in try SimpleUserRecord.fetchAll(db.cachedStatement(sql: "SELECT uuid, firstName, lastName, age FROM user ORDER BY rowid")) }
    }

    private static func grdbRound(_ users: [SimpleUserRecord], expected: ResultDigest, _ context: BenchmarkContext) throws -> (times: [Double], sizes: [Double]) {
        let path = context.scratch.freshPath("anchor-users.sqlite")
        defer { SQLiteFiles.remove(path) }
        let database = try Self.database(path)
        defer { try? (database as? DatabaseQueue)?.close() }
        let create = try Stopwatch.seconds { try insert(users, into: database) }
        // Untimed, as LogStore's manual compaction is: the next reads find the rows in the database file.
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let fetch = try Stopwatch.seconds { keep(try fetchAll(database).count) }
        try Anchor.check(digest(try fetchAll(database)), expected, "SQLite's fetch of every user")
        let before = bytes(path, path + "-wal")
        let delete = try Stopwatch.seconds { try database.write { db in try db.execute(sql: "DELETE FROM user") } }
        try Anchor.check(ResultDigest(count: try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user") ?? -1 }),
                         ResultDigest(count: 0), "SQLite after deleting every user")
        let after = bytes(path, path + "-wal")
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return ([create, fetch, delete], [before, after, bytes(path, path + "-wal")])
    }
}
