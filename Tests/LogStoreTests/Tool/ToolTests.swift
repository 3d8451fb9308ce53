// logstore-tool as a script sees it: exit codes, text and JSON output.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("logstore-tool")
struct ToolTests {
    private func tool(_ arguments: String...) throws -> Executables.Run {
        try Executables.run("logstore-tool", arguments)
    }

    /// A store with a few transactions, closed.
    private func makeStore(in directory: String, transactions: Int = 5) throws -> String {
        let path = directory + "/tool.logstore"
        let journal = try Journal(path: path)
        for key in 1...transactions { try journal.appendSample(key: UInt64(key), size: 200) }
        journal.close()
        return path
    }

    @Test("info prints the header, frame count, sizes and compression")
    func info() throws {
        try withTemporaryDirectory { directory in
            let path = try makeStore(in: directory)
            let run = try tool("info", path)
            #expect(run.status == 0)
            #expect(run.output.contains("in 5 transactions after the header and anchor pages"))
            #expect(run.output.contains("sequence numbers:  1 to 5"))
            #expect(run.output.contains("format version:    \(FileLayout.createdVersion)"))
            #expect(run.output.contains("(compression ratio "))
        }
    }

    @Test("info --json is one JSON document with the figures")
    func infoJSON() throws {
        try withTemporaryDirectory { directory in
            let path = try makeStore(in: directory)
            let run = try tool("info", path, "--json")
            #expect(run.status == 0)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            #expect(document["formatVersion"] as? Int == 1)
            let result = try #require((document["result"] as? [String: Any])?["file"] as? [String: Any])
            #expect(result["frameCount"] as? Int == 5)
            #expect(result["lastSequence"] as? Int == 5)
            #expect((result["fileSize"] as? Int).map { $0 > 64 } == true)
        }
    }

    @Test("verify exits 0 on a good file")
    func verifyGood() throws {
        try withTemporaryDirectory { directory in
            let run = try tool("verify", try makeStore(in: directory))
            #expect(run.status == 0)
            #expect(run.output.contains("5 valid frames"))
            #expect(run.output.hasSuffix(": ok\n"))
        }
    }

    @Test("verify exits 1 on damage and names the offset of each damaged frame")
    func verifyDamaged() throws {
        try withTemporaryDirectory { directory in
            let path = try makeStore(in: directory)
            // Damage the payload of frame 2: it starts where frame 1 ends.
            let second = JournalFixtures.frames(in: try JournalFixtures.read(path))[1].offset
            try StoreFileSurgery(path: path).flipBit(at: second + FrameLayout.headerSize + 3)

            let run = try tool("verify", path)
            #expect(run.status == 1)
            #expect(run.output.contains("frame 2 at offset \(second)"))
            #expect(run.output.contains("4 valid frames"))

            let json = try tool("verify", path, "--json")
            #expect(json.status == 1)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            let problems = try #require((document["result"] as? [String: Any])?["problems"] as? [[String: Any]])
            #expect(problems.count == 1)
            #expect(problems.first?["offset"] as? Int == second)
        }
    }

    @Test("A file that cannot be opened exits 3 with the reason on standard error")
    func cannotOpen() throws {
        try withTemporaryDirectory { directory in
            let missing = try tool("verify", directory + "/missing.logstore")
            #expect(missing.status == 3)
            #expect(missing.errorOutput.contains("missing.logstore"))

            let other = directory + "/notes.txt"
            try Data("just some notes\n".utf8).write(to: URL(fileURLWithPath: other))
            let notAStore = try tool("info", other)
            #expect(notAStore.status == 3)
            #expect(notAStore.errorOutput.contains("LOGSTORE"))
            #expect(notAStore.output.isEmpty)
        }
    }

    @Test("Usage errors exit 2; --help lists the subcommands")
    func usage() throws {
        let wrong = try tool("verify")
        #expect(wrong.status == 2)
        #expect(wrong.errorOutput.contains("Missing expected argument"))
        let unknown = try tool("frobnicate")
        #expect(unknown.status == 2)
        let help = try tool("--help")
        #expect(help.status == 0)
        for subcommand in ["demo", "info", "schema", "stats", "verify", "dump", "query", "history", "compact", "recover"] {
            #expect(help.output.contains(subcommand))
        }
    }

    @Test("demo creates a store that verifies, and refuses to overwrite without --overwrite")
    func demo() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/demo.logstore"
            let run = try tool("demo", path, "--items", "300")
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(run.output.contains("inserted 300 items"))
            #expect(try tool("verify", path).status == 0)

            let again = try tool("demo", path, "--items", "300")
            #expect(again.status != 0)
            #expect(again.errorOutput.contains("--overwrite"))
            #expect(try tool("demo", path, "--items", "300", "--overwrite").status == 0)
        }
    }
}
