// Thread confinement without holes: performAndWait cannot leak its context,
// reset() invalidates old objects, close() from any thread leaves the main
// context's objects usable, and a misuse traps in debug builds.

import Foundation
import Testing
@testable import LogStore

@Suite("Confinement")
struct ConfinementTests {
    /// Type-checks `source` against the LogStore module the tests were built with.
    static func typeCheck(_ source: String) throws -> Executables.Run {
        let products = Executables.productsDirectory
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("leak-\(UUID().uuidString).swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let swiftc = ["/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "swiftc"
        return try Executables.run("/usr/bin/env", [
            swiftc, "-typecheck", "-swift-version", "6", "-I", products.appendingPathComponent("Modules").path,
            "-Xcc", "-fmodule-map-file=\(PackageRoot.path("Sources/CLZ4/module.modulemap"))",
            "-Xcc", "-fmodule-map-file=\(products.appendingPathComponent("CLogStoreSupport.build/module.modulemap").path)",
            file.path,
        ], absolute: true)
    }

    @Test("performAndWait cannot hand its context or objects to the caller: the compiler refuses it")
    func performAndWaitCannotLeak() throws {
        let allowed = try Self.typeCheck("""
            import LogStore
            func count(_ background: BackgroundContext) throws -> Int {
                try background.performAndWait { context in try context.count("Person") }
            }
            """)
        #expect(allowed.status == 0, "the well-formed use must compile: \(allowed.errorOutput)")
        let leaks = [
            "var leaked: ObjectContext?\nbackground.performAndWait { context in leaked = context }\n_ = leaked",
            "var leaked: [ManagedObject] = []\nbackground.performAndWait { context in leaked = (try? context.fetchAll(\"Person\")) ?? [] }\n_ = leaked",
            "let leaked = background.performAndWait { context in context }\n_ = leaked",
        ]
        for leak in leaks {
            let run = try Self.typeCheck("import LogStore\nfunc leak(_ background: BackgroundContext) {\n\(leak)\n}\n")
            #expect(run.status != 0, "this leak compiled:\n\(leak)")
        }
    }

    @Test("reset() invalidates the old objects: using one is .wrongContext, and the ID gives one new instance")
    func resetInvalidates() throws {
        try Library.withStore { store in
            let (author, _) = try Library.seed(store, books: 1)
            let context = store.newContext()
            let old = try context.existingObject(with: author)
            context.reset()
            let read = #expect(throws: LogStoreError.self) { try old.value(forKey: "name") }
            #expect(read?.kind == .wrongContext)
            #expect(throws: LogStoreError.self) { try old.setValue("X", forKey: "name") }
            #expect(throws: LogStoreError.self) { try context.delete(old) }
            let fresh = try context.existingObject(with: author)
            #expect(fresh !== old)
            #expect(try context.existingObject(with: author) === fresh)
            #expect(fresh["name"] as? String == "Le Guin")
        }
    }

    @MainActor
    @Test("close() from another thread leaves the main context's objects usable on the main thread")
    func closeOffMain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("close-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(path: directory + "/c.logstore", model: Library.model())
        let (author, _) = try Library.seed(store, books: 1)
        let context = store.mainContext
        let object = try context.existingObject(with: author)
        let loose = try context.existingObject(with: author)
        await Task.detached { store.close() }.value
        // The store let go of its main context on the main queue, never
        // under the main actor's feet; the app still holds it here.
        #expect(object["name"] as? String == "Le Guin")
        #expect(object.managedObjectContext === context)
        #expect(loose === object)
    }

    #if DEBUG
    @Test("In debug builds, a background context's object touched outside its queue traps, naming the context and the thread")
    func wrongThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trap-\(UUID().uuidString)").path
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let store = try! Store(path: directory + "/t.logstore", model: Library.model())
            let background = store.newBackgroundContext()
            let smuggled = SmuggledObject()
            background.performAndWait { context in smuggled.object = try? context.insert("Author") }
            _ = smuggled.object?["name"]   // not on the context's queue
        }
    }
    #endif
}

/// A box that carries an object out of its context on purpose, to test that
/// using it there traps.
final class SmuggledObject: @unchecked Sendable { var object: ManagedObject? }
