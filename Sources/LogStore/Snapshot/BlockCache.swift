// The decoded snapshot blocks kept in memory, bounded by their size.

import Foundation

/// Recently read snapshot blocks, least recently used first out.
///
/// Bounded by bytes, not by blocks: a read that misses decodes one block,
/// and blocks are evicted, oldest use first, until the cache fits its
/// capacity again. Evicting a block does not invalidate a reader holding
/// it: blocks are immutable, and the reader's reference keeps it alive.
final class BlockCache: Sendable {
    /// The default capacity: 1/16 of physical memory, at least 16 MiB and at
    /// most 1 GiB (on this project's 24 GiB test machine, 1 GiB).
    static var defaultCapacity: Int {
        let sixteenth = Int(clamping: ProcessInfo.processInfo.physicalMemory / 16)
        return min(max(sixteenth, 16 << 20), 1 << 30)
    }

    private struct Contents {
        var blocks: [Int: (block: SnapshotBlock, lastUse: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    let capacity: Int
    private let contents = Protected(Contents())

    init(capacity: Int) { self.capacity = max(capacity, 0) }

    /// The cached block `number`, marked as just used.
    func block(_ number: Int) -> SnapshotBlock? {
        contents.withLock { contents in
            guard let entry = contents.blocks[number] else { return nil }
            contents.clock += 1
            contents.blocks[number] = (entry.block, contents.clock)
            return entry.block
        }
    }

    /// Keeps `block`, evicting the least recently used ones beyond capacity.
    func insert(_ block: SnapshotBlock) {
        contents.withLock { contents in
            contents.clock += 1
            if let old = contents.blocks.updateValue((block, contents.clock), forKey: block.number) {
                contents.bytes -= old.block.byteCount
            }
            contents.bytes += block.byteCount
            guard contents.bytes > capacity else { return }
            // Evict down to 7/8 of capacity at once, so that a scan through
            // a full cache sorts the blocks once per eighth, not per block.
            let byAge = contents.blocks.sorted { $0.value.lastUse < $1.value.lastUse }
            for (number, entry) in byAge where contents.bytes > capacity - capacity / 8 && number != block.number {
                contents.blocks[number] = nil
                contents.bytes -= entry.block.byteCount
            }
        }
    }

    /// How many bytes of decoded blocks the cache holds now.
    var byteCount: Int { contents.withLock { $0.bytes } }
}
