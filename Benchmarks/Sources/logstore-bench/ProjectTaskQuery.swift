// The relationships group's query: one project's open tasks by due date
// (`project == %@ AND done == NO`, sorted by due), the most common fetch an
// app runs, through LogStore and through GRDB with an index on the foreign
// key, over many projects, each result checked by content.

import Foundation
import GRDB
import LogStore

/// A project as the app defines it for LogStore: entity "Project".
final class BenchProject: ManagedObject {
    @Managed("name") var name: String?
    @Managed("tasks") var tasks: Set<BenchTask>
}

/// A task: entity "Task", whose to-one `project` is the inverse of `tasks`.
final class BenchTask: ManagedObject {
    @Managed("title") var title: String?
    @Managed("done") var done: Bool
    @Managed("due") var due: Date?
    @Managed("project") var project: BenchProject?
}

/// A task's values, the same for both engines.
struct TaskValues: Sendable {
    var title: String
    var done: Bool
    /// Seconds since the reference date: a `Date` in LogStore, a REAL in SQLite.
    var due: Double
    /// 0-based: the project named "Project \(project + 1)".
    var project: Int

    /// `count` tasks with unique titles, a third of them done, due within
    /// a year, each in one of `projects` projects at random.
    static func make(_ count: Int, projects: Int, seed: UInt64) -> [TaskValues] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            TaskValues(title: "\(random.phrase(3, from: inventoryWords)) #\(index)", done: random.next() % 3 == 0,
                       due: 700_000_000 + Double(random.next() % 31_536_000), project: Int(random.next() % UInt64(projects)))
        }
    }
}

/// `project == %@ AND done == NO` sorted by due, in both engines.
enum ProjectTaskQuery {
    static func model() throws -> Model {
        try Model {
            Entity("Project", BenchProject.self) {
                Attribute("name", .string)
                Relationship("tasks", to: "Task", inverse: "project", toMany: true)
            }
            Entity("Task", BenchTask.self) {
                Attribute("title", .string)
                Attribute("done", .bool, default: false)
                Attribute("due", .date)
                Relationship("project", to: "Project", inverse: "tasks")
            }
        }
    }

