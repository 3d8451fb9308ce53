// Many authors, each with a few books: one-to-many inserts (one save, and one
// save per author) and a traversal of every author's books beside one SQL
// JOIN, LogStore's relationships against GRDB with a foreign key.

import Foundation
import GRDB
import LogStore

/// The library of RelationshipThroughput.swift (LibraryModel, GRDBLibrary,
/// BookValues), with many authors instead of one.
enum AuthorsWithBooks {
    /// Authors named "Author 1" …, each with `perAuthor` consecutive books.
    private struct Library {
        let names: [String]
        let books: [BookValues]
        let perAuthor: Int

        var records: Int { names.count + books.count }

        func books(of author: Int) -> ArraySlice<BookValues> { books[author * perAuthor..<(author + 1) * perAuthor] }

        /// Every book with its author's name: what each engine must give back.
        var stored: Set<LibraryCheck.StoredBook> {
            Set(names.indices.flatMap { author in
                books(of: author).map { LibraryCheck.StoredBook(title: $0.title, pages: $0.pages, author: names[author]) }
            })
        }

        /// Inserts `authors` with their books into `objects`, linked from
        /// the to-one side, and saves once.
        func insert(_ authors: Range<Int>, into objects: ObjectContext) throws {
            for index in authors {
                let author = try objects.insert(BenchAuthor.self)
                author.name = names[index]
                for values in books(of: index) {
                    let book = try objects.insert(BenchBook.self)
                    book.title = values.title
                    book.pages = values.pages
                    book.author = author
                }
            }
            try objects.save()
        }

        /// Inserts `authors` with their books through cached statements,
        /// each book's authorId the author row just inserted.
        func insert(_ authors: Range<Int>, into db: Database) throws {
            let insertAuthor = try db.cachedStatement(sql: "INSERT INTO author (name) VALUES (?)")
            let insertBook = try db.cachedStatement(sql: "INSERT INTO book (title, pages, authorId) VALUES (?, ?, ?)")
            for index in authors {
                try insertAuthor.execute(arguments: [names[index]])
                let authorId = db.lastInsertedRowID
                for values in books(of: index) {
                    try insertBook.execute(arguments: [values.title, values.pages, authorId])
                }
            }
        }
    }

    static func measure(_ context: BenchmarkContext, into report: inout GroupReport) throws {
        let authors = context.scaled(full: 10_000, quick: 1_000)
        let perAuthor = 10
        let library = Library(names: (1...authors).map { "Author \($0)" }, books: BookValues.make(authors * perAuthor, seed: 31), perAuthor: perAuthor)
        let model = try LibraryModel.make()
        try inserts(library, model: model, context, into: &report)
        try traversal(library, model: model, context, into: &report)
        report.note("authors and books: RelationshipThroughput's model (LogStore: Author.books to-many, inverse Book.author; SQLite: book.authorId REFERENCES author(id), an index on it, foreign keys enforced), \(authors.formatted()) authors with \(perAuthor) books each (BookValues, unique titles); after every round, untimed, each engine's books with their authors' names are compared with the values inserted, so with each other")
    }

    /// Throws unless `rows` are exactly the library's books, each with its author.
    private static func check(_ rows: [LibraryCheck.StoredBook], _ expected: Set<LibraryCheck.StoredBook>, _ engine: String) throws {
        guard rows.count == expected.count, Set(rows) == expected else {
            throw BenchmarkError("\(engine): \(rows.count) books with their authors, not the \(expected.count) inserted")
        }
    }

    // MARK: - Inserts

