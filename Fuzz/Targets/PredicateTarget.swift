// Fuzz target: arbitrary text as a predicate format string. Whatever parses
// must print as text that parses back to an equal predicate,
// selecting the same people, and must select the same people whether
// fetched through indexes, fetched by a scan, or evaluated on objects in
// memory.

import Foundation
import LogStore

enum PredicateTarget {
    /// The arguments `%@`, `%K`, `%d` and `%f` take, in order.
    nonisolated(unsafe) static let arguments: [Any?] = ["age", "Zoë", 42, 2.5, nil, ["Ada", "Bo"], "name"]

    /// The same people in a store whose attributes are indexed and in one
    /// whose are not, and every person as an object in memory.
    struct People {
        let indexed: ObjectContext
        let scanned: ObjectContext
        let objects: [ManagedObject]
        let stores: [Store]
    }

    nonisolated(unsafe) static let people: People = {
        let directory = StoreFileTarget.directory + "-predicates"
        try? FileManager.default.removeItem(atPath: directory)
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var contexts: [ObjectContext] = []
        var stores: [Store] = []
        for indexed in [true, false] {
            let store = try! Store(path: directory + "/people-\(indexed).logstore", model: model(indexed: indexed), options: JournalOptions(durability: .deferredToOS, compaction: .manual))
            let context = store.newContext()
            fill(context)
            try! context.save()
            stores.append(store)
            contexts.append(store.newContext())
        }
        let objects = try! contexts[1].fetchAll("Person")
        return People(indexed: contexts[0], scanned: contexts[1], objects: objects, stores: stores)
    }()

    static func model(indexed: Bool) -> Model {
        try! Model {
            Entity("Person") {
                Attribute("name", .string, indexed: indexed)
                Attribute("age", .int64, indexed: indexed)
                Attribute("score", .double, indexed: indexed)
                Attribute("born", .date, indexed: indexed)
                Attribute("active", .bool)
                Attribute("nickname", .string)
                Attribute("photo", .data)
                Relationship("team", to: "Team", inverse: "members")
                Relationship("friends", to: "Person", inverse: "friends", toMany: true)
            }
            Entity("Team") {
                Attribute("label", .string, indexed: indexed)
                Relationship("members", to: "Person", inverse: "team", toMany: true)
            }
        }
    }

    static func fill(_ context: ObjectContext) {
        let names: [String?] = ["Ada", "ada", "Zoë", "Zoe", "Émile", "Bo", "bo*", "O'Brien", "Λάμδα", "", nil, "a?c", "Ada Lovelace", "\\"]
        let teams = ["Red", "red", "Blue", "Ünion"].map { label in
            let team = try! context.insert("Team")
            team["label"] = label
            return team
        }
        var people: [ManagedObject] = []
        for (index, name) in names.enumerated() {
            let person = try! context.insert("Person")
            person["name"] = name
            person["age"] = index % 5 == 4 ? nil : Int64(index * 7 % 50) - 3
            person["score"] = [0.5, -1, 2.5, .infinity, 1e300, 0][index % 6]
            person["born"] = Date(timeIntervalSinceReferenceDate: Double(index) * 86_400 * 365)
            person["active"] = index % 3 == 0
            person["nickname"] = index % 4 == 0 ? nil : "n\(index)"
            person["photo"] = index % 2 == 0 ? Data([UInt8(index), 0, 255]) : nil
            person["team"] = index % 5 == 3 ? nil : teams[index % teams.count]
            people.append(person)
        }
        for (index, person) in people.enumerated() where index % 3 != 1 {
            try! person.add(people[(index + 1) % people.count], to: "friends")
            try! person.add(people[(index * 5) % people.count], to: "friends")
        }
    }

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let predicate = try? ObjectPredicate(format: text, argumentArray: arguments) else { return }

        // The printed form must parse back to an equal predicate (the
        // arguments hold no custom values, which have no syntax), and
        // select the same people (checked below).
        let printed = predicate.description
        let reparsed: ObjectPredicate
        do { reparsed = try ObjectPredicate(format: printed, argumentArray: []) } catch {
            fatalError("\(text.debugDescription) parses, but its description \(printed.debugDescription) does not: \(error)")
        }
        precondition(reparsed == predicate, "\(text.debugDescription) prints as \(printed.debugDescription), which parses to a different predicate, printing as \(reparsed.description.debugDescription)")

        let people = Self.people
        for entity in ["Person", "Team"] {
            let request = FetchRequest(entityName: entity, predicate: predicate)
            guard let indexed = try? people.indexed.fetch(request), let scanned = try? people.scanned.fetch(request) else { continue }
            let indexedKeys = Set(indexed.map { $0.objectID.key }), scannedKeys = Set(scanned.map { $0.objectID.key })
            precondition(indexedKeys == scannedKeys, "\(text.debugDescription) on \(entity) selects \(indexedKeys.sorted()) with indexes, \(scannedKeys.sorted()) without")
            if let again = try? people.scanned.fetch(FetchRequest(entityName: entity, predicate: reparsed)) {
                let againKeys = Set(again.map { $0.objectID.key })
                precondition(againKeys == scannedKeys, "\(text.debugDescription) on \(entity) selects \(scannedKeys.sorted()), but as printed, \(printed.debugDescription), it selects \(againKeys.sorted())")
            }
            if let counted = try? people.indexed.count(for: request) {
                precondition(counted == indexed.count, "\(text.debugDescription) on \(entity) counts \(counted) but fetches \(indexed.count)")
            }
            guard entity == "Person" else { continue }
            var evaluated: Set<UInt64> = []
            do {
                for object in people.objects where try predicate.evaluate(with: object) { evaluated.insert(object.objectID.key) }
            } catch { continue }
            precondition(evaluated == scannedKeys, "\(text.debugDescription) selects \(scannedKeys.sorted()) in a fetch, \(evaluated.sorted()) in memory")
        }
    }
}
