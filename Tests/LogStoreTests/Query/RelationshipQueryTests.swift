// Fetches by relationship (`project == %@`, `project IN %@`, `ANY tags == %@`,
// `project.name == "P1"`, `project == nil`) planned through the store's
// relationship pointers: each compared with the same fetch forced to a full
// scan and with evaluating the predicate on every object in memory, with
// unsaved changes, after a save, after reopening and after compaction.

import Foundation
import Testing
@testable import LogStore

@Suite("Relationship queries")
struct RelationshipQueryTests {
    /// Projects own tasks (one-to-many, stored in each task), tags and tasks
    /// are many-to-many (stored in each tag), a note belongs to one task
    /// (one-to-one, stored in the note). Deleting a project leaves its tasks
    /// pointing at it (`noAction`), so that pointers to a deleted record exist.
    static func model() throws -> Model {
        try Model {
            Entity("Project") {
                Attribute("name", .string, indexed: true)
                Attribute("color", .string)
                Relationship("tasks", to: "Task", inverse: "project", toMany: true, deleteRule: .noAction)
            }
            Entity("Task") {
                Attribute("title", .string)
                Attribute("done", .bool)
                Attribute("due", .date)
                Attribute("priority", .int64, indexed: true)
                Relationship("project", to: "Project", inverse: "tasks")
                Relationship("tags", to: "Tag", inverse: "tasks", toMany: true)
                Relationship("note", to: "Note", inverse: "task")
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("tasks", to: "Task", inverse: "tags", toMany: true)
            }
            Entity("Note") {
                Attribute("text", .string)
                Relationship("task", to: "Task", inverse: "note")
            }
        }
    }

    /// The attribute each entity's results are told apart by in dictionaries.
    static let labels = ["Project": "name", "Task": "title", "Tag": "name", "Note": "text"]

    /// The saved objects, by ID, so that they can be found again after reopening.
    struct Fixture {
        var projects: [ObjectID]
        var tasks: [ObjectID]
        var tags: [ObjectID]
        var notes: [ObjectID]
    }

    /// Six projects (the last without a name), four tags, 300 tasks (every
    /// 17th in no project, zero to two tags each, due dates with ties) and
    /// a note on every 10th task.
    static func populate(_ store: Store) throws -> Fixture {
        let context = store.newContext()
        let projects = try (0..<6).map { index in
            let project = try context.insert("Project")
            project["name"] = index == 5 ? nil : "P\(index)"
            project["color"] = index % 2 == 0 ? "red" : "blue"
            return project
        }
        let tags = try (0..<4).map { index in
            let tag = try context.insert("Tag")
            tag["name"] = "t\(index)"
            return tag
        }
        var notes: [ManagedObject] = []
        let tasks = try (0..<300).map { index in
            let task = try context.insert("Task")
            task["title"] = "T\(index)"
            task["done"] = index % 3 == 0
            task["due"] = Date(timeIntervalSinceReferenceDate: Double((index * 37) % 101) * 86_400)
            task["priority"] = Int64(index % 10)
            if index % 17 != 0 { task["project"] = projects[index % 6] }
            if index % 2 == 0 { try task.add(tags[index % 4], to: "tags") }
            if index % 5 != 0 { try task.add(tags[(index / 3) % 4], to: "tags") }
            if index % 10 == 0 {
                let note = try context.insert("Note")
                note["text"] = "N\(index)"
                note["task"] = task
                notes.append(note)
            }
            return task
        }
        try context.save()
        return Fixture(projects: projects.map(\.objectID), tasks: tasks.map(\.objectID), tags: tags.map(\.objectID), notes: notes.map(\.objectID))
    }

    static func open(_ path: String) throws -> Store {
        try Store(path: path, model: try model(), options: JournalOptions(durability: .deferredToOS, compaction: .manual))
    }

    /// One fetch to check, and the plan it must get.
    struct Case {
        var request: FetchRequest
        var strategy: FetchPlan.Strategy

