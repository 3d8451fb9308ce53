// Scenario 2 of SCENARIOS.md: relationships, validation, derived attributes,
// a named transformer storing text. Fetched properties need the predicate
// language of the next issue and are not here yet.

import Foundation
import Testing
@testable import LogStore

struct RGBA: Equatable, Sendable {
    var red, green, blue, alpha: Double
}

/// Stores a color as the text "r,g,b,a", as the scenario asks.
struct RGBATextTransformer: StoreValueTransformer {
    func transformedValue(_ value: Any) throws(LogStoreError) -> Data {
        guard let color = value as? RGBA else { throw LogStoreError(.wrongType, "RGBATextTransformer takes an RGBA, not a \(type(of: value))") }
        return Data("\(color.red),\(color.green),\(color.blue),\(color.alpha)".utf8)
    }

    func reverseTransformedValue(_ data: Data) throws(LogStoreError) -> Any {
        let parts = String(decoding: data, as: UTF8.self).split(separator: ",").compactMap { Double($0) }
        guard parts.count == 4 else { throw LogStoreError(.transformerFailed, "not r,g,b,a text") }
        return RGBA(red: parts[0], green: parts[1], blue: parts[2], alpha: parts[3])
    }
}

final class Hero: ManagedObject {
    @Managed("name") var name: String?
    @Managed("secretIdentity") var secretIdentity: String?
    @Managed("birthdate") var birthdate: Date?
    @Managed("sex") var sex: String?
    @Managed("favoriteColor") var favoriteColor: RGBA?
    @Managed("powers") var powers: Set<Power>
    @Managed("age") var age: Int?
    @Managed("olderHeroes") var olderHeroes: [Hero]?
    @Managed("youngerHeroes") var youngerHeroes: [Hero]?
    @Managed("sameSexHeroes") var sameSexHeroes: [Hero]?
}

final class Power: ManagedObject {
    @Managed("name") var name: String?
    @Managed("source") var source: String?
    @Managed("hero") var hero: Hero?
}

enum Heroes {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func model() throws -> Model {
        ValueTransformers.register(RGBATextTransformer(), named: "RGBAText")
        return try Model {
            Entity("Hero", Hero.self) {
                Attribute("name", .string, optional: false, rules: [.minimumLength(1)])
                Attribute("secretIdentity", .string)
                Attribute("birthdate", .date)
                Attribute("sex", .string, rules: [.allowedStrings(["Male", "Female"])])
                Attribute("favoriteColor", .transformable("RGBAText"))
                DerivedAttribute("age") { hero in
                    guard let birthdate = hero["birthdate"] as? Date else { return nil }
                    return Calendar(identifier: .gregorian).dateComponents([.year], from: birthdate, to: now).year
                }
                Relationship("powers", to: "Power", inverse: "hero", toMany: true, deleteRule: .cascade)
                FetchedProperty("olderHeroes", of: "Hero", where: "birthdate < $FETCH_SOURCE.birthdate", sortedBy: [SortKey("birthdate")])
                FetchedProperty("youngerHeroes", of: "Hero", where: "birthdate > $FETCH_SOURCE.birthdate", sortedBy: [SortKey("birthdate")])
                FetchedProperty("sameSexHeroes", of: "Hero", where: "sex == $FETCH_SOURCE.sex AND SELF != $FETCH_SOURCE", sortedBy: [SortKey("name")])
            }
            Entity("Power", Power.self) {
                Attribute("name", .string)
                Attribute("source", .string)
                Relationship("hero", to: "Hero", inverse: "powers", deleteRule: .nullify)
            }
        }
    }
}

@Suite("Scenario 2: heroes")
struct HeroesScenarioTests {
    @Test("Heroes with powers: cascade and nullify, derived age, color through a named transformer, validation with rollback, relaunch")
    func heroes() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.logstore"
            let model = try Heroes.model()
            let store = try Store(path: path, model: model)
            let context = store.newContext()

            let hero = try context.insert(Hero.self)
            hero.name = "Spider-Man"
            hero.secretIdentity = "Peter Parker"
            hero.birthdate = Calendar(identifier: .gregorian).date(from: DateComponents(year: 2001, month: 8, day: 10))
            hero.sex = "Male"
            hero.favoriteColor = RGBA(red: 1, green: 0, blue: 0, alpha: 1)
            #expect(hero.isInserted, "a new hero can be told apart from a saved one")
            for name in ["Wall-crawling", "Spider-sense", "Web-slinging"] {
                let power = try context.insert(Power.self)
                power.name = name
                power.source = "Radioactive spider"
                try hero.add(power, to: "powers")
                #expect(power.hero === hero)
            }
            #expect(hero.age == 25)
            try context.save()
            #expect(!hero.isInserted && !hero.hasChanges)