    private static func inserts(_ library: Library, model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let expected = library.stored
        let everyAuthor = 0..<library.names.count
        // One save per author costs an fsync each: fewer authors.
        let savedOneByOne = 0..<context.scaled(full: 1_000, quick: 100)
        let oneByOne = Library(names: Array(library.names[savedOneByOne]), books: Array(library.books[0..<savedOneByOne.upperBound * library.perAuthor]), perAuthor: library.perAuthor)
        let oneByOneExpected = oneByOne.stored

        func logStoreCase(_ library: Library, saves: [Range<Int>], _ expected: Set<LibraryCheck.StoredBook>) -> () throws -> Sample {
            {
                let path = context.scratch.freshPath("authors.logstore")
                defer { context.scratch.remove(path) }
                let sample: Sample
                do {
                    let store = try Store(path: path, model: model, options: JournalOptions(durability: .fsyncEveryCommit, compaction: .manual))
                    defer { store.close() }
                    sample = try Sample.timing(work: Double(library.records)) {
                        let objects = store.newContext()
                        for save in saves { try library.insert(save, into: objects) }
                    }
                }
                let reopened = try Store(path: path, model: model, options: JournalOptions(access: .readOnly))
                defer { reopened.close() }
                try check(try LibraryCheck.logStoreRows(reopened), expected, "LogStore")
                return sample
            }
        }
        func grdbCase(_ library: Library, saves: [Range<Int>], _ expected: Set<LibraryCheck.StoredBook>) -> () throws -> Sample {
            {
                let database = try GRDBLibrary(path: context.scratch.freshPath("authors.sqlite"), synchronousFull: true)
                defer { database.remove() }
                let sample = try Sample.timing(work: Double(library.records)) {
                    for save in saves { try database.writer.write { db in try library.insert(save, into: db) } }
                }
                try check(try database.rows(), expected, "GRDB")
                return sample
            }
        }

        let perAuthorSaves = savedOneByOne.map { $0..<($0 + 1) }
        context.log("app-storage: one-to-many inserts, \(library.names.count.formatted()) authors × \(library.perAuthor) books in one save and \(oneByOne.names.count.formatted()) in a save each, \(context.repetitions) rounds")
        let rates = try measureInRounds(repetitions: context.repetitions, [
            logStoreCase(library, saves: [everyAuthor], expected),
            grdbCase(library, saves: [everyAuthor], expected),
            logStoreCase(oneByOne, saves: perAuthorSaves, oneByOneExpected),
            grdbCase(oneByOne, saves: perAuthorSaves, oneByOneExpected),
        ])
        let label = "\(library.names.count.formatted()) authors × \(library.perAuthor) books"
        let oneByOneLabel = "\(oneByOne.names.count.formatted()) authors × \(library.perAuthor) books"
        let logStoreOne = report.add("authors: LogStore insert + book.author = author, one save, \(label)", rates[0], unit: "records/s")
        let grdbOne = report.add("authors: GRDB cached INSERTs with authorId, one transaction, \(label)", rates[1], unit: "records/s")
        let logStoreEach = report.add("authors: LogStore one save per author, \(oneByOneLabel)", rates[2], unit: "records/s")
        let grdbEach = report.add("authors: GRDB one transaction per author, \(oneByOneLabel)", rates[3], unit: "records/s")
        report.compare("authors: LogStore ÷ GRDB, one save", logStoreOne, over: grdbOne)
        report.compare("authors: LogStore ÷ GRDB, one save per author", logStoreEach, over: grdbEach)
        report.note("authors, inserts: a record is an author or a book; each round writes a new file, opened before the clock starts; durable on both sides (LogStore .fsyncEveryCommit with compaction .manual, SQLite WAL with synchronous=FULL and its automatic checkpoints inside the clock); LogStore inserts each author, then its books, setting each book's to-one author, in one context; GRDB inserts the author row and its book rows with cached prepared statements, the authorId from lastInsertedRowID")
    }

    // MARK: - Traversal against a JOIN