        init(_ entity: String, _ predicate: ObjectPredicate, sort: [SortKey] = [SortKey("due"), SortKey("title")], limit: Int = 0, offset: Int = 0, _ strategy: FetchPlan.Strategy) {
            request = FetchRequest(entityName: entity, predicate: predicate, sortDescriptors: entity == "Task" ? sort : [], fetchLimit: limit, fetchOffset: offset)
            self.strategy = strategy
        }
    }

    static func lookup(_ relationship: String) -> FetchPlan.Strategy { .relationshipLookup(relationship: relationship) }

    /// `request` as planned gives what the same request forced to a full
    /// scan gives (its predicate OR FALSEPREDICATE, which the planner leaves
    /// to a scan), as objects, IDs, a count and dictionaries, in the same
    /// order; without a window (and unless `inMemory` is false), the objects
    /// are those whose predicate holds in memory; and the plan is `strategy`.
    static func check(_ test: Case, in context: ObjectContext, inMemory: Bool = true, checksPlan: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let request = test.request
        let label = "\(request.entityName) where \(request.predicate.map { "\($0)" } ?? "-") limit \(request.fetchLimit) offset \(request.fetchOffset)"
        var scan = request
        scan.predicate = request.predicate.map { $0 || .constant(false) }
        #expect(try context.explain(scan).strategy == .fullScan, "the reference fetch scans: \(label)", sourceLocation: sourceLocation)
        let planned = try context.fetch(request).map(\.objectID)
        let scanned = try context.fetch(scan).map(\.objectID)
        #expect(planned == scanned, "objects: \(label)", sourceLocation: sourceLocation)
        #expect(try context.fetchIDs(request) == scanned, "IDs: \(label)", sourceLocation: sourceLocation)
        #expect(try context.count(for: request) == scanned.count, "count: \(label)", sourceLocation: sourceLocation)
        let key = labels[request.entityName]!
        func dictionaries(_ request: FetchRequest) throws -> [String] {
            var request = request
            request.propertiesToFetch = [.attribute(key)]
            return try context.fetchDictionaries(request).map { ($0[key] as? String) ?? "nil" }
        }
        #expect(try dictionaries(request) == dictionaries(scan), "dictionaries: \(label)", sourceLocation: sourceLocation)
        if inMemory && request.fetchLimit == 0 && request.fetchOffset == 0, let predicate = request.predicate {
            let everything = try context.fetch(FetchRequest(entityName: request.entityName))
            let evaluated = try everything.filter(predicate).map(\.objectID)
            #expect(Set(planned) == Set(evaluated), "in memory: \(label)", sourceLocation: sourceLocation)
        }
        let plan = try context.explain(request)
        #expect(!checksPlan || plan.strategy == test.strategy, "plan: \(label): \(plan)", sourceLocation: sourceLocation)
    }

