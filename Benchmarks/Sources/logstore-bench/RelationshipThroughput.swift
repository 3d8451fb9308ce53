// Relationships against GRDB on SQLite (WAL), same records, same run: one
// author with many books linked in one save (from the to-one side and from
// the to-many side), a traversal of every author's books, and one project's
// open tasks by predicate (ProjectTaskQuery.swift), each checked by content.

import Foundation
import GRDB
import LogStore

/// An author as the app defines it for LogStore: entity "Author".
final class BenchAuthor: ManagedObject {
    @Managed("name") var name: String?
    @Managed("books") var books: Set<BenchBook>
}

/// A book: entity "Book", whose to-one `author` is the inverse of `books`.
final class BenchBook: ManagedObject {
    @Managed("title") var title: String?
    @Managed("pages") var pages: Int64
    @Managed("author") var author: BenchAuthor?
}

/// Authors and books through LogStore's relationships and through GRDB with
/// a foreign key column and an index on it.
enum RelationshipThroughput: BenchmarkGroup {
    static let name = "relationships"

    static func run(in context: BenchmarkContext) throws -> GroupReport {
        var report = GroupReport(name: name, title: "Relationships: one author's books linked in one save, a traversal, and one project's open tasks by predicate, against GRDB 7.10.0 on SQLite (WAL)")
        let model = try LibraryModel.make()
        try linking(model: model, context, into: &report)
        try traversal(model: model, context, into: &report)
        try ProjectTaskQuery.measure(context, into: &report)
        report.note("model: Author (name: String, books: to-many Book, inverse author) and Book (title: String, pages: Int64, author: to-one Author, inverse books), as typed ManagedObject subclasses with @Managed properties; SQLite: author(id INTEGER PRIMARY KEY, name TEXT NOT NULL) and book(id INTEGER PRIMARY KEY, title TEXT NOT NULL, pages INTEGER NOT NULL, authorId INTEGER REFERENCES author(id)) with an index on book(authorId), foreign keys enforced (GRDB's default); LogStore stores the to-one side in each book and keeps its own index of the inverse")
        return report
    }

    // MARK: - One author, many books, one save

