// The identity map's table against a dictionary.

import Foundation
import Testing
@testable import LogStore

@Suite("Identity map")
struct IdentityMapTests {
    @Test("Inserts, replacements, lookups and removals across two entities and many growths match a dictionary")
    func matchesADictionary() throws {
        let model = try Model {
            Entity("Item") { Attribute("name", .string) }
            Entity("Tag") { Attribute("label", .string) }
        }
        try withStore(model) { store, _ in
            let context = store.newContext()
            func makeObject(_ entity: EntityDescription, _ key: UInt64) -> ManagedObject {
                ManagedObject(ManagedObject.Creation(entity: entity, key: key, context: context.reference))
            }
            var map = IdentityMap()
            var expected: [ObjectID: ManagedObject] = [:]
            var random = JournalFixtures.SeededGenerator(seed: 0x1D)
            for _ in 0..<30_000 {
                let entity = model.entities[Int(random.next() % 2)]
                // Few keys, so that runs collide and removals shift objects back.
                let id = store.id(entity, random.next() % 3_000 + 1)
                if random.next() % 3 == 0 {
                    map[id] = nil
                    expected[id] = nil
                } else {
                    let object = makeObject(entity, id.key)
                    map[id] = object
                    expected[id] = object
                }
            }
            #expect(map.count == expected.count)
            #expect(Set(map.objects.map(ObjectIdentifier.init)) == Set(expected.values.map(ObjectIdentifier.init)))
            for entity in model.entities {
                for key in 0...3_010 as ClosedRange<UInt64> {
                    let id = store.id(entity, key)
                    #expect(map[id] === expected[id], "\(id)")
                }
            }
            // An ID of another store with the same entity and key is not found.
            let elsewhere = ObjectID(storeID: UUID(), entityName: "Item", key: expected.keys.first!.key)
            #expect(map[elsewhere] == nil)
        }
    }
}
