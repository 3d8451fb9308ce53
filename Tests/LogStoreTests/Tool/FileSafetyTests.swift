// Who can read a store file, and where LogStore writes: files are created
// owner-only unless the app asks otherwise, a compaction's new file keeps the
// old one's mode, owner, group and extended attributes, and neither a
// compaction nor the tool writes through a symbolic link without saying so.

#if canImport(Glibc)
import Glibc
#endif
import CLogStoreSupport
import Foundation
import Testing
import LogStore

@Suite("File permissions and symbolic links")
struct FileSafetyTests {
    static let model: Model = try! Model {
        Entity("Note") { Attribute("text", .string) }
    }

    static func makeStore(_ path: String, options: JournalOptions = JournalOptions(), notes: Int = 20) throws {
        let store = try Store(path: path, model: model, options: options)
        let context = store.newContext()
        for index in 0..<notes {
            let note = try context.insert("Note")
            note["text"] = "note \(index)"
            try context.save()
        }
        store.close()
    }

    static func permissions(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).intValue
    }

    static func notes(_ path: String) throws -> Int {
        let store = try Store(path: path, model: model)
        defer { store.close() }
        return try store.newContext().fetchAll("Note").count
    }

    @Test("A new store file is owner-only (0600); an app can ask for other permissions")
    func permissionsOfNewFiles() throws {
        try withTemporaryDirectory { directory in
            try Self.makeStore(directory + "/private.logstore")
            #expect(try Self.permissions(directory + "/private.logstore") == 0o600)
            // The compacted file that replaces it is owner-only too.
            let store = try Store(path: directory + "/private.logstore", model: Self.model)
            try store.compact()
            store.close()
            #expect(try Self.permissions(directory + "/private.logstore") == 0o600)

            try Self.makeStore(directory + "/shared.logstore", options: JournalOptions(filePermissions: 0o640))
            #expect(try Self.permissions(directory + "/shared.logstore") == 0o640)
        }
    }

    /// Who may use a file: what a compaction must carry over to its new file.
    struct Identity: Equatable {
        var mode: mode_t
        var owner: uid_t
        var group: gid_t
        var attribute: [UInt8]?

        static let attributeName = "user.logstore.test"

        init(of path: String) throws {
            var info = stat()
            try #require(stat(path, &info) == 0, "stat \(path): errno \(errno)")
            mode = info.st_mode & 0o7777
            owner = info.st_uid
            group = info.st_gid
            var value = [UInt8](repeating: 0, count: 64)
            let count = getxattr(path, Self.attributeName, &value, value.count)
            attribute = count < 0 ? nil : Array(value.prefix(count))
        }

        /// Gives `path` mode 0640, the test attribute, and (as root, who
        /// may) an owner and group other than the process's.
        static func makeUnusual(_ path: String) throws -> Identity {
            try #require(chmod(path, 0o640) == 0)
            let value = Array("kept".utf8)
            try #require(setxattr(path, attributeName, value, value.count, 0) == 0, "setxattr: errno \(errno)")
            if geteuid() == 0 { try #require(chown(path, 4321, 8765) == 0) }
            return try Identity(of: path)
        }
    }

    /// Who compacts a store: the library in this process, or the tool.
    enum Compactor: String, CaseIterable, CustomTestStringConvertible {
        case store, tool

        var testDescription: String { rawValue == "store" ? "Store.compact()" : "logstore-tool compact" }

        func compact(_ path: String) throws {
            switch self {
            case .store:
                let store = try Store(path: path, model: FileSafetyTests.model)
                defer { store.close() }
                try store.compact()
            case .tool:
                let run = try Executables.run("logstore-tool", ["compact", path])
                #expect(run.status == 0, "\(run.errorOutput)")
            }
        }
    }

    @Test("A compaction keeps the store file's mode, owner, group and extended attributes", arguments: Compactor.allCases)
    func compactionKeepsIdentity(compactor: Compactor) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/shared.logstore"
            try Self.makeStore(path)
            let before = try Identity.makeUnusual(path)
            try compactor.compact(path)
            #expect(try StoreInspector.info(path: path).snapshot != nil)
            #expect(try Identity(of: path) == before)
            #expect(try Self.notes(path) == 20)
        }
    }

    /// Whether this process can run a command as another user: it is root,
    /// and util-linux's setpriv is there to change user.
    static let canRunAsAnotherUser = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    @Test("logstore-tool compact run by a member of the store's group keeps the group and mode; the owner becomes that user",
          .enabled(if: canRunAsAnotherUser, "needs root and setpriv to run the tool as another user"))
    func compactByAnotherUser() throws {
        try withTemporaryDirectory { directory in
            // The user compacting (4321) writes the store and its directory
            // through their shared group (8765) only.
            try #require(chmod(directory, 0o777) == 0)
            let path = directory + "/shared.logstore"
            try Self.makeStore(path)
            try #require(chown(path, 1234, 8765) == 0 && chmod(path, 0o660) == 0)
            let value = Array("kept".utf8)
            try #require(setxattr(path, Identity.attributeName, value, value.count, 0) == 0)
            let tool = try Executables.url(of: "logstore-tool").path
            let run = try Executables.run("/usr/bin/setpriv", ["--reuid=4321", "--regid=8765", "--clear-groups", tool, "compact", path], absolute: true)
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(try StoreInspector.info(path: path).snapshot != nil)
            let after = try Identity(of: path)
            #expect(after.owner == 4321)
            #expect(after.group == 8765)
            #expect(after.mode == 0o660)
            #expect(after.attribute == value)
        }
    }

    @Test("A compaction of a store opened through a symbolic link rewrites the file it points to; the link stays")
    func compactionThroughALink() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
            let target = directory + "/data/real.logstore", link = directory + "/link.logstore"
            try Self.makeStore(target)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            let store = try Store(path: link, model: Self.model)
            try store.compact()
            store.close()
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
            #expect(try StoreInspector.info(path: target).snapshot != nil)
            #expect(try Self.notes(link) == 20)
            // Nothing was left beside the link.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["data", "link.logstore"])
        }
    }

    @Test("logstore-tool compact says when the store is a symbolic link, and keeps the link")
    func toolCompactThroughALink() throws {
        try withTemporaryDirectory { directory in
            let target = directory + "/real.logstore", link = directory + "/link.logstore"
            try Self.makeStore(target)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            let run = try Executables.run("logstore-tool", ["compact", link])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(run.errorOutput.contains("\(link) is a symbolic link to \(target)"), "\(run.errorOutput)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
            #expect(try StoreInspector.info(path: target).snapshot != nil)
        }
    }

    @Test("logstore-tool recover never writes through a symbolic link, even one that points nowhere")
    func recoverRefusesALink() throws {
        try withTemporaryDirectory { directory in
            let store = directory + "/store.logstore", output = directory + "/out.logstore", elsewhere = directory + "/elsewhere.logstore"
            try Self.makeStore(store)
            try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: elsewhere)
            let run = try Executables.run("logstore-tool", ["recover", store, "--output", output])
            #expect(run.status != 0)
            #expect(run.errorOutput.contains("symbolic link"), "\(run.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: elsewhere))
        }
    }
}