    private static func linking(model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let count = context.scaled(full: 100_000, quick: 5_000)
        let label = count.formatted()
        let books = BookValues.make(count, seed: 9)
        let authorName = "Author 1"
        context.log("relationships: one author and \(label) books in one save, from either side and in GRDB, \(context.repetitions) rounds")
        // Durability as each engine's safe setting: LogStore's default
        // .fsyncEveryCommit, SQLite WAL with synchronous=FULL. No automatic
        // compaction, so that none starts after the save and runs into the
        // next case on this machine's few cores.
        let options = JournalOptions(durability: .fsyncEveryCommit, compaction: .manual)

        func logStoreCase(fromToMany: Bool) throws -> Sample {
            let path = context.scratch.freshPath("link.logstore")
            defer { context.scratch.remove(path) }
            let sample: Sample
            do {
                let store = try Store(path: path, model: model, options: options)
                defer { store.close() }
                sample = try Sample.timing(work: Double(count)) {
                    let objects = store.newContext()
                    let author = try objects.insert(BenchAuthor.self)
                    author.name = authorName
                    for values in books {
                        let book = try objects.insert(BenchBook.self)
                        book.title = values.title
                        book.pages = values.pages
                        if fromToMany { try author.add(book, to: "books") } else { book.author = author }
                    }
                    try objects.save()
                }
            }
            // What is on disk, read back by a store opened afresh.
            let reopened = try Store(path: path, model: model, options: JournalOptions(access: .readOnly))
            defer { reopened.close() }
            try LibraryCheck.books(try LibraryCheck.logStoreRows(reopened), expected: books, author: authorName,
                                   engine: "LogStore (linked from the \(fromToMany ? "to-many" : "to-one") side)")
            return sample
        }

        let rates = try measureInRounds(repetitions: context.repetitions, [
            { try logStoreCase(fromToMany: false) },
            { try logStoreCase(fromToMany: true) },
            {
                let database = try GRDBLibrary(path: context.scratch.freshPath("link.sqlite"), synchronousFull: true)
                defer { database.remove() }
                let sample = try Sample.timing(work: Double(count)) {
                    try database.writer.write { db in
                        try db.cachedStatement(sql: "INSERT INTO author (name) VALUES (?)").execute(arguments: [authorName])
                        let authorId = db.lastInsertedRowID
                        let statement = try db.cachedStatement(sql: "INSERT INTO book (title, pages, authorId) VALUES (?, ?, ?)")
                        for values in books {
                            try statement.execute(arguments: [values.title, values.pages, authorId])
                        }
                    }
                }
                try LibraryCheck.books(try database.rows(), expected: books, author: authorName, engine: "GRDB")
                return sample
            },
        ])
        let toOne = report.add("LogStore insert + book.author = author + save, \(label) books", rates[0], unit: "records/s")
        let toMany = report.add("LogStore insert + author.add(book, to: \"books\") + save, \(label) books", rates[1], unit: "records/s")
        let grdb = report.add("GRDB one transaction, cached INSERT with authorId, \(label) books", rates[2], unit: "records/s")
        report.compare("LogStore to-one side ÷ GRDB, \(label) books", toOne, over: grdb)
        report.compare("LogStore to-many side ÷ GRDB, \(label) books", toMany, over: grdb)
        report.compare("LogStore to-many side ÷ to-one side", toMany, over: toOne)
        report.note("linking: a record is one book (the one author is inserted in the same save or transaction and not counted); each round uses a new file, opened before the clock starts; LogStore inserts the author and the books in one fresh context, links each book and saves once; GRDB inserts the author row, then every book row with one cached prepared statement, in one transaction")
        report.note("linking: durability is each engine's durable setting, LogStore's default .fsyncEveryCommit (compaction .manual) and SQLite in WAL with synchronous=FULL; after each round, untimed, the LogStore file is reopened and the GRDB database queried, and every book's title, pages and author are checked against the values inserted")
    }

    // MARK: - Traversal: every author, its books, the sum of their pages

