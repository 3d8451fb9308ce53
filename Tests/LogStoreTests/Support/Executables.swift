// Finds and runs the package's executables (the tool, the crash child)
// that SwiftPM builds next to the test bundle.

import Foundation
import Testing

enum Executables {
    /// The build products folder: the test binary lives there too.
    static let productsDirectory: URL = {
        let testBinary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        var directory = testBinary.deletingLastPathComponent()
        // In a bundle (LogStorePackageTests.xctest/…), step out of it.
        while directory.pathExtension == "xctest" || directory.path.contains(".xctest/") {
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }()

    static func url(of name: String) throws -> URL {
        let url = productsDirectory.appendingPathComponent(name)
        try #require(FileManager.default.isExecutableFile(atPath: url.path), "\(name) was not built next to the tests in \(productsDirectory.path)")
        return url
    }

    /// What a finished run printed and how it ended.
    struct Run {
        var status: Int32
        var output: String
        var errorOutput: String
    }

    /// Runs `name` (a product, or with `absolute` a path) with `arguments` to completion.
    static func run(_ name: String, _ arguments: [String], absolute: Bool = false) throws -> Run {
        let process = Process()
        process.executableURL = absolute ? URL(fileURLWithPath: name) : try url(of: name)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read before waiting, so a full pipe cannot block the child.
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self), errorOutput: String(decoding: errData, as: UTF8.self))
    }
}
