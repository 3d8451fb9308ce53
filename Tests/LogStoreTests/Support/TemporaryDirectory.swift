// A fresh directory per test, removed afterwards, and byte surgery on files.

import Foundation
@_spi(Benchmarks) @testable import LogStore

/// Runs `body` with a new empty directory and removes it afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("logstore-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Async variant of ``withTemporaryDirectory(_:)``.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("logstore-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Opens a store of `model` at `PATH/name` in a new temporary directory,
/// runs `body` with it and its path, then closes it and removes the
/// directory.
func withStore<T>(
    _ model: Model, named name: String = "test.logstore", options: JournalOptions = JournalOptions(),
    _ body: (Store, String) throws -> T
) throws -> T {
    try withTemporaryDirectory { directory in
        let path = directory + "/" + name
        let store = try Store(path: path, model: model, options: options)
        defer { store.close() }
        return try body(store, path)
    }
}

/// ``withStore(_:named:options:_:)`` for tests on the main actor, whose
/// body awaits background contexts.
@MainActor
func withMainActorStore(
    _ model: Model, options: JournalOptions = JournalOptions(), _ body: @MainActor (Store) async throws -> Void
) async throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let store = try Store(path: directory + "/test.logstore", model: model, options: options)
    defer { store.close() }
    try await body(store)
}

/// Byte-level edits of a store file, for turning each row of FORMAT.md's
/// damage table into a test.
struct StoreFileSurgery {
    let path: String

    var bytes: [UInt8] {
        get throws { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
    }

    var size: Int { get throws { try bytes.count } }

    func write(_ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Inverts one bit.
    func flipBit(at offset: Int, bit: Int = 0) throws {
        var all = try bytes
        all[offset] ^= UInt8(1 << bit)
        try write(all)
    }

    /// Removes the last `count` bytes.
    func truncate(removing count: Int) throws {
        try truncate(to: try size - count)
    }

    func truncate(to size: Int) throws {
        try write(Array(try bytes.prefix(size)))
    }

    /// Recomputes the checksum of the frame at `offset` after its bytes were
    /// edited, so the edit reaches the checks behind the checksum.
    func resign(frameAt offset: Int) throws {
        var all = try bytes
        let storedSize = all[(offset + 8)..<(offset + 12)].withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        let end = offset + FrameLayout.headerSize + storedSize
        let checksum = all[(offset + FrameLayout.checksummedHeaderStart)..<end].withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: checksum.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { all[offset + 4 + index] = byte }
        }
        try write(all)
    }
}

/// A new empty directory for an async test isolated to an actor, which
/// cannot hand a closure to `withTemporaryDirectory`; remove it with
/// `removeTemporaryDirectory` in a `defer`.
func makeTemporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("logstore-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func removeTemporaryDirectory(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

/// Settings a longer soak passes in the environment.
enum TestSettings {
    /// The integer in environment variable `name`, or `default` when it is unset or not a number.
    static func integer(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? value
    }
}