    private static func traversal(_ library: Library, model: Model, _ context: BenchmarkContext, into report: inout GroupReport) throws {
        let expected = library.stored
        let storePath = context.scratch.freshPath("authors-traversal.logstore")
        defer { context.scratch.remove(storePath) }
        do {
            // One save, then compacted: what automatic compaction leaves.
            let store = try Store(path: storePath, model: model, options: JournalOptions(durability: .deferredToOS, compaction: .manual))
            defer { store.close() }
            try library.insert(0..<library.names.count, into: store.newContext())
            _ = try store.compact()
        }
        let join = "SELECT author.*, book.* FROM author JOIN book ON book.authorId = author.id ORDER BY author.id"

        /// Every book with its author's name, through LogStore's to-many
        /// relationship, in a fresh context.
        func traversed(_ store: Store) throws -> [LibraryCheck.StoredBook] {
            // Objects hold their context weakly: it lives until the rows are read.
            let objects = store.newContext()
            var rows: [LibraryCheck.StoredBook] = []
            rows.reserveCapacity(library.books.count)
            for author in try objects.fetch(FetchRequest(entityName: "Author"), as: BenchAuthor.self) {
                let name = author.name
                for book in author.books {
                    rows.append(LibraryCheck.StoredBook(title: book.title ?? "", pages: book.pages, author: name))
                }
            }
            return rows
        }

        /// Every book with its author's name, by the JOIN, on one connection.
        func joined(_ connection: any DatabaseWriter) throws -> [LibraryCheck.StoredBook] {
            try connection.read { db in
                var rows: [LibraryCheck.StoredBook] = []
                rows.reserveCapacity(library.books.count)
                // author.*: id, name; book.*: id, title, pages, authorId.
                let cursor = try Row.fetchCursor(try db.cachedStatement(sql: join))
                while let row = try cursor.next() {
                    rows.append(LibraryCheck.StoredBook(title: row[3], pages: row[4], author: row[1]))
                }
                return rows
            }
        }

        // Each engine's memory: the heap bytes in use it added from before
        // it opened to after its first traversal, which also warms it
        // (resident size would miss what the allocator reuses from earlier work).
        var heap: [(String, Int)] = []
        var before = HeapInUse.bytes()
        func heapSince(_ name: String) {
            let now = HeapInUse.bytes()
            heap.append((name, now - before))
            before = now
        }

        let store = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
        defer { store.close() }
        _ = try traversed(store)
        heapSince("LogStore (open read-only + first traversal)")

        let database = try GRDBLibrary(path: context.scratch.freshPath("authors-traversal.sqlite"), synchronousFull: true)
        defer { database.remove() }
        try database.writer.write { db in try library.insert(0..<library.names.count, into: db) }
        try database.writer.writeWithoutTransaction { db in try db.execute(sql: "ANALYZE") }
        _ = try joined(database.writer)
        heapSince("SQLite default page cache (build + first JOIN)")
        // SQLite also with a page cache and with a memory map each twice the
        // database's size: a connection each, warmed before the clock starts.
        let databaseBytes = try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size") ?? 0 }
        let largeCache = try GRDBPeople.open(database.path, synchronousFull: true, pool: false)
        try largeCache.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA cache_size = -\(2 * databaseBytes / 1024)") }
        _ = try joined(largeCache)
        heapSince("SQLite large page cache (open + first JOIN)")
        let memoryMapped = try GRDBPeople.open(database.path, synchronousFull: true, pool: false)
        try memoryMapped.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA mmap_size = \(2 * databaseBytes)") }
        _ = try joined(memoryMapped)
        heapSince("SQLite memory-mapped (open + first JOIN)")
        defer {
            for connection in [largeCache, memoryMapped] { try? (connection as? DatabaseQueue)?.close() }
        }
        let plan = try database.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + join).map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
        }

        /// Runs `traversal` (timed), then checks its books (untimed), until
        /// the timed runs add up to `minimum` seconds.
        let minimum = context.scaled(full: 0.5, quick: 0.1)
        func sample(_ engine: String, _ traversal: @escaping () throws -> [LibraryCheck.StoredBook]) -> () throws -> Sample {
            {
                var seconds = 0.0, runs = 0
                repeat {
                    var rows: [LibraryCheck.StoredBook] = []
                    seconds += try Stopwatch.seconds { rows = try traversal() }
                    try check(rows, expected, engine)
                    runs += 1
                } while seconds < minimum
                return Sample(work: Double(runs * library.books.count), seconds: seconds)
            }
        }

        context.log("app-storage: traversal of \(library.names.count.formatted()) authors' books, LogStore beside one JOIN, \(context.repetitions) rounds of at least \(minimum) s each")
        let rates = try measureInRounds(repetitions: context.repetitions, [
            sample("LogStore traversal") { try traversed(store) },
            sample("GRDB JOIN, default cache") { try joined(database.writer) },
            sample("GRDB JOIN, large page cache") { try joined(largeCache) },
            sample("GRDB JOIN, memory-mapped") { try joined(memoryMapped) },
        ])
        let label = "\(library.names.count.formatted()) authors × \(library.perAuthor) books"
        let logStore = report.add("authors: LogStore fetch authors, read each one's books (to-many), \(label)", rates[0], unit: "books read/s")
        let grdb = report.add("authors: GRDB one JOIN, every column of author and book, default page cache, \(label)", rates[1], unit: "books read/s")
        let grdbCached = report.add("authors: GRDB one JOIN, page cache of twice the database", rates[2], unit: "books read/s")
        let grdbMapped = report.add("authors: GRDB one JOIN, mmap_size of twice the database", rates[3], unit: "books read/s")
        report.compare("authors: LogStore traversal ÷ GRDB JOIN, default page cache", logStore, over: grdb)
        report.compare("authors: LogStore traversal ÷ GRDB JOIN, large page cache", logStore, over: grdbCached)
        report.compare("authors: LogStore traversal ÷ GRDB JOIN, memory-mapped", logStore, over: grdbMapped)
        report.fact("authors: SQLite database for the traversal", "\(databaseBytes.formatted()) bytes; large page cache: cache_size = -\(2 * databaseBytes / 1024) (KiB); memory map: mmap_size = \(2 * databaseBytes)")
        for (name, bytes) in heap {
            report.add("authors: heap in use added, \(name)", value: Double(bytes) * 1e-6, unit: "MB")
        }
        report.fact("authors: the JOIN", join)
        report.fact("authors: SQLite's plan for it", plan)
        report.note("authors, traversal: each sample repeats the traversal until the timed runs add up to \(minimum) s; every book read with its title, pages and its author's name; LogStore in a fresh context for every traversal (fetch Author, read each author's name and its books through the typed to-many property), on the store written in one save, compacted and opened read-only before the clock starts; GRDB in one read transaction per traversal, one cached statement, rows read by column index from a cursor, on three connections to the database (after ANALYZE): SQLite's default page cache, a page cache and a memory map each twice the database, each engine and connection warmed by one traversal before the rounds; both read warm data (LogStore's committed state and block cache, SQLite's caches and the OS page cache); memory is the heap bytes in use (glibc's mallinfo2) each engine or connection added from before it opened to after its first traversal, in that order (the default connection's includes what building the database left; the memory-mapped connection's file pages are the OS page cache's, not counted)")
    }
}
