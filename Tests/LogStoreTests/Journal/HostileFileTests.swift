// Files no crash produces (FORMAT.md §2 and §6 tables, row by row): each
// fails the open with its own typed error naming the path, the offset and a
// way out, and never with a crash or an allocation of the declared size.

import Foundation
import Testing
@_spi(Benchmarks) @testable import LogStore

@Suite("Hostile files")
struct HostileFileTests {
    // MARK: - File header rows (FORMAT.md §2)

    @Test("Header row: an empty file is .notAStore")
    func emptyFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/empty.logstore"
            try JournalFixtures.write([], to: path)
            for options in [JournalOptions(), JournalFixtures.readOnly] {
                JournalFixtures.expectError(JournalFixtures.openError(path, options), .notAStore, path: path, nextStep: "remove it or pass the path of a store")
            }
            #expect(try JournalFixtures.fileSize(path) == 0, "a refused open wrote to the file")
        }
    }

    @Test("Header row: fewer than 8 bytes, or another magic (PNG, SQLite, text, zeros, LZ4 frame), is .notAStore")
    func anotherKindOfFile() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D] + Array("IHDR".utf8) + [UInt8](repeating: 0, count: 100)
        let sqlite = Array("SQLite format 3\0".utf8) + [0x10, 0x00, 0x01, 0x01] + [UInt8](repeating: 0, count: 4076)
        let files: [(String, [UInt8])] = [
            ("PNG", png), ("SQLite", sqlite), ("text", Array("hello, world\n".utf8)), ("64 zero bytes", [UInt8](repeating: 0, count: 64)),
            ("an LZ4 frame", [0x04, 0x22, 0x4D, 0x18, 0x64, 0x40, 0xA7] + [UInt8](repeating: 0, count: 60)),
            ("7 bytes of the magic", Array("LOGSTOR".utf8)), ("one byte", [0x4C]), ("lower-case magic", Array("logstore".utf8) + [UInt8](repeating: 0, count: 56)),
            ("a megabyte of noise", JournalFixtures.noise(count: 1 << 20, seed: 21)),
        ]
        try withTemporaryDirectory { directory in
            for (label, bytes) in files {
                let path = directory + "/\(label).logstore"
                try JournalFixtures.write(bytes, to: path)
                let error = JournalFixtures.openError(path)
                JournalFixtures.expectError(error, .notAStore, path: path, nextStep: "check the path")
                #expect(error?.offset == 0, "\(label)")
                #expect(try JournalFixtures.read(path) == bytes, "\(label): a refused open changed the file")
            }
        }
    }

    @Test("Header row: the magic but fewer than 64 bytes is .corruptHeader")
    func headerCutShort() throws {
        try JournalFixtures.withStore(count: 2) { store, _ in
            var withoutNextStep: [String] = []
            for length in [8, 9, 12, 32, 59, 60, 63] {
                try JournalFixtures.write(Array(store.bytes.prefix(length)), to: store.path)
                withoutNextStep += Self.expectCorruptHeader(store.path, offset: 0, saying: "cut short", "\(length) bytes")
                #expect(try JournalFixtures.fileSize(store.path) == length, "a refused open changed the file")
            }
            Self.expectNextSteps(missingFrom: withoutNextStep)
        }
    }

    @Test("Header row: a readVersion above the reader's is .unsupportedFormatVersion, read-only or not, and is checked before the checksum")
    func futureReadVersion() throws {
        try JournalFixtures.withStore(count: 2) { store, _ in
            for resign in [true, false] {
                var bytes = store.bytes
                JournalFixtures.store(FileLayout.currentVersion + 1, into: &bytes, at: 8)
                JournalFixtures.store(FileLayout.currentVersion + 1, into: &bytes, at: 10)
                if resign { JournalFixtures.resignHeader(&bytes) }
                try JournalFixtures.write(bytes, to: store.path)
                for options in [JournalOptions(), JournalFixtures.readOnly, JournalFixtures.readOnlySalvage] {
                    let error = JournalFixtures.openError(store.path, options)
                    JournalFixtures.expectError(error, .unsupportedFormatVersion, path: store.path, nextStep: "open it with a newer LogStore")
                    #expect(error?.offset == 10)
                }
                #expect(throws: LogStoreError.self) { try StoreInspector.verify(path: store.path) }
                #expect(try JournalFixtures.read(store.path) == bytes)
            }
        }
    }

    @Test("Header row: a writeVersion above the reader's with readVersion 1 opens read-only but not read-write")
    func futureWriteVersion() throws {
        // A version 4 file, whose frames start where a version 1 file's do.
        try JournalFixtures.withStore(count: 3, version: FileLayout.indexFrameVersion) { store, _ in
            var bytes = store.bytes
            JournalFixtures.store(FileLayout.currentVersion + 1, into: &bytes, at: 8)
            JournalFixtures.store(UInt16(1), into: &bytes, at: 10)
            JournalFixtures.resignHeader(&bytes)
            // A torn tail too: the refused read-write open must not cut it off.
            bytes += [UInt8](repeating: 0xee, count: 10)
            try JournalFixtures.write(bytes, to: store.path)

            let error = JournalFixtures.openError(store.path)
            JournalFixtures.expectError(error, .unsupportedFormatVersion, path: store.path, nextStep: "open it read-only")
            #expect(try JournalFixtures.read(store.path) == bytes, "a refused read-write open changed the file")

            let journal = try Journal(path: store.path, options: JournalFixtures.readOnly)
            defer { journal.close() }
            #expect(journal.header.writeVersion == FileLayout.currentVersion + 1 && journal.header.readVersion == 1)
            #expect(journal.recovery.outcome == .tornTail)
            #expect(try journal.transactions().map(\.changes) == store.transactions)
            #expect(try StoreInspector.info(path: store.path).writeVersion == FileLayout.currentVersion + 1)
        }
    }

    @Test("Header row: a wrong header checksum is .corruptHeader; every bit of the header is checked in FORMAT.md's order")
    func headerChecksumMismatch() throws {
        try JournalFixtures.withStore(count: 2) { store, _ in
            for bit in 0..<(FileLayout.headerSize * 8) {
                var bytes = store.bytes
                bytes[bit / 8] ^= 1 << (bit % 8)
                try JournalFixtures.write(bytes, to: store.path)
                let error = JournalFixtures.openError(store.path, JournalFixtures.readOnly)
                let readVersion = JournalFixtures.load(UInt16.self, from: bytes, at: 10)
                let context = "bit \(bit % 8) of header byte \(bit / 8)"
                switch bit / 8 {
                case 0..<8: #expect(error?.kind == .notAStore, "\(context): \(String(describing: error))")
                case 10..<12 where readVersion > FileLayout.currentVersion: #expect(error?.kind == .unsupportedFormatVersion, "\(context): \(String(describing: error))")
                default:
                    JournalFixtures.expectError(error, .corruptHeader, path: store.path, nextStep: "restore the file from a backup")
                    #expect(error?.message.contains("checksum") == true, "\(context): \(String(describing: error))")
                }
            }
        }
    }

    @Test("Header row: headerSize other than 64, checksum re-signed, is .corruptHeader")
    func wrongHeaderSize() throws {
        try JournalFixtures.withStore(count: 2) { store, _ in
            var withoutNextStep: [String] = []
            for size: UInt32 in [0, 40, 63, 65, 128, .max] {
                var bytes = store.bytes
                JournalFixtures.store(size, into: &bytes, at: 12)
                JournalFixtures.resignHeader(&bytes)
                try JournalFixtures.write(bytes, to: store.path)
                withoutNextStep += Self.expectCorruptHeader(store.path, offset: 12, saying: "declares a size of \(size) bytes", "headerSize \(size)")
            }
            Self.expectNextSteps(missingFrom: withoutNextStep)
        }
    }

    @Test("Header: the reserved bytes are covered by the checksum but not required to be zero; the bytes before the first frame alone are an empty store")
    func reservedHeaderBytes() throws {
        try JournalFixtures.withStore(count: 2) { store, _ in
            var bytes = store.bytes
            // Bytes 40 ..< 48 place a snapshot (0: none) from version 2 on.
            for offset in 48..<60 { bytes[offset] = 0xA5 }
            JournalFixtures.resignHeader(&bytes)
            try JournalFixtures.write(bytes, to: store.path)
            let journal = try Journal(path: store.path, options: JournalFixtures.readOnly)
            #expect(journal.recovery == RecoveryReport.clean(frames: 2))
            journal.close()

            // The header and the anchor pages, every byte before the first frame.
            try JournalFixtures.write(Array(store.bytes.prefix(store.frames[0].offset)), to: store.path)
            let empty = try Journal(path: store.path)
            defer { empty.close() }
            #expect(empty.recovery == RecoveryReport.clean(frames: 0))
            #expect(empty.lastSequence == 0)
        }
    }

    // MARK: - Frame rows that are damage anywhere (FORMAT.md §6)

    @Test("Damage row: storedSize or rawSize over 256 MiB (up to 0xFFFFFFFF, 4 GiB) is .corruptFrame, checked before the checksum or any allocation",
          arguments: [("storedSize", 8), ("rawSize", 12)])
    func sizeOverLimit(field: String, offset: Int) throws {
        let peak = Self.peakResidentBytes()
        defer { #expect(Self.peakResidentBytes() - peak < 1 << 30, "opening grew the process by a gigabyte or more") }
        // A storedSize that large cannot be re-signed: the checksum would cover bytes the file lacks.
        let signings = field == "rawSize" ? [false, true] : [false]
        for size in [UInt32.max, UInt32(FrameLayout.maxPayloadSize + 1)] {
            for resign in signings {
                try Self.expectDamageAnywhere("\(field) \(size)\(resign ? ", re-signed" : "")") { bytes, frame in
                    JournalFixtures.store(size, into: &bytes, at: frame.offset + offset)
                    if resign { JournalFixtures.resign(&bytes, frameAt: frame.offset) }
                }
            }
        }
    }

    @Test("Damage row: rawSize impossible for the codec (raw with rawSize ≠ storedSize; LZ4 over 255 × storedSize + 16) is .corruptFrame")
    func rawSizeImpossibleForCodec() throws {
        let payload = Self.validPayload
        for rawSize in [payload.count - 1, payload.count + 1, 0, FrameLayout.maxPayloadSize] {
            try Self.expectDamageAnywhere("raw codec, rawSize \(rawSize) for \(payload.count) stored", replacingWith: { frame in
                JournalFixtures.frame(payload: payload, sequence: UInt64(frame.number), rawSize: UInt32(rawSize))
            })
        }
        let block = JournalFixtures.compress(Self.compressiblePayload)
        try Self.expectDamageAnywhere("LZ4, rawSize 255 × storedSize + 17", replacingWith: { frame in
            JournalFixtures.frame(payload: block, sequence: UInt64(frame.number), codec: .lz4Block, rawSize: UInt32(block.count * 255 + 17))
        })
    }

    @Test("Damage row: an LZ4 block claiming a raw size far beyond (or short of) what it decompresses to is .corruptFrame")
    func lz4WrongRawSize() throws {
        let raw = Self.compressiblePayload
        let block = JournalFixtures.compress(raw)
        #expect(block.count < raw.count / 4)
        for rawSize in [block.count * 255 + 16, raw.count * 10, raw.count + 1, raw.count - 1, 0] {
            try Self.expectDamageAnywhere("LZ4 block of \(raw.count) raw bytes declared as \(rawSize)", replacingWith: { frame in
                JournalFixtures.frame(payload: block, sequence: UInt64(frame.number), codec: .lz4Block, rawSize: UInt32(rawSize))
            })
        }
    }

    @Test("Damage row: a malformed LZ4 block with a valid checksum is .corruptFrame")
    func garbageLZ4() throws {
        let raw = Self.compressiblePayload
        let block = JournalFixtures.compress(raw)
        let garbage: [(String, [UInt8])] = [
            ("0xFF bytes", [UInt8](repeating: 0xFF, count: block.count)),
            ("noise", JournalFixtures.noise(count: block.count, seed: 22)),
            ("the block cut short", Array(block.dropLast(3))),
            ("a match before the start of the output", [0x1F, 0x41, 0xFF, 0x00] + [UInt8](repeating: 0, count: 8)),
            ("an empty block", []),
        ]
        for (label, stored) in garbage {
            try Self.expectDamageAnywhere("LZ4, \(label)", replacingWith: { frame in
                JournalFixtures.frame(payload: stored, sequence: UInt64(frame.number), codec: .lz4Block, rawSize: UInt32(raw.count))
            })
        }
        // Edited in place in a frame the journal wrote, and re-signed.
        try Self.expectDamageAnywhere("LZ4 block of a written frame overwritten, re-signed", codec: .lz4Block) { bytes, frame in
            for offset in frame.payloadOffset..<frame.end { bytes[offset] = 0xF0 }
            JournalFixtures.resign(&bytes, frameAt: frame.offset)
        }
    }

    @Test("Damage row: unknown kind or codec, unknown flags bits, or a dictionary codec or flag the payload does not bear out, with a valid checksum, are .corruptFrame")
    func unknownFields() throws {
        let edits: [(String, (inout [UInt8], Int) -> Void)] = [
            ("kind 0", { $0[$1 + 32] = 0 }), ("kind 2", { $0[$1 + 32] = 2 }), ("kind 255", { $0[$1 + 32] = 255 }),
            ("codec 2 (LZ4 with a dictionary) where the file has none", { $0[$1 + 33] = 2 }), ("codec 255", { $0[$1 + 33] = 255 }),
            ("flags 1 (carries a dictionary) on a payload that begins with none", { $0[$1 + 34] = 1 }),
            ("flags 2", { $0[$1 + 34] = 2 }), ("flags 0x8000", { $0[$1 + 35] = 0x80 }),
        ]
        for (label, edit) in edits {
            try Self.expectDamageAnywhere("\(label), re-signed") { bytes, frame in
                edit(&bytes, frame.offset)
                JournalFixtures.resign(&bytes, frameAt: frame.offset)
            }
        }
    }

    @Test("Damage row: a sequence number that is not the previous one + 1 (gap, repeat, backwards, wrap) is .corruptFrame")
    func sequenceGap() throws {
        let sequences: [(String, (Int) -> UInt64)] = [
            ("gap", { UInt64($0 + 1) }), ("repeat", { UInt64($0 - 1) }), ("backwards", { UInt64($0 - 2) }),
            ("far ahead", { UInt64($0) + 1_000_000 }), ("max", { _ in .max }), ("zero", { _ in 0 }),
        ]
        for (label, sequence) in sequences {
            try Self.expectDamageAnywhere("sequence \(label), re-signed") { bytes, frame in
                JournalFixtures.store(sequence(frame.number), into: &bytes, at: frame.offset + 16)
                JournalFixtures.resign(&bytes, frameAt: frame.offset)
            }
        }
    }

    @Test("The first frame may carry any sequence number; the next append continues from the last")
    func anyFirstSequence() throws {
        try JournalFixtures.withStore(count: 3) { store, _ in
            var bytes = store.bytes
            for frame in store.frames {
                JournalFixtures.store(UInt64(40 + frame.number), into: &bytes, at: frame.offset + 16)
                JournalFixtures.resign(&bytes, frameAt: frame.offset)
            }
            try JournalFixtures.write(bytes, to: store.path)
            let journal = try Journal(path: store.path)
            defer { journal.close() }
            #expect(journal.recovery == RecoveryReport.clean(frames: 3))
            #expect(try journal.transactions().map(\.sequence) == [41, 42, 43])
            #expect(try journal.append([.delete(RecordID(entity: Symbol(rawValue: 0), key: 1))]) == 44)
        }
    }

    // MARK: - Payloads that do not decode (FORMAT.md §5, §6)

    @Test("Damage row: payloads that do not decode, with a valid checksum, are .corruptFrame", arguments: HostileFileTests.undecodablePayloads.map(\.label))
    func undecodablePayload(label: String) throws {
        let payload = try #require(Self.undecodablePayloads.first { $0.label == label }).payload
        try Self.expectDamageAnywhere(label, replacingWith: { frame in
            JournalFixtures.frame(payload: payload, sequence: UInt64(frame.number))
        })
        // Stored compressed, the same payload is the same damage.
        if payload.count >= 16 {
            let block = JournalFixtures.compress(payload)
            try Self.expectDamageAnywhere("\(label), LZ4", replacingWith: { frame in
                JournalFixtures.frame(payload: block, sequence: UInt64(frame.number), codec: .lz4Block, rawSize: UInt32(payload.count))
            })
        }
    }

    @Test("The crafted frames the damage tests start from are valid, so the damage tests fail only for the damage")
    func craftedFramesAreValid() throws {
        let block = JournalFixtures.compress(Self.compressiblePayload)
        let frames: [(String, (Int) -> [UInt8])] = [
            ("raw", { JournalFixtures.frame(payload: Self.validPayload, sequence: UInt64($0)) }),
            ("empty transaction", { JournalFixtures.frame(payload: [0, 0], sequence: UInt64($0)) }),
            ("LZ4", { JournalFixtures.frame(payload: block, sequence: UInt64($0), codec: .lz4Block, rawSize: UInt32(Self.compressiblePayload.count)) }),
        ]
        try JournalFixtures.withStore(count: 3) { store, _ in
            for (label, make) in frames {
                for number in [2, 3] {
                    let frame = store.frames[number - 1]
                    let bytes = Array(store.bytes[..<frame.offset]) + make(number) + store.bytes[frame.end...]
                    try JournalFixtures.write(bytes, to: store.path)
                    let journal = try Journal(path: store.path, options: JournalFixtures.readOnly)
                    #expect(journal.recovery == RecoveryReport.clean(frames: 3), "\(label) as frame \(number)")
                    #expect(try journal.transactions().count == 3, "\(label) as frame \(number)")
                    journal.close()
                }
            }
        }
    }

    // MARK: - Helpers

    /// A payload that decodes with the fixture's names (symbols 0–5) declared:
    /// an insert of `Item/9` with a reference and a string.
    static let validPayload: [UInt8] = [0, 1, 1, 0, 9, 2, 1, 12, 0, 1, 4, 8, 3, 0x61, 0x62, 0x63]

    /// A payload LZ4 shrinks: the same insert forty times.
    static let compressiblePayload: [UInt8] = [0, 40] + (0..<40).flatMap { key -> [UInt8] in
        [1, 0, UInt8(key), 1, 1, 8, 20] + Array("a compressible value".utf8)
    }

    /// Payloads the writer never produces, each one reason a payload does not
    /// decode. Symbols 0–5 are declared before them; 6 is next.
    static let undecodablePayloads: [(label: String, payload: [UInt8])] = [
        ("empty payload", []),
        ("declaration count only", [1]),
        ("declaration out of order (#9 where #6 is next)", [1, 9, 3, 0x61, 0x62, 0x63, 0]),
        ("declaration repeating symbol #0", [1, 0, 3, 0x61, 0x62, 0x63, 0]),
        ("declaration repeating the name Item", [1, 6, 4] + Array("Item".utf8) + [0]),
        ("declaration of an empty name", [1, 6, 0, 0]),
        ("declaration name of invalid UTF-8", [1, 6, 2, 0xC3, 0x28, 0]),
        ("declaration count beyond the bytes", [0xFF, 0xFF, 0x03, 6, 1, 0x61, 0]),
        ("unknown change tag 0", [0, 1, 0, 0, 1]),
        ("unknown change tag 4", [0, 1, 4, 0, 1]),
        ("unknown value type code 14", [0, 1, 1, 0, 1, 1, 1, 14]),
        ("undeclared entity symbol", [0, 1, 3, 50, 1]),
        ("undeclared attribute symbol", [0, 1, 1, 0, 1, 1, 50, 0]),
        // FORMAT.md §5.1 still says the version 1 reader does not check a
        // reference value's entity; it does (TransactionPayload.readFields), so
        // these two rows assert the code, and the document is stale.
        ("undeclared entity in a reference value", [0, 1, 1, 0, 1, 1, 1, 12, 50, 1]),
        ("undeclared entity in a references value", [0, 1, 1, 0, 1, 1, 1, 13, 2, 0, 1, 50, 2]),
        ("entity symbol beyond 32 bits", [0, 1, 3, 0x80, 0x80, 0x80, 0x80, 0x10, 1]),
        ("change count beyond the bytes (1000 changes in 3 bytes)", [0, 0xE8, 0x07, 3, 0, 1]),
        ("field count beyond the bytes", [0, 1, 1, 0, 1, 0xFF, 0x7F, 1, 0]),
        ("references count beyond the bytes", [0, 1, 1, 0, 1, 1, 1, 13, 0x7F, 0, 1]),
        ("string value past the end", [0, 1, 1, 0, 1, 1, 1, 8, 10, 0x61]),
        ("string value of invalid UTF-8", [0, 1, 1, 0, 1, 1, 1, 8, 2, 0xC3, 0x28]),
        ("int16 value out of range", [0, 1, 1, 0, 1, 1, 1, 3, 0x80, 0x80, 0x04]),
        ("varint of 11 bytes", [0, 1, 3, 0] + [UInt8](repeating: 0x80, count: 10) + [0]),
        ("a byte left over after the last change", [0, 1, 3, 0, 1, 0]),
        ("bytes left over after no changes", [0, 0, 0xFF, 0xFF]),
    ]

    /// Applies `edit` to frame 2 of a three-transaction store (mid-file: a
    /// valid frame 3 follows) and then to frame 3 (the last frame), and checks
    /// that each opens strict, read-only or not, with `.corruptFrame` at the
    /// edited frame, changes nothing, and that verify reports it there.
    /// `codec`, when given, is the codec the edited frames must have.
    static func expectDamageAnywhere(
        _ label: String, codec: PayloadCodec? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ edit: (inout [UInt8], JournalFixtures.Frame) -> Void
    ) throws {
        try JournalFixtures.withStore(count: 3, lastPayloadBytes: 200, compressibleLast: codec == .lz4Block) { store, _ in
            for number in [2, 3] {
                let frame = store.frames[number - 1]
                let context = "\(label), frame \(number) of 3"
                if let codec {
                    #expect(store.bytes[frame.offset + 33] == codec.rawValue, "\(context): the fixture frame is not \(codec)", sourceLocation: sourceLocation)
                }
                var bytes = store.bytes
                edit(&bytes, frame)
                try JournalFixtures.write(bytes, to: store.path)
                for (mode, options) in [("read-write", JournalOptions()), ("read-only", JournalFixtures.readOnly)] {
                    JournalFixtures.expectCorruptFrame(store.path, at: frame, options, "\(context), \(mode)", sourceLocation: sourceLocation)
                }
                #expect(try JournalFixtures.read(store.path) == bytes, "\(context): a refused open changed the file", sourceLocation: sourceLocation)
                let problem = try StoreInspector.verify(path: store.path).problems.first
                #expect(problem?.offset == UInt64(frame.offset), "\(context): \(String(describing: problem))", sourceLocation: sourceLocation)
                #expect(problem?.frameNumber == number, "\(context): \(String(describing: problem))", sourceLocation: sourceLocation)
            }
        }
    }

    /// ``expectDamageAnywhere(_:codec:sourceLocation:_:)`` with the frame
    /// replaced by the bytes `make` returns for its number.
    static func expectDamageAnywhere(
        _ label: String, sourceLocation: SourceLocation = #_sourceLocation,
        replacingWith make: (JournalFixtures.Frame) -> [UInt8]
    ) throws {
        try expectDamageAnywhere(label, sourceLocation: sourceLocation) { bytes, frame in
            bytes = Array(bytes[..<frame.offset]) + make(frame) + bytes[frame.end...]
        }
    }

    /// The most memory the process has held so far (getrusage's ru_maxrss:
    /// KiB on Linux, bytes on macOS).
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss) * 1024
        #else
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss)
        #endif
    }

    /// Opens `path` read-write and read-only, expecting `.corruptHeader` at
    /// `offset` with a message that names the path and says `saying`. Returns
    /// the messages that suggest no next step.
    static func expectCorruptHeader(
        _ path: String, offset: UInt64, saying: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [String] {
        var withoutNextStep: [String] = []
        for options in [JournalOptions(), JournalFixtures.readOnly] {
            let error = JournalFixtures.openError(path, options)
            #expect(error?.kind == .corruptHeader && error?.offset == offset, "\(context): \(String(describing: error))", sourceLocation: sourceLocation)
            #expect(error?.path == path && error?.message.contains(path) == true, "\(context): \(String(describing: error))", sourceLocation: sourceLocation)
            #expect(error?.message.contains(saying) == true, "\(context): \(String(describing: error))", sourceLocation: sourceLocation)
            if !suggestsNextStep(error?.message) { withoutNextStep.append(error?.message ?? "no error") }
        }
        return withoutNextStep
    }

    /// Expects every message to suggest a next step.
    static func expectNextSteps(missingFrom messages: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(messages.count == 0, "\(messages.count) messages give no next step, e.g. \(messages.first ?? "")", sourceLocation: sourceLocation)
    }

    /// Whether a message tells the reader what to do next.
    static func suggestsNextStep(_ message: String?) -> Bool {
        guard let message else { return false }
        return ["remove", "restore", "open it", "check the path", "run ", "pass the path", "delete"].contains { message.contains($0) }
    }
}