    private static func traversal(model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let authors = context.scaled(full: 1_000, quick: 100)
        let perAuthor = context.scaled(full: 100, quick: 50)
        let total = authors * perAuthor
        let books = BookValues.make(total, seed: 99)
        let names = (1...authors).map { "Author \($0)" }
        // Author i (0-based) has books i * perAuthor ..< (i + 1) * perAuthor.
        var expected: [String: Int64] = [:]
        for (index, name) in names.enumerated() {
            expected[name] = books[index * perAuthor..<(index + 1) * perAuthor].reduce(0) { $0 + $1.pages }
        }
        context.log("relationships: traversal of \(authors.formatted()) authors × \(perAuthor) books, building both data sets")

        // LogStore: one save through the to-one side, then the journal
        // opened read-only (as the fetches group does), and a compacted copy.
        let storePath = context.scratch.freshPath("library.logstore")
        let compactedPath = context.scratch.freshPath("library-compacted.logstore")
        defer {
            context.scratch.remove(storePath)
            context.scratch.remove(compactedPath)
        }
        do {
            let store = try Store(path: storePath, model: model, options: JournalOptions(durability: .deferredToOS, compaction: .manual))
            defer { store.close() }
            let objects = store.newContext()
            for (index, name) in names.enumerated() {
                let author = try objects.insert(BenchAuthor.self)
                author.name = name
                for values in books[index * perAuthor..<(index + 1) * perAuthor] {
                    let book = try objects.insert(BenchBook.self)
                    book.title = values.title
                    book.pages = values.pages
                    book.author = author
                }
            }
            try objects.save()
        }
        try FileManager.default.copyItem(atPath: storePath, toPath: compactedPath)
        do {
            let store = try Store(path: compactedPath, model: model, options: JournalOptions(compaction: .manual))
            defer { store.close() }
            let compaction = try store.compact()
            guard compaction.records == authors + total else {
                throw BenchmarkError("the compaction wrote \(compaction.records) records, not \(authors + total)")
            }
        }
        let journal = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
        defer { journal.close() }
        let compacted = try Store(path: compactedPath, model: model, options: JournalOptions(access: .readOnly))
        defer { compacted.close() }

        // SQLite: the same authors and books, rows in the same order.
        let database = try GRDBLibrary(path: context.scratch.freshPath("library.sqlite"), synchronousFull: true)
        defer { database.remove() }
        try database.writer.write { db in
            let insertAuthor = try db.cachedStatement(sql: "INSERT INTO author (name) VALUES (?)")
            let insertBook = try db.cachedStatement(sql: "INSERT INTO book (title, pages, authorId) VALUES (?, ?, ?)")
            for (index, name) in names.enumerated() {
                try insertAuthor.execute(arguments: [name])
                let authorId = db.lastInsertedRowID
                for values in books[index * perAuthor..<(index + 1) * perAuthor] {
                    try insertBook.execute(arguments: [values.title, values.pages, authorId])
                }
            }
        }
        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "ANALYZE") }
        // The names by id, to turn GRDB's per-id sums into per-author sums after the clock stops.
        let nameByID = try database.writer.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, name FROM author").map { row in (row[0] as Int64, row[1] as String) })
        }

        /// Per-author sums, checked against the values inserted; a mismatch ends the run.
        func check(_ pairs: [(String, Int64)], _ engine: String) throws {
            var sums: [String: Int64] = [:]
            for (name, pages) in pairs {
                guard sums.updateValue(pages, forKey: name) == nil else { throw BenchmarkError("\(engine) traversal gave \(name) twice") }
            }
            guard sums.count == expected.count else {
                throw BenchmarkError("\(engine) traversal found \(sums.count) authors, not \(expected.count)")
            }
            for (name, sum) in expected where sums[name] != sum {
                throw BenchmarkError("\(engine) traversal: \(name)'s books have \(sums[name].map(String.init) ?? "no") pages in all, not \(sum)")
            }
        }

        /// Runs `traversal` (timed), then turns its result into sums by
        /// author name and checks them (untimed), again and again until the
        /// timed runs add up to `minimum` seconds: one traversal takes
        /// milliseconds, too short to time alone.
        let minimum = context.scaled(full: 0.5, quick: 0.1)
        func sample<Result>(_ engine: String, _ traversal: () throws -> Result, byName: (Result) -> [(String, Int64)]) throws -> Sample {
            var seconds = 0.0
            var runs = 0
            repeat {
                var result: Result?
                seconds += try Stopwatch.seconds { result = try traversal() }
                guard let result else { throw BenchmarkError("\(engine) traversal returned nothing") }
                try check(byName(result), engine)
                runs += 1
            } while seconds < minimum
            return Sample(work: Double(runs * total), seconds: seconds)
        }

        /// Every author, in a fresh context, with the sum of its books' pages.
        func logStoreCase(_ store: Store, _ engine: String) throws -> Sample {
            try sample(engine, { () throws -> (ObjectContext, [(BenchAuthor, Int64)]) in
                let objects = store.newContext()
                let fetched = try objects.fetch(FetchRequest(entityName: "Author"), as: BenchAuthor.self)
                var sums: [(BenchAuthor, Int64)] = []
                sums.reserveCapacity(fetched.count)
                for author in fetched {
                    var pages: Int64 = 0
                    for book in author.books { pages += book.pages }
                    sums.append((author, pages))
                }
                // The context goes with the result: objects hold it weakly.
                return (objects, sums)
            }, byName: { (result: (ObjectContext, [(BenchAuthor, Int64)])) in
                result.1.map { ($0.0.name ?? "(no name)", $0.1) }
            })
        }

        /// GRDB's sums by author id, by author name.
        func byName(_ sums: [(Int64, Int64)]) -> [(String, Int64)] {
            sums.map { (nameByID[$0.0] ?? "(id \($0.0))", $0.1) }
        }

        context.log("relationships: traversal, 4 cases, \(context.repetitions) rounds of at least \(minimum) s each")
        let rates = try measureInRounds(repetitions: context.repetitions, [
            { try logStoreCase(journal, "LogStore (journal)") },
            { try logStoreCase(compacted, "LogStore (compacted)") },
            {
                try sample("GRDB (join)", {
                    try database.writer.read { db in
                        let statement = try db.cachedStatement(sql: "SELECT a.id, b.pages FROM author a JOIN book b ON b.authorId = a.id ORDER BY a.id")
                        let rows = try Row.fetchCursor(statement)
                        var sums: [(Int64, Int64)] = []
                        var current: Int64? = nil
                        var pages: Int64 = 0
                        while let row = try rows.next() {
                            let id: Int64 = row[0]
                            if id != current {
                                if let current { sums.append((current, pages)) }
                                current = id
                                pages = 0
                            }
                            pages += row[1] as Int64
                        }
                        if let current { sums.append((current, pages)) }
                        return sums
                    }
                }, byName: byName)
            },
            {
                try sample("GRDB (query per author)", {
                    try database.writer.read { db in
                        let ids = try Int64.fetchAll(db, sql: "SELECT id FROM author ORDER BY id")
                        let statement = try db.cachedStatement(sql: "SELECT pages FROM book WHERE authorId = ?")
                        var sums: [(Int64, Int64)] = []
                        sums.reserveCapacity(ids.count)
                        for id in ids {
                            var pages: Int64 = 0
                            let cursor = try Int64.fetchCursor(statement, arguments: [id])
                            while let value = try cursor.next() { pages += value }
                            sums.append((id, pages))
                        }
                        return sums
                    }
                }, byName: byName)
            },
        ])
        let label = "\(authors.formatted()) authors × \(perAuthor) books"
        let logStore = report.add("LogStore traversal, journal opened read-only, \(label)", rates[0], unit: "books read/s")
        let logStoreCompacted = report.add("LogStore traversal, compacted store opened read-only", rates[1], unit: "books read/s")
        let join = report.add("GRDB one JOIN ordered by author, summed in Swift", rates[2], unit: "books read/s")
        let perQuery = report.add("GRDB one cached query per author", rates[3], unit: "books read/s")
        report.compare("LogStore traversal ÷ GRDB JOIN", logStore, over: join)
        report.compare("LogStore traversal ÷ GRDB query per author", logStore, over: perQuery)
        report.compare("LogStore compacted ÷ GRDB JOIN", logStoreCompacted, over: join)
        report.compare("LogStore compacted ÷ GRDB query per author", logStoreCompacted, over: perQuery)
        report.fact("one traversal (medians)", [("LogStore journal", rates[0]), ("LogStore compacted", rates[1]), ("GRDB JOIN", rates[2]), ("GRDB per author", rates[3])]
            .map { "\($0.0) \(String(format: "%.2f", Double(total) / $0.1.median * 1e3)) ms" }.joined(separator: ", "))
        report.note("traversal: fetch every author, read each one's books and sum their pages; each sample repeats the traversal until the timed runs add up to \(minimum) s; LogStore through a fresh context for every traversal (fetch Author, read the to-many books through the typed property, read each book's pages), the store opened read-only before the clock starts, once as the journal of the one save that wrote it (how the fetches group reads) and once after compaction (what automatic compaction makes of it); GRDB in one read transaction per traversal; both read warm data (LogStore's committed state and block cache, SQLite's page cache)")
        report.note("traversal: after every traversal, untimed, each engine's per-author sums are turned into sums by author name (LogStore reads the fetched authors' names, GRDB's author ids are looked up in a table read before the clock) and compared with the sums of the values inserted, so with each other's; a missing, repeated or wrong author ends the run")
    }
}

