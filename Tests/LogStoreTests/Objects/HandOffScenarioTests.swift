// Scenarios 3 and 4 of SCENARIOS.md, the identity map, and contexts saving
// concurrently while the main context reads (run under ThreadSanitizer in CI).

import Foundation
import Testing
@testable import LogStore

enum People {
    static func model() throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("firstName", .string)
                Attribute("lastName", .string)
                Attribute("age", .int64, default: Int64(0))
            }
        }
    }
}

struct LaptopColor: Equatable, Sendable {
    var red, green, blue, alpha: UInt8
    static let red = LaptopColor(red: 255, green: 0, blue: 0, alpha: 255)
}

/// Stores a color's four components as four bytes.
struct LaptopColorTransformer: StoreValueTransformer {
    func transformedValue(_ value: Any) throws(LogStoreError) -> Data {
        guard let color = value as? LaptopColor else { throw LogStoreError(.wrongType, "LaptopColorTransformer takes a LaptopColor, not a \(type(of: value))") }
        return Data([color.red, color.green, color.blue, color.alpha])
    }

    func reverseTransformedValue(_ data: Data) throws(LogStoreError) -> Any {
        guard data.count == 4 else { throw LogStoreError(.transformerFailed, "a color is 4 bytes, not \(data.count)") }
        return LaptopColor(red: data[data.startIndex], green: data[data.startIndex + 1], blue: data[data.startIndex + 2], alpha: data[data.startIndex + 3])
    }
}

@Suite("Scenarios 3 and 4: hand-off by ID, custom transformer")
struct HandOffScenarioTests {
    @Test("A background context finds people aged 100 to 200 and hands their IDs to the main context, which reads them")
    @MainActor
    func handOff() async throws {
        try await withMainActorStore(try People.model(), options: JournalOptions(durability: .deferredToOS)) { store in
            let writer = store.newBackgroundContext()
            try await writer.perform { context in
                for age in stride(from: 0, to: 300, by: 5) {
                    let person = try context.insert("Person")
                    person["firstName"] = "First\(age)"
                    person["lastName"] = "Last\(age)"
                    person["age"] = Int64(age)
                }
                try context.save()
            }
            let ids = try await store.newBackgroundContext().perform { context in
                var request = FetchRequest(entityName: "Person", predicate: try ObjectPredicate("(age >= 100) AND (age <= 200)"))
                request.fetchBatchSize = 20
                return try context.fetchIDs(request)
            }
            #expect(ids.count == 21)
            let main = store.mainContext
            let people = try ids.map { try main.existingObject(with: $0) }
            let ages: [Int64] = people.compactMap { $0["age"] as? Int64 }
            let expected: [Int64] = (0...20).map { Int64(100 + $0 * 5) }
            #expect(ages == expected)
            #expect(people.allSatisfy { ($0["firstName"] as? String) == "First\($0["age"] as! Int64)" })
            // URI form round trip.
            let uri = ids[0].uriRepresentation
            #expect(ObjectID(uriRepresentation: URL(string: uri.absoluteString)!) == ids[0])
            #expect(try main.object(with: ObjectID(uriRepresentation: uri)!) === people[0], "identity map: one ID, one instance")
        }
    }