            // Remove one power from the set, delete another (nullify).
            let sense = try #require(hero.powers.first { $0.name == "Spider-sense" })
            try hero.remove(sense, from: "powers")
            #expect(sense.hero == nil)
            let web = try #require(hero.powers.first { $0.name == "Web-slinging" })
            try context.delete(web)
            #expect(hero.powers.compactMap(\.name) == ["Wall-crawling"])
            try context.save()

            // Validation: empty name and a sex not in the list fail together; nothing is written.
            hero.name = ""
            hero.sex = "Unknown"
            let sizeBefore = try JournalFixtures.fileSize(path)
            let error = #expect(throws: LogStoreError.self) { try context.save() }
            #expect(error?.kind == .validationFailed)
            #expect(Set(error?.details.compactMap(\.attribute) ?? []) == ["name", "sex"])
            #expect(error?.details.allSatisfy { $0.entity == "Hero" } == true)
            #expect(error?.message.contains("Hero.sex breaks the rule \"one of Male, Female\"") == true, "\(error?.message ?? "")")
            #expect(try JournalFixtures.fileSize(path) == sizeBefore)
            context.rollback()
            #expect(hero.name == "Spider-Man" && hero.sex == "Male")
            store.close()

            let reopened = try Store(path: path, model: model)
            defer { reopened.close() }
            let fresh = reopened.newContext()
            let heroes = try fresh.fetchAll(Hero.self)
            #expect(heroes.count == 1)
            let loaded = try #require(heroes.first)
            #expect(loaded.favoriteColor == RGBA(red: 1, green: 0, blue: 0, alpha: 1))
            #expect(loaded.powers.compactMap(\.name) == ["Wall-crawling"])
            #expect(try fresh.count("Power") == 2, "the removed power still exists, without a hero")
            // Cascade: deleting the hero deletes its powers.
            try fresh.delete(loaded)
            try fresh.save()
            #expect(try fresh.fetchAll(Power.self).compactMap(\.name) == ["Spider-sense"])
        }
    }

    @Test("Fetched properties: older, younger and same-sex heroes, evaluated against the hero that owns them, unsaved changes included")
    func fetchedProperties() throws {
        try withStore(try Heroes.model()) { store, _ in
            let context = store.newContext()
            func hero(_ name: String, _ year: Int, _ sex: String) throws -> Hero {
                let hero = try context.insert(Hero.self)
                hero.name = name
                hero.sex = sex
                hero.birthdate = Calendar(identifier: .gregorian).date(from: DateComponents(year: year, month: 1, day: 1))
                return hero
            }
            let diana = try hero("Diana", 1941, "Female")
            let clark = try hero("Clark", 1938, "Male")
            let bruce = try hero("Bruce", 1939, "Male")
            let kara = try hero("Kara", 1959, "Female")
            try context.save()
            #expect(diana.olderHeroes?.compactMap(\.name) == ["Clark", "Bruce"])
            #expect(diana.youngerHeroes?.compactMap(\.name) == ["Kara"])
            #expect(clark.sameSexHeroes?.compactMap(\.name) == ["Bruce"])
            #expect(kara.sameSexHeroes?.compactMap(\.name) == ["Diana"])
            #expect((diana["olderHeroes"] as? [ManagedObject])?.count == 2)
            // A derived attribute sorts and filters saved heroes too (objects compute it).
            let byAge = try context.fetch(FetchRequest(entityName: "Hero", predicate: try ObjectPredicate("age > 80"), sortDescriptors: [SortKey("age")]), as: Hero.self)
            #expect(byAge.compactMap(\.name) == ["Diana", "Bruce", "Clark"])
            // An unsaved hero counts, as it would in a fetch.
            _ = try hero("Barry", 1940, "Male")
            #expect(bruce.youngerHeroes?.compactMap(\.name) == ["Barry", "Diana", "Kara"])
            #expect(clark.sameSexHeroes?.compactMap(\.name) == ["Barry", "Bruce"])
            #expect(throws: LogStoreError.self) { try clark.setValue([], forKey: "olderHeroes") }
        }
    }
}