/// A book's values, the same for both engines.
struct BookValues: Sendable {
    var title: String
    var pages: Int64

    /// `count` books with unique titles and 20 to 1,199 pages.
    static func make(_ count: Int, seed: UInt64) -> [BookValues] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            BookValues(title: "\(random.phrase(3, from: inventoryWords)) #\(index)", pages: Int64(20 + random.next() % 1180))
        }
    }
}

enum LibraryModel {
    static func make() throws -> Model {
        try Model {
            Entity("Author", BenchAuthor.self) {
                Attribute("name", .string)
                Relationship("books", to: "Book", inverse: "author", toMany: true)
            }
            Entity("Book", BenchBook.self) {
                Attribute("title", .string)
                Attribute("pages", .int64, default: Int64(0))
                Relationship("author", to: "Author", inverse: "books")
            }
        }
    }
}

/// Checks of what an engine stored, by content.
enum LibraryCheck {
    /// One stored book: its title, pages and its author's name.
    struct StoredBook: Hashable {
        var title: String
        var pages: Int64
        var author: String?
    }

    /// Every book of a LogStore store, reached from its authors, with a
    /// check that each book's to-one side points back.
    static func logStoreRows(_ store: Store) throws -> [StoredBook] {
        let objects = store.newContext()
        var rows: [StoredBook] = []
        for author in try objects.fetch(FetchRequest(entityName: "Author"), as: BenchAuthor.self) {
            for book in author.books {
                guard book.author === author else {
                    throw BenchmarkError("LogStore: book \(book.title ?? "?") is in \(author.name ?? "?")'s books but its author is \(book.author?.name ?? "nil")")
                }
                rows.append(StoredBook(title: book.title ?? "", pages: book.pages, author: author.name))
            }
        }
        let all = try objects.count(for: FetchRequest(entityName: "Book"))
        guard all == rows.count else { throw BenchmarkError("LogStore: \(all) books stored, \(rows.count) of them linked to an author") }
        return rows
    }