    static func measure(_ context: BenchmarkContext, into report: inout GroupReport) throws {
        let projects = context.scaled(full: 100, quick: 20)
        let count = context.scaled(full: 20_000, quick: 4_000)
        let tasks = TaskValues.make(count, projects: projects, seed: 2_024)
        let names = (1...projects).map { "Project \($0)" }
        // Per project, its open tasks' titles by due date, ties in insertion
        // order (LogStore's order of equal sort values, and SQLite's by id).
        var expected = Array(repeating: [(due: Double, title: String)](), count: projects)
        for task in tasks where !task.done { expected[task.project].append((task.due, task.title)) }
        let expectedTitles = expected.map { open in open.enumerated().sorted { ($0.element.due, $0.offset) < ($1.element.due, $1.offset) }.map(\.element.title) }
        context.log("relationships: \(count.formatted()) tasks in \(projects) projects, building both data sets")

        // LogStore: one save, then the journal opened read-only (as the
        // traversal and the fetches group read).
        let storePath = context.scratch.freshPath("tasks.logstore")
        defer { context.scratch.remove(storePath) }
        let model = try model()
        do {
            let store = try Store(path: storePath, model: model, options: JournalOptions(durability: .deferredToOS, compaction: .manual))
            defer { store.close() }
            let objects = store.newContext()
            let saved = try names.map { name in
                let project = try objects.insert(BenchProject.self)
                project.name = name
                return project
            }
            for values in tasks {
                let task = try objects.insert(BenchTask.self)
                task.title = values.title
                task.done = values.done
                task.due = Date(timeIntervalSinceReferenceDate: values.due)
                task.project = saved[values.project]
            }
            try objects.save()
        }
        let store = try Store(path: storePath, model: model, options: JournalOptions(access: .readOnly))
        defer { store.close() }
        let projectIDs: [ObjectID] = try {
            let byName = Dictionary(uniqueKeysWithValues: try store.newContext().fetch(FetchRequest(entityName: "Project"), as: BenchProject.self).map { ($0.name ?? "", $0.objectID) })
            return try names.map { name in
                guard let id = byName[name] else { throw BenchmarkError("LogStore has no project named \(name)") }
                return id
            }
        }()

        // SQLite: the same projects and tasks, rows in the same order; one
        // database indexed on the foreign key, one on it and done.
        let indexes = [("task(projectId)", "projectId"), ("task(projectId, done)", "projectId, done")]
        let databases = try indexes.enumerated().map { number, index in
            try GRDBTasks(path: context.scratch.freshPath("tasks-\(number).sqlite"), projects: names, tasks: tasks, indexing: index.1)
        }
        defer { for database in databases { database.remove() } }

        let request = { (project: ObjectID) throws -> LogStore.FetchRequest in
            LogStore.FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == %@ AND done == NO", project), sortDescriptors: [SortKey("due")])
        }
        let plan = try store.newContext().explain(try request(projectIDs[0]))

        /// Every project's query once per round, each timed alone, in an
        /// order shuffled once (the same for every case), each result
        /// checked against the expected titles after the clock stops.
        var shuffler = SeededRandom(seed: 77)
        let order = Array(0..<projects).shuffled(using: &shuffler)
        func queries(_ engine: String, _ query: (Int) throws -> [String]) throws -> [Double] {
            try order.map { project in
                var titles: [String] = []
                let seconds = try Stopwatch.seconds { titles = try query(project) }
                guard titles == expectedTitles[project] else {
                    throw BenchmarkError("\(engine): \(names[project])'s open tasks by due date are \(titles.count) titles, not the \(expectedTitles[project].count) expected (first \(titles.first ?? "none"), expected \(expectedTitles[project].first ?? "none"))")
                }
                return 1 / seconds
            }
        }
        typealias Query = (Int) throws -> [String]
        let logStoreQuery: Query = { project in
            // The context lives until the titles are read: objects read through it.
            let objects = store.newContext()
            return try withExtendedLifetime(objects) { try objects.fetch(try request(projectIDs[project]), as: BenchTask.self).map { $0.title ?? "" } }
        }
        var cases: [(String, Query)] = [("LogStore", logStoreQuery)]
        for database in databases {
            let query: Query = { project in try database.openTasks(ofProject: Int64(project + 1)) }
            cases.append(("GRDB", query))
        }
        context.log("relationships: \(projects) queries per case, \(cases.count) cases, \(context.repetitions) rounds")
        var rates = Array(repeating: [Double](), count: cases.count)
        for _ in 0..<context.repetitions {
            for (index, (engine, query)) in cases.enumerated() { rates[index] += try queries(engine, query) }
        }
        let medians = rates.map(Rates.init(samples:))
        let perProject = "\(count.formatted()) tasks in \(projects) projects"
        let logStore = report.add("LogStore fetch project == %@ AND done == NO by due, \(perProject)", medians[0], unit: "queries/s")
        let grdb = zip(indexes, medians.dropFirst()).map { index, rates in
            report.add("GRDB WHERE projectId = ? AND done = 0 ORDER BY due, index on \(index.0)", rates, unit: "queries/s")
        }
        for (index, figure) in zip(indexes, grdb) {
            report.compare("LogStore ÷ GRDB (index on \(index.0)), one project's open tasks by due", logStore, over: figure)
        }
        report.fact("one project's open tasks by due (medians)", zip(["LogStore"] + indexes.map { "GRDB, index on \($0.0)" }, medians)
            .map { "\($0.0) \(String(format: "%.3f", 1e3 / $0.1.median)) ms" }.joined(separator: ", "))
        report.fact("LogStore's plan for one project's open tasks", plan.description)
        report.note("open tasks: model Project (name, tasks: to-many Task, inverse project) and Task (title: String, done: Bool, due: Date, project: to-one Project, inverse tasks), typed subclasses with @Managed properties; \(perProject) at random, a third done; SQLite: project(id INTEGER PRIMARY KEY, name TEXT NOT NULL) and task(id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL, due REAL NOT NULL, projectId INTEGER REFERENCES project(id)), ANALYZEd, in two databases: one with an index on task(projectId), one on task(projectId, done)")
        report.note("open tasks: a query is one project's tasks with done == NO sorted by due (SQLite: ORDER BY due, id, LogStore's order of ties); LogStore fetches typed objects in a fresh context from the store opened read-only (the journal of one save) and reads each title, GRDB reads id, title, done, due and projectId of each row in one read and keeps the title; each round runs every project's query once, each timed alone, in one shuffled order; the figures are medians over \(context.repetitions) rounds × \(projects) projects; after each query, untimed, its titles are compared with the expected ones in order")
    }
}

/// A GRDB database of projects and tasks: WAL, synchronous FULL, foreign
/// keys enforced, an index on `columns` of task, analyzed.
final class GRDBTasks {
    let path: String
    let writer: any DatabaseWriter

    init(path: String, projects: [String], tasks: [TaskValues], indexing columns: String) throws {
        self.path = path
        writer = try GRDBPeople.open(path, synchronousFull: true, pool: false)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TABLE project (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE task (
                    id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL, due REAL NOT NULL,
                    projectId INTEGER REFERENCES project(id));
                CREATE INDEX task_project ON task(\(columns));
                """)
        }
        try writer.write { db in
            let insertProject = try db.cachedStatement(sql: "INSERT INTO project (id, name) VALUES (?, ?)")
            for (index, name) in projects.enumerated() { try insertProject.execute(arguments: [index + 1, name]) }
            let insertTask = try db.cachedStatement(sql: "INSERT INTO task (title, done, due, projectId) VALUES (?, ?, ?, ?)")
            for task in tasks { try insertTask.execute(arguments: [task.title, task.done, task.due, task.project + 1]) }
        }
        try writer.writeWithoutTransaction { db in try db.execute(sql: "ANALYZE") }
    }

    /// The titles of a project's open tasks by due date.
    func openTasks(ofProject project: Int64) throws -> [String] {
        try writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT id, title, done, due, projectId FROM task WHERE projectId = ? AND done = 0 ORDER BY due, id")
            return try Row.fetchAll(statement, arguments: [project]).map { $0[1] as String }
        }
    }

    func remove() {
        if let queue = writer as? DatabaseQueue { try? queue.close() }
        SQLiteFiles.remove(path)
    }
}
