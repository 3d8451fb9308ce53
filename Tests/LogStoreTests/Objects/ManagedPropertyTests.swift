// Typed @Managed properties: the direct path for AttributeValue types, the
// general path for the rest, and the same errors on both.

import Foundation
import Testing
@testable import LogStore

final class Sample: ManagedObject {
    @Managed("text") var text: String?
    @Managed("small") var small: Int16
    @Managed("medium") var medium: Int32
    @Managed("large") var large: Int64
    @Managed("large") var largeAsInt: Int
    @Managed("small") var smallAsInt: Int
    @Managed("real") var real: Double
    @Managed("single") var single: Float
    @Managed("flag") var flag: Bool
    @Managed("when") var when: Date?
    @Managed("blob") var blob: Data?
    @Managed("identifier") var identifier: UUID?
    @Managed("link") var link: URL?
    @Managed("amount") var amount: Decimal?
    @Managed("text") var textAsNumber: Int
    // Optionals over the same attributes, and the app's own type.
    @Managed("text") var doubleOptionalText: String??
    @Managed("small") var optionalSmall: Int16?
    @Managed("small") var smallAsOptionalInt: Int?
    @Managed("large") var optionalLarge: Int64?
    @Managed("large") var largeAsOptionalInt: Int?
    @Managed("real") var temperature: Celsius?
}

/// A type the app conforms to AttributeValue itself: found by the cast,
/// not by LogStore's list.
struct Celsius: AttributeValue, Equatable {
    var degrees: Double
    init(degrees: Double) { self.degrees = degrees }
    var storedValue: StoredValue { .double(degrees) }
    init?(storedValue: StoredValue) {
        guard case .double(let degrees) = storedValue else { return nil }
        self.degrees = degrees
    }
}

@Suite("Typed properties")
struct ManagedPropertyTests {
    static func model() throws -> Model {
        try Model {
            Entity("Sample", Sample.self) {
                Attribute("text", .string)
                Attribute("small", .int16, default: Int16(0))
                Attribute("medium", .int32, default: Int32(0))
                Attribute("large", .int64, default: Int64(0))
                Attribute("real", .double, default: 0.0)
                Attribute("single", .float, default: Float(0))
                Attribute("flag", .bool, default: false)
                Attribute("when", .date)
                Attribute("blob", .data)
                Attribute("identifier", .uuid)
                Attribute("link", .url)
                Attribute("amount", .decimal)
            }
        }
    }

    @Test("Types the store holds as they are take the direct path (Decimal too); URL does not")
    func directPathChoice() {
        func isDirect<Value>(_: Value.Type) -> Bool { Value.self is any AttributeValue.Type }
        #expect(isDirect(String?.self))
        #expect(isDirect(Int16.self))
        #expect(isDirect(Date?.self))
        #expect(!isDirect(URL?.self), "a URL is stored as a string, converted on the general path")
        #expect(isDirect(Decimal?.self), "a Decimal is a stored value since format version 3")
        #expect(!isDirect(Set<ManagedObject>.self))
    }

    /// Names the conforming type `Value` is found to be.
    struct FoundType<Value>: ConformingTypeOperation {
        func callAsFunction<Known: AttributeValue>(_: Known.Type) -> String? {
            Value.self == Known.self || Value.self == Known?.self ? "\(Known.self)" : nil
        }
    }

    static func foundName<Value>(_: Value.Type) -> String? { FoundType<Value>().forConformingTypes() }

    /// Expects `Value` and `Value?` to be found as `name`, and `Value` to conform.
    static func expectFound<Value>(_: Value.Type, as name: String) {
        #expect(foundName(Value.self) == name)
        #expect(foundName(Value?.self) == name)
        #expect(Value.self is any AttributeValue.Type, "\(name) conforms to AttributeValue")
    }

    @Test("Every type LogStore conforms to AttributeValue, and its optional, is found without a cast; other types are not")
    func conformingTypesFound() {
        Self.expectFound(String.self, as: "String")
        Self.expectFound(Bool.self, as: "Bool")
        Self.expectFound(Int16.self, as: "Int16")
        Self.expectFound(Int32.self, as: "Int32")
        Self.expectFound(Int64.self, as: "Int64")
        Self.expectFound(Int.self, as: "Int")
        Self.expectFound(Double.self, as: "Double")
        Self.expectFound(Float.self, as: "Float")
        Self.expectFound(Date.self, as: "Date")
        Self.expectFound(Data.self, as: "Data")
        Self.expectFound(UUID.self, as: "UUID")
        Self.expectFound(Decimal.self, as: "Decimal")
        #expect(Self.foundName(URL?.self) == nil)
        #expect(Self.foundName(String??.self) == nil, "a double optional goes through the cast")
        #expect(Self.foundName(Set<ManagedObject>.self) == nil)
    }

