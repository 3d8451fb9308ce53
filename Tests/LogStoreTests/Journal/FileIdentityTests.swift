// A file's identity (device and inode), read without its timestamps, is what
// tells a saver that the store's path still names its file (FORMAT.md §7).

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import LogStore

@Suite("File identity")
struct FileIdentityTests {
    @Test("A file's identity through its descriptor and through its path agree, follow a rename, and differ from another file's")
    func identityThroughDescriptorAndPath() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/a", other = directory + "/b", moved = directory + "/c"
            try Data("same".utf8).write(to: URL(fileURLWithPath: path))
            try Data("same".utf8).write(to: URL(fileURLWithPath: other))
            let file = try SystemFile(path: path, mode: .readOnly)
            defer { file.close() }
            let fileSystem = SystemFileSystem()
            let own = try file.identity()
            #expect(fileSystem.identity(ofPath: path) == own)
            // The same numbers stat(2) gives, which /proc/locks and other
            // tools show.
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(own == FileIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino)))
            #expect(fileSystem.identity(ofPath: other) != own)
            #expect(fileSystem.identity(ofPath: other) != nil)
            try FileManager.default.moveItem(atPath: path, toPath: moved)
            #expect(fileSystem.identity(ofPath: moved) == own)
            #expect(fileSystem.identity(ofPath: path) == nil)
            // The path the file was opened at names nothing now.
            let error = #expect(throws: LogStoreError.self) { try fileSystem.checkStillNamed(file, identity: own) }
            #expect(error?.kind == .storeReplaced)
            file.didMove(to: moved)
            #expect(throws: Never.self) { try fileSystem.checkStillNamed(file, identity: own) }
        }
    }
}