    @Test("A laptop saved with a red color comes back red after the reverse transformation; a failed save reports, not crashes")
    func laptop() throws {
        try withTemporaryDirectory { directory in
            ValueTransformers.register(LaptopColorTransformer(), named: "LaptopColor")
            let model = try Model {
                Entity("Laptop") {
                    Attribute("model", .string)
                    Attribute("color", .transformable("LaptopColor"))
                }
            }
            let path = directory + "/laptop.logstore"
            do {
                let store = try Store(path: path, model: model)
                let context = store.newContext()
                let laptop = try context.insert("Laptop")
                laptop["model"] = "model name"
                laptop["color"] = LaptopColor.red
                try context.save()
                let wrong = try context.insert("Laptop")
                wrong["color"] = "red"
                let error = #expect(throws: LogStoreError.self) { try context.save() }
                #expect(error?.kind == .validationFailed && error?.details.first?.attribute == "color", "\(String(describing: error))")
                context.rollback()
                store.close()
            }
            let store = try Store(path: path, model: model)
            defer { store.close() }
            // Objects hold their context weakly: keep it while using them.
            let context = store.newContext()
            var request = FetchRequest(entityName: "Laptop", predicate: try ObjectPredicate("color == %@", LaptopColor.red))
            request.fetchLimit = 1
            let laptops = try context.fetch(request)
            #expect(laptops.count == 1)
            #expect(try context.fetch(FetchRequest(entityName: "Laptop", predicate: try ObjectPredicate("color == %@", LaptopColor(red: 0, green: 0, blue: 255, alpha: 255)))).isEmpty)
            #expect(laptops.first?["model"] as? String == "model name")
            #expect(laptops.first?["color"] as? LaptopColor == .red)
            let released = try store.newContext().fetchAll("Laptop")
            #expect(throws: LogStoreError.self, "an object whose context is gone fails clearly") { try released.first?.value(forKey: "model") }
            #expect(released.first?.managedObjectContext == nil)
            #expect(released.first?.objectID == laptops.first?.objectID, "its ID outlives its context")
        }
    }

    @Test("Identity map: the same ID twice in one context is one instance; two contexts hold two")
    func identityMap() throws {
        try withStore(try People.model()) { store, _ in
            let first = store.newContext(), second = store.newContext()
            let person = try first.insert("Person")
            try first.save()
            #expect(try first.object(with: person.objectID) === person)
            #expect(try first.fetchAll("Person").first === person)
            let other = try second.object(with: person.objectID)
            #expect(other !== person)
            #expect(try second.existingObject(with: person.objectID) === other)
        }
    }

    @Test("Four background contexts insert and update concurrently while the main context reads; every save lands")
    @MainActor
    func concurrentContexts() async throws {
        try await withMainActorStore(try People.model(), options: JournalOptions(durability: .groupCommit)) { store in
            let saves = 25
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    let background = store.newBackgroundContext()
                    group.addTask {
                        for round in 0..<saves {
                            try await background.perform { context in
                                let person = try context.insert("Person")
                                person["firstName"] = "Worker\(worker)"
                                person["age"] = Int64(round)
                                _ = try context.fetchIDs("Person")
                                try context.save()
                            }
                        }
                    }
                }
                for _ in 0..<20 {
                    let main = store.mainContext
                    let people = try main.fetchAll("Person")
                    _ = people.map { $0["firstName"] }
                    await Task.yield()
                }
                try await group.waitForAll()
            }
            let main = store.mainContext
            main.reset()
            #expect(try main.count("Person") == 4 * saves)
            let ages = try main.fetchAll("Person").compactMap { $0["age"] as? Int64 }
            #expect(ages.count == 4 * saves && ages.max() == Int64(saves - 1))
        }
    }

    @Test("Under group commit, two contexts saving the same record at once: exactly one save wins each round, the other gets .mergeConflict")
    func concurrentConflicts() throws {
        try withStore(try People.model(), options: JournalOptions(durability: .groupCommit)) { store, _ in
            let setup = store.newContext()
            let person = try setup.insert("Person")
            try setup.save()
            let id = person.objectID
            let first = store.newBackgroundContext(), second = store.newBackgroundContext()
            let rounds = 40
            for round in 0..<rounds {
                // Both load the record at the same version, then save at once.
                for (index, context) in [first, second].enumerated() {
                    context.performAndWait { context in
                        context.reset()
                        (try? context.existingObject(with: id))?["age"] = Int64(round * 10 + index)
                    }
                }
                let outcomes = Locked<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    let context = index == 0 ? first : second
                    let outcome = context.performAndWait { context -> String in
                        do throws(LogStoreError) {
                            try context.save()
                            return "saved"
                        } catch {
                            return error.kind.name
                        }
                    }
                    outcomes.withLock { $0.append(outcome) }
                }
                #expect(outcomes.withLock { $0.sorted() } == ["mergeConflict", "saved"], "round \(round)")
            }
            let age = try store.newContext().existingObject(with: id)["age"] as? Int64
            #expect(age.map { $0 / 10 } == Int64(rounds - 1))
        }
    }
}