    /// Makes a Sample with `write` in one launch of a store, saved, and
    /// hands it to `read` as a second launch reads it back.
    private static func relaunching(_ write: (Sample, ObjectContext) throws -> Void, _ read: (Sample) throws -> Void) throws {
        let model = try Self.model()
        try withTemporaryDirectory { directory in
            let path = directory + "/typed.logstore"
            let id: ObjectID
            do {
                let store = try Store(path: path, model: model)
                defer { store.close() }
                let context = store.newContext()
                let sample = try context.insert(Sample.self)
                try write(sample, context)
                try context.save()
                id = sample.objectID
            }
            let store = try Store(path: path, model: model)
            defer { store.close() }
            try read(try #require(try store.newContext().existingObject(with: id) as? Sample))
        }
    }

    @Test("Optional properties write nil and read it back; Int? over Int16 and Int64; a double optional; the app's own type")
    func optionalsAndOwnTypes() throws {
        try Self.relaunching({ sample, context in
            sample.text = "x"
            sample.optionalSmall = 7
            sample.optionalLarge = 1 << 40
            sample.temperature = Celsius(degrees: 21.5)
            #expect(sample.real == 21.5, "the app's type wrote through to the attribute")
            #expect(sample.smallAsOptionalInt == nil, "an Int? over an Int16 attribute reads nil, as an Int over it reads 0")
            #expect(sample.largeAsOptionalInt == 1 << 40)
            #expect(sample.doubleOptionalText == .some("x"))
            try context.save()
            sample.text = nil
            sample.optionalSmall = nil
            sample.largeAsOptionalInt = nil
        }, { sample in
            #expect(sample.text == nil)
            #expect(sample.doubleOptionalText == .none, "String?? conforms through Optional's conformance, which reads a null as its own nil")
            #expect(sample.optionalSmall == nil)
            #expect(sample.optionalLarge == nil, "nil written through Int? reached the Int64 attribute")
            #expect(sample.temperature == Celsius(degrees: 21.5))
            sample.doubleOptionalText = "y"
            #expect(sample.text == "y")
        })
    }

    @Test("Every attribute type written through typed properties reads back after a relaunch")
    func roundTrip() throws {
        let when = Date(timeIntervalSinceReferenceDate: 12_345.5)
        let identifier = UUID()
        try Self.relaunching({ sample, _ in
            sample.text = "héllo"
            sample.small = -7
            sample.medium = 70_000
            sample.large = 1 << 40
            sample.real = 2.5
            sample.single = 1.25
            sample.flag = true
            sample.when = when
            sample.blob = Data([1, 2, 3])
            sample.identifier = identifier
            sample.link = URL(string: "https://example.com/a")
            sample.amount = Decimal(string: "12.34")
        }, { sample in
            #expect(sample.text == "héllo")
            #expect(sample.small == -7)
            #expect(sample.smallAsInt == 0, "an Int property over an Int16 attribute reads the type's default, as documented")
            #expect(sample.medium == 70_000)
            #expect(sample.large == 1 << 40)
            #expect(sample.largeAsInt == 1 << 40)
            #expect(sample.real == 2.5)
            #expect(sample.single == 1.25)
            #expect(sample.flag)
            #expect(sample.when == when)
            #expect(sample.blob == Data([1, 2, 3]))
            #expect(sample.identifier == identifier)
            #expect(sample.link == URL(string: "https://example.com/a"))
            #expect(sample.amount == Decimal(string: "12.34"))
        })
    }

    @Test("A value of another type converts when it fits, and otherwise the save fails naming entity and key")
    func conversionsAndErrors() throws {
        try withStore(try Self.model()) { store, _ in
            let context = store.newContext()
            let sample = try context.insert(Sample.self)
            sample.smallAsInt = 300
            #expect(sample.small == 300, "an Int that fits an Int16 attribute converts")
            try context.save()

            sample.smallAsInt = 70_000
            sample.textAsNumber = 5
            let error = #expect(throws: LogStoreError.self) { try context.save() }
            #expect(error?.kind == .validationFailed)
            let problems = error?.details.map { "\($0.entity ?? "")/\($0.attribute ?? "")/\($0.kind)" } ?? []
            #expect(problems.sorted() == ["Sample/small/wrongType", "Sample/text/wrongType"])
            #expect(sample.small == 300, "the refused values were not written")
        }
    }
}
