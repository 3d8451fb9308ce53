// Fuzz target: store files whose checksums all match and whose content is
// hostile, through everything a store does with a file: open (strict and
// with salvage), a fetch of every object, a save, a compaction and a reopen.

import Foundation
@_spi(Fuzzing) import LogStore

enum StoreContentTarget {
    /// The stores the inputs change: the seed corpus's whole stores (empty,
    /// a few saves, compacted with saves after), made once per process.
    static let stores: [[UInt8]] = {
        let stores = (try? FuzzSeeds.storeFiles()) ?? []
        let whole = stores.filter { !$0.name.contains("-") }.map(\.bytes)
        precondition(!whole.isEmpty, "the store-content target has no seed stores to change")
        return whole
    }()

    static let directory = StoreFileTarget.scratchDirectory("store-content")

    /// The input's first byte picks a seed store, and the rest are the
    /// choices of ``ContentMutation``: which frames change, and how.
    static func run(_ bytes: UnsafeRawBufferPointer) {
        var choices = Choices(bytes: bytes)
        let store = stores[choices.next(stores.count)]
        let rounds = 1 + choices.next(4)
        let file = ContentMutation.mutate(store, rounds: rounds) { choices.next($0) }

        let path = directory + "/content.logstore"
        StoreFileTarget.clear(directory)
        defer { StoreFileTarget.clear(directory) }
        guard FileManager.default.createFile(atPath: path, contents: Data(file)) else {
            fatalError("cannot write the fuzz input to \(path)")
        }
        _ = try? StoreInspector.verify(path: path)
        StoreFileTarget.readEverything(path, options: JournalOptions(access: .readOnly, createIfMissing: false))
        let strict = JournalOptions(durability: .deferredToOS, createIfMissing: false, compaction: .manual)
        let salvage = JournalOptions(durability: .deferredToOS, createIfMissing: false, recoveryMode: .salvage, compaction: .manual)
        for options in [strict, salvage] where useStore(path, options: options) {
            // What a save and a compaction left opens again, and reads.
            StoreFileTarget.readEverything(path, options: strict)
        }
    }

    /// Opens the store read-write, reads every object, saves a new object
    /// and a change to an old one, and compacts; returns whether it opened.
    static func useStore(_ path: String, options: JournalOptions) -> Bool {
        guard let store = try? Store(recordedModelAt: path, options: options) else { return false }
        defer { store.close() }
        let context = store.newContext()
        StoreFileTarget.readObjects(of: store, in: context) { entity, objects in
            if let first = objects.first, let attribute = entity.attributes.first(where: { !$0.isTransient }) {
                try? first.setValue(nil, forKey: attribute.name)
            }
            _ = try? context.insert(entity.name)
        }
        _ = try? context.save()
        _ = try? store.compact()
        return true
    }
}
