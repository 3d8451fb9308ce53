// The decoded snapshot blocks kept in memory, bounded by their size.

import Foundation

/// A decoded block the cache can hold: immutable, and sized.
protocol CachedBlock: AnyObject, Sendable {
    /// The bytes it takes in memory, which the cache counts.
    var byteCount: Int { get }
}

/// Recently read snapshot blocks, least recently used first out: data
/// blocks and the leaves of secondary indexes, in one budget.
///
/// Bounded by bytes, not by blocks: a read that misses decodes one block,
/// and blocks are evicted, oldest use first, until the cache fits its
/// capacity again. Evicting a block does not invalidate a reader holding
/// it: blocks are immutable, and the reader's reference keeps it alive.
final class BlockCache: Sendable {
    /// Which block: a data block by its number, an index leaf by its table
    /// and offset (a leaf is checked, when read, as its table's).
    enum Key: Hashable, Sendable {
        case data(Int)
        case indexLeaf(table: Int, offset: UInt64)
    }

    /// The default capacity: 1/16 of physical memory, at least 16 MiB and at
    /// most 1 GiB (on this project's 24 GiB test machine, 1 GiB).
    static var defaultCapacity: Int {
        let sixteenth = Int(clamping: ProcessInfo.processInfo.physicalMemory / 16)
        return min(max(sixteenth, 16 << 20), 1 << 30)
    }

    private struct Contents {
        var blocks: [Key: (block: any CachedBlock, lastUse: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    let capacity: Int
    private let contents = Protected(Contents())

    init(capacity: Int) { self.capacity = max(capacity, 0) }

    /// The cached block `key`, marked as just used.
    func block(_ key: Key) -> (any CachedBlock)? {
        contents.withLock { contents in
            guard let entry = contents.blocks[key] else { return nil }
            contents.clock += 1
            contents.blocks[key] = (entry.block, contents.clock)
            return entry.block
        }
    }

    /// Keeps `block` as `key`, evicting the least recently used ones beyond capacity.
    func insert(_ block: any CachedBlock, as key: Key) {
        contents.withLock { contents in
            contents.clock += 1
            if let old = contents.blocks.updateValue((block, contents.clock), forKey: key) {
                contents.bytes -= old.block.byteCount
            }
            contents.bytes += block.byteCount
            guard contents.bytes > capacity else { return }
            // Evict down to 7/8 of capacity at once, so that a scan through
            // a full cache sorts the blocks once per eighth, not per block.
            let byAge = contents.blocks.sorted { $0.value.lastUse < $1.value.lastUse }
            for (cached, entry) in byAge where contents.bytes > capacity - capacity / 8 && cached != key {
                contents.blocks[cached] = nil
                contents.bytes -= entry.block.byteCount
            }
        }
    }

    /// How many bytes of decoded blocks the cache holds now.
    var byteCount: Int { contents.withLock { $0.bytes } }
}
