// The package's root folder, found from this file's path: for tests that
// read the repository's own files (FORMAT.md, sources, the fuzz corpus).

import Foundation

enum PackageRoot {
    /// The nearest folder above this file that holds Package.swift.
    static let url: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            let parent = directory.deletingLastPathComponent()
            precondition(parent.path != directory.path, "no Package.swift above \(#filePath)")
            directory = parent
        }
        return directory
    }()

    static func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }
}
