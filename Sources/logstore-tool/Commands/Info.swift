// `logstore-tool info FILE`: header, frames, sizes and compression.

import ArgumentParser
import Foundation
import LogStore

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's header, frame count, sizes and compression ratio.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let info: StoreInfo
        do {
            info = try StoreInspector.info(path: common.file)
        } catch {
            throw ExitStatus.report(error)
        }
        if common.json {
            try common.emitJSON(JSONDocument(result: info))
        } else {
            let formatter = ISO8601DateFormatter()
            print("""
                file:              \(info.path)
                format version:    \(info.writeVersion) (readable by version \(info.readVersion) and later)
                store UUID:        \(info.storeID.uuidString)
                created:           \(formatter.string(from: info.createdAt))
                file size:         \(formatBytes(info.fileSize)) (\(info.fileSize) bytes)
                frames:            \(info.frameCount)
                sequence numbers:  \(info.firstSequence.map { "\($0) to \(info.lastSequence ?? $0)" } ?? "none")
                last commit:       \(info.lastCommitAt.map { formatter.string(from: $0) } ?? "never")
                payload:           \(formatBytes(info.rawPayloadBytes)) raw, \(formatBytes(info.storedPayloadBytes)) stored
                compression ratio: \(String(format: "%.2f", info.compressionRatio))
                """)
            if let damage = info.damage {
                print("damage:            \(damage) (run \"logstore-tool verify\")")
            } else if info.unreadableTailBytes > 0 {
                print("interrupted save:  \(info.unreadableTailBytes) bytes at the end (cut off at the next read-write open)")
            }
        }
    }
}