    /// `rows` must be exactly the `expected` books, each by `author`.
    static func books(_ rows: [StoredBook], expected: [BookValues], author: String, engine: String) throws {
        guard rows.count == expected.count else { throw BenchmarkError("\(engine): \(rows.count) books stored, not \(expected.count)") }
        let pagesByTitle = Dictionary(uniqueKeysWithValues: expected.map { ($0.title, $0.pages) })
        var seen = Set<String>()
        for row in rows {
            guard pagesByTitle[row.title] == row.pages, row.author == author, seen.insert(row.title).inserted else {
                throw BenchmarkError("\(engine): stored book \(row.title) (\(row.pages) pages, author \(row.author ?? "nil")) is not one of the books inserted")
            }
        }
    }
}

/// A GRDB database of authors and books: WAL, `synchronous` FULL or NORMAL
/// (as ``GRDBPeople/open(_:synchronousFull:pool:)`` sets it), foreign keys
/// enforced (GRDB's default), an index on the foreign key.
final class GRDBLibrary {
    let path: String
    let writer: any DatabaseWriter

    init(path: String, synchronousFull: Bool) throws {
        self.path = path
        writer = try GRDBPeople.open(path, synchronousFull: synchronousFull, pool: false)
        try writer.writeWithoutTransaction { db in
            guard try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true else { throw BenchmarkError("SQLite's foreign keys are off on \(path)") }
            try db.execute(sql: """
                CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE book (
                    id INTEGER PRIMARY KEY, title TEXT NOT NULL, pages INTEGER NOT NULL,
                    authorId INTEGER REFERENCES author(id));
                CREATE INDEX book_authorId ON book(authorId);
                """)
        }
    }

    /// Every book with its author's name (nil for a book with no author).
    func rows() throws -> [LibraryCheck.StoredBook] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT b.title, b.pages, a.name FROM book b LEFT JOIN author a ON a.id = b.authorId").map { row in
                LibraryCheck.StoredBook(title: row[0], pages: row[1], author: row[2])
            }
        }
    }

    func remove() {
        if let queue = writer as? DatabaseQueue { try? queue.close() }
        SQLiteFiles.remove(path)
    }
}