    /// Every form, with ObjectIDs and with objects as arguments.
    static func cases(_ fixture: Fixture, in context: ObjectContext) throws -> [Case] {
        let p1 = try context.object(with: fixture.projects[1])
        let p2ID = fixture.projects[2]
        let t0 = try context.object(with: fixture.tags[0])
        let t2ID = fixture.tags[2]
        let task20 = try context.object(with: fixture.tasks[20])
        let task40ID = fixture.tasks[40]
        let note30 = try context.object(with: fixture.notes[3])
        return [
            // A stored to-one.
            Case("Task", try ObjectPredicate("project == %@", p1), lookup("project")),
            Case("Task", try ObjectPredicate("project == %@", p2ID), lookup("project")),
            Case("Task", try ObjectPredicate("%@ == project", p1), lookup("project")),
            Case("Task", try ObjectPredicate("project == %@ AND done == NO", p1), lookup("project")),
            Case("Task", try ObjectPredicate("done == NO AND project == %@", p2ID), sort: [SortKey("due", ascending: false), SortKey("title")], lookup("project")),
            Case("Task", try ObjectPredicate("project == %@ AND done == NO", p1), limit: 5, offset: 3, lookup("project")),
            Case("Task", try ObjectPredicate("project == %@", p1), sort: [], lookup("project")),
            Case("Task", try ObjectPredicate("project == %@ AND title BEGINSWITH 'T1'", p1), lookup("project")),
            // Of two relationships, the one with fewer related records (P1 has 47 tasks, t0 75).
            Case("Task", try ObjectPredicate("ANY tags == %@ AND project == %@ AND done == NO", t0, p1), lookup("project")),
            Case("Task", try ObjectPredicate("note == %@ AND done == YES", note30), lookup("note")),
            Case("Task", try ObjectPredicate("project IN %@", [p1, p2ID] as [Any]), lookup("project")),
            Case("Task", try ObjectPredicate("project IN {%@, %@} AND done == YES", p2ID, p1), lookup("project")),
            Case("Task", try ObjectPredicate("project == nil"), lookup("project")),
            Case("Task", try ObjectPredicate("project == nil AND done == NO"), lookup("project")),
            // Through the to-one, to an attribute: indexed (name) and not (color).
            Case("Task", try ObjectPredicate("project.name == 'P1'"), lookup("project")),
            Case("Task", try ObjectPredicate("project.name IN {'P1', 'P3'} AND done == NO"), lookup("project")),
            Case("Task", try ObjectPredicate("project.name >= 'P3'"), lookup("project")),
            Case("Task", try ObjectPredicate("project.color == 'blue' AND done == NO"), lookup("project")),
            Case("Task", try ObjectPredicate("project.color BEGINSWITH[c] 'R'"), lookup("project")),
            // Comparisons that hold for a task without a project stay with the scan.
            Case("Task", try ObjectPredicate("project.name == nil"), .fullScan),
            Case("Task", try ObjectPredicate("project.name != 'P1'"), .fullScan),
            // A derived to-many (tags are stored in each tag).
            Case("Task", try ObjectPredicate("ANY tags == %@", t0), lookup("tags")),
            Case("Task", try ObjectPredicate("ANY tags == %@ AND done == NO", t2ID), lookup("tags")),
            Case("Task", try ObjectPredicate("tags CONTAINS %@", t0), lookup("tags")),
            Case("Task", try ObjectPredicate("%@ IN tags", t2ID), lookup("tags")),
            Case("Task", try ObjectPredicate("ANY tags IN %@", [t0, t2ID] as [Any]), lookup("tags")),
            Case("Task", try ObjectPredicate("ANY tags.name == 't1'"), lookup("tags")),
            // The stored to-many side, and the to-many inverse of a stored to-one.
            Case("Tag", try ObjectPredicate("ANY tasks == %@", task20), lookup("tasks")),
            Case("Tag", try ObjectPredicate("ANY tasks == %@", task40ID), lookup("tasks")),
            Case("Project", try ObjectPredicate("ANY tasks == %@", task20), lookup("tasks")),
            Case("Project", try ObjectPredicate("ANY tasks.priority == 3"), lookup("tasks")),
            // Reading 300 tasks for an unindexed title costs more than
            // testing the 6 projects: a scan.
            Case("Project", try ObjectPredicate("ANY tasks.title == 'T41'"), .fullScan),
            // One-to-one: stored in the note, derived in the task.
            Case("Note", try ObjectPredicate("task == %@", task40ID), lookup("task")),
            Case("Note", try ObjectPredicate("task.priority BETWEEN {2, 3} AND text != 'N20'"), lookup("task")),
            Case("Note", try ObjectPredicate("task.done == YES"), .fullScan),
            Case("Task", try ObjectPredicate("note == %@", note30), lookup("note")),
            Case("Task", try ObjectPredicate("note == nil AND done == YES"), lookup("note")),
            // The smaller candidate set wins: the priority index finds 30
            // tasks, P1 has 47; priorities 0 to 8 are 270.
            Case("Task", try ObjectPredicate("project == %@ AND priority == 3", p1), .indexLookup(attribute: "priority")),
            Case("Task", try ObjectPredicate("project == %@ AND priority IN {0, 1, 2, 3, 4, 5, 6, 7, 8}", p1), lookup("project")),
        ]
    }

    static func checkAll(_ fixture: Fixture, in context: ObjectContext, inMemory: Bool = true, checksPlans: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for test in try cases(fixture, in: context) { try check(test, in: context, inMemory: inMemory, checksPlan: checksPlans, sourceLocation: sourceLocation) }
    }

    @Test("The model under test stores each pair of relationships on one side: task.project, tag.tasks, note.task")
    func storedSides() throws {
        let model = try Self.model()
        func isStored(_ entity: String, _ name: String) -> Bool {
            let entity = model.entitiesByName[entity]!
            return entity.relationships.first { $0.name == name }!.isStored
        }
        #expect(isStored("Task", "project") && !isStored("Project", "tasks"))
        #expect(isStored("Tag", "tasks") && !isStored("Task", "tags"))
        #expect(isStored("Note", "task") && !isStored("Task", "note"))
    }

    @Test("Every form finds what a scan finds, and plans a relationship lookup; after reopening and after compaction too")
    func forms() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/tasks.logstore"
            let store = try Self.open(path)
            let fixture = try Self.populate(store)
            try Self.checkAll(fixture, in: store.newContext())
            try Self.afterReopeningAndCompacting(store, at: path) { try Self.checkAll(fixture, in: $0) }
        }
    }

    /// Closes `store`, then runs `check` on a fresh context of the store at
    /// `path` reopened, compacted, and reopened again.
    static func afterReopeningAndCompacting(_ store: Store, at path: String, _ check: (ObjectContext) throws -> Void) throws {
        store.close()
        var store = try open(path)
        try check(store.newContext())
        _ = try store.compact()
        try check(store.newContext())
        store.close()
        store = try open(path)
        defer { store.close() }
        try check(store.newContext())
    }

    @Test("A relationship lookup reads only the related records")
    func readsOnlyReferrers() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.open(directory + "/tasks.logstore")
            defer { store.close() }
            let fixture = try Self.populate(store)
            let context = store.newContext()
            let request = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == %@ AND done == NO", fixture.projects[1]), sortDescriptors: [SortKey("due")])
            let plan = try context.explain(request)
            let inProject = (0..<300).filter { $0 % 17 != 0 && $0 % 6 == 1 }
            #expect(plan.strategy == Self.lookup("project"))
            #expect(plan.examinedRows == inProject.count, "\(plan)")
            #expect(plan.matchedRows == inProject.filter { $0 % 3 != 0 }.count, "\(plan)")
            #expect(try context.fetch(request).map { $0["title"] as? String }.count == plan.matchedRows)
        }
    }

    @Test("IDs of another store, of another entity and of a deleted object match nothing; tasks left pointing at a deleted project have none")
    func foreignAndDeletedIDs() throws {
        try withTemporaryDirectory { directory in
            let store = try Self.open(directory + "/tasks.logstore")
            defer { store.close() }
            let fixture = try Self.populate(store)
            let other = try Self.open(directory + "/other.logstore")
            defer { other.close() }
            _ = try Self.populate(other)
            let foreign = try other.newContext().fetch(FetchRequest(entityName: "Project"))[1].objectID
            #expect(foreign.key == fixture.projects[1].key && foreign.storeID != fixture.projects[1].storeID)
            var context = store.newContext()
            for test in [
                Case("Task", try ObjectPredicate("project == %@", foreign), Self.lookup("project")),
                Case("Task", try ObjectPredicate("project IN %@", [foreign, fixture.projects[2]]), Self.lookup("project")),
                Case("Task", try ObjectPredicate("project == %@", fixture.tags[1]), Self.lookup("project")),
                Case("Task", try ObjectPredicate("ANY tags == %@", fixture.projects[1]), Self.lookup("tags")),
            ] {
                try Self.check(test, in: context)
            }
            #expect(try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == %@", foreign))) == 0)

            // Deleting P4 leaves its tasks' links to it (noAction).
            try context.delete(try context.object(with: fixture.projects[4]))
            try context.delete(try context.object(with: fixture.tags[2]))
            try context.save()
            context = store.newContext()
            let deleted = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == %@", fixture.projects[4]))
            #expect(try context.fetch(deleted).isEmpty)
            #expect(try context.count(for: deleted) == 0)
            let orphans = (0..<300).filter { $0 % 17 == 0 || $0 % 6 == 4 }.count
            #expect(try context.count(for: FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == nil"))) == orphans)
            // In memory too: a link to the deleted project reaches no object.
            try Self.checkAll(fixture, in: context)
            try Self.check(Case("Task", try ObjectPredicate("ANY tags == %@", fixture.tags[2]), Self.lookup("tags")), in: context)
        }
    }

    @Test("Unsaved changes count as they are now: a moved task leaves its old project for the new one, inserted and deleted tasks come and go; then saved, reopened, compacted")
    func pendingChanges() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/tasks.logstore"
            let store = try Self.open(path)
            var fixture = try Self.populate(store)
            let context = store.newContext()
            let p1 = try context.object(with: fixture.projects[1])
            let p2 = try context.object(with: fixture.projects[2])
            let open = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == %@ AND done == NO", p1), sortDescriptors: [SortKey("due"), SortKey("title")])
            let before = try context.fetch(open)
            let moved = before[0], deleted = before[1], finished = before[2]
            moved["project"] = p2
            try context.delete(deleted)
            finished["done"] = true
            // Changed and deleted tasks are tested as objects; the other
            // tasks' links are as saved, so the lookup stays.
            #expect(try context.explain(open).strategy == Self.lookup("project"))
            let inserted = try context.insert("Task")
            inserted["title"] = "new in P1"
            inserted["done"] = false
            inserted["project"] = p1
            let project = try context.insert("Project")
            project["name"] = "P9"
            let newTask = try context.insert("Task")
            newTask["title"] = "new in P9"
            newTask["project"] = project
            let t1 = try context.object(with: fixture.tags[1])
            try inserted.add(t1, to: "tags")
            try moved.add(t1, to: "tags")

            let after = try context.fetch(open)
            #expect(!after.contains(moved) && !after.contains(deleted) && !after.contains(finished))
            #expect(after.contains(inserted))
            #expect(after.count == before.count - 3 + 1)
            #expect(try context.count(for: open) == after.count)
            let inP2 = FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == %@", p2))
            #expect(try context.fetch(inP2).contains(moved))
            #expect(try context.fetch(FetchRequest(entityName: "Task", predicate: try ObjectPredicate("project == %@", project))) == [newTask])
            var saved = open
            saved.includesPendingChanges = false
            #expect(try context.fetch(saved).map(\.objectID) == before.map(\.objectID), "as saved")
            #expect(try context.count(for: saved) == before.count)

            // Projects and tags now have unsaved changes the predicates reach
            // (a new project, tags linked to tasks): saved tasks are tested
            // as the context's objects, so the plans are scans; the results
            // must agree all the same.
            try Self.checkAll(fixture, in: context, checksPlans: false)
            for test in [
                Case("Task", try ObjectPredicate("project == %@", project), Self.lookup("project")),
                Case("Task", try ObjectPredicate("project IN %@ AND done == NO", [project, p1]), Self.lookup("project")),
                Case("Task", try ObjectPredicate("ANY tags == %@", t1), Self.lookup("tags")),
                Case("Task", try ObjectPredicate("project.name == 'P9'"), Self.lookup("project")),
            ] {
                try Self.check(test, in: context, checksPlan: false)
            }

            try context.save()
            fixture.projects.append(project.objectID)
            let fresh = store.newContext()
            #expect(try fresh.fetch(open).map(\.objectID) == after.map(\.objectID))
            try Self.checkAll(fixture, in: fresh)
            try Self.check(Case("Task", try ObjectPredicate("project == %@", project.objectID), Self.lookup("project")), in: fresh)
            try Self.afterReopeningAndCompacting(store, at: path) { context in
                try Self.checkAll(fixture, in: context)
                #expect(try context.fetchIDs(open) == after.map(\.objectID))
            }
        }
    }
}
