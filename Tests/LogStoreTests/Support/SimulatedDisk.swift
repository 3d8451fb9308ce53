// An in-memory file system that fails any call on command and loses power
// the ways a real disk and kernel may: the test side of the I/O seam.

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import LogStore

/// A ``FileSystem`` held in memory, for fault-injection and power-cut tests.
///
/// It keeps two views of everything, as a kernel over a disk does: what reads
/// see now, and what would survive a power cut. File contents become durable
/// only through ``FileIO/synchronize()``, and names (creates, links, renames,
/// removals) only through ``FileSystem/synchronizeDirectory(of:)``.
///
/// Every call that can fail is counted, in the order made, from the moment
/// the disk is armed (``arm(failing:of:with:)``); the armed call fails with the
/// chosen ``Fault``. Armed with ``arm(cuttingPowerBefore:of:)`` instead, the
/// disk keeps its state just before that call (``stateBeforeCut``), to cut
/// the power there while the operation runs on. ``afterPowerCut(_:seed:)``
/// gives a new disk holding what a power cut would leave: the old one, and
/// any store still using it, carry on untouched, so one run can be cut
/// several ways.
///
/// Safe from several threads at once: one lock guards all of it.
final class SimulatedDisk: FileSystem, @unchecked Sendable {
    /// How an armed call fails.
    enum Fault: Hashable, CustomStringConvertible, Sendable {
        /// The call fails with this errno and changes nothing.
        case error(Int32)
        /// A write lands only in part, then fails with ENOSPC (a full disk).
        case shortWrite
        /// A write reports success, and reads see all of it, but the disk
        /// keeps only half: a device that acknowledges what it then loses.
        case lyingWrite

        var description: String {
            switch self {
            case .error(let code): code == ENOSPC ? "ENOSPC" : code == EIO ? "EIO" : "errno \(code)"
            case .shortWrite: "short write"
            case .lyingWrite: "lying write"
            }
        }

        /// Whether the disk reports itself full (it is only ever so for a write).
        var fillsDisk: Bool { self == .error(ENOSPC) || self == .shortWrite }

        /// The faults worth trying on a call of this name.
        static func applicable(to call: String) -> [Fault] {
            switch call {
            case "write": [.error(EIO), .error(ENOSPC), .shortWrite, .lyingWrite]
            case "fallocate": [.error(EIO), .error(ENOSPC)]
            default: [.error(EIO)]
            }
        }
    }

    /// What survives a power cut of what was not yet made durable.
    enum PowerCut: String, CaseIterable, Sendable {
        /// Every unsynced write and name change is lost.
        case loseUnsynced = "unsynced lost"
        /// Unsynced writes land in the order made, up to a random one that
        /// is torn at a random byte; name changes land up to a random one.
        case tornInOrder = "torn in order"
        /// Each unsynced write lands whole, torn, or not at all, whatever
        /// the order (the kernel writes pages back in any order).
        case reordered = "reordered"
        // Both let writes a failed fsync left behind land or not: some of
        // their pages may have reached the disk before the error.
    }

    private enum Change {
        case write(offset: Int, bytes: [UInt8])
        case truncate(Int)
        /// A reservation: the file grows to this size with zeros, and never
        /// shrinks by it, in whatever order it lands.
        case extend(Int)
    }

    private final class Inode {
        /// What a power cut cannot take.
        var durable: [UInt8] = []
        /// What reads see.
        var current: [UInt8] = []
        /// Changes since the last successful sync, in order.
        var pending: [Change] = []
        /// How many of the first pending changes a failed sync may have
        /// dropped: as Linux does, a later sync succeeds without writing
        /// them. Only a power cut may still find them on disk.
        var doomed = 0
        var permissions: mode_t = 0o644
        /// Who may use the file besides its mode; a change to it is durable
        /// at once, as ``SystemFileSystem/copyOwnership(from:to:)`` fsyncs it.
        var ownership = Ownership()
        var lockHolder: ObjectIdentifier?

        /// A copy with everything pending kept pending, and no lock.
        func copy() -> Inode {
            let copy = Inode()
            copy.durable = durable
            copy.current = current
            copy.pending = pending
            copy.doomed = doomed
            copy.permissions = permissions
            copy.ownership = ownership
            return copy
        }
    }

    private enum NameChange {
        case set(String, Int)
        case remove(String)
        /// Atomic: the old name goes and the new one comes in one change.
        case rename(String, to: String)
    }

    private let lock = NSLock()
    private var inodes: [Int: Inode] = [:]
    private var names: [String: Int] = [:]
    private var durableNames: [String: Int] = [:]
    private var pendingNames: [NameChange] = []
    private var nextInode = 1
    private var callLog: [String] = []
    private var armed: (call: Int, kind: String?, fault: Fault?)?
    private var firedCall: String?
    private var frozen: SimulatedDisk?
    /// Per kind of call, the hold its next call waits at.
    private var holds: [String: (arrived: DispatchSemaphore, gate: DispatchSemaphore)] = [:]
    /// Per kind of call, how many of its calls go by before its hold.
    private var holdSkips: [String: Int] = [:]
    private var closedFileCalls: [String] = []
    /// How many bytes the named files may hold in all; nil for no limit.
    private var capacity: Int?
    /// The path that another process replaces (a compaction renaming its
    /// new file over it) right after each read-write open of it.
    private var replacedAfterEachOpen: String?

    init() {}

    // MARK: - Arming and counting

    /// Starts counting calls from zero; the `call`-th from now fails with
    /// `fault` (none when nil). With a `kind`, only calls of that kind count
    /// towards `call`: threads may reorder calls of different kinds, but
    /// the first fdatasync stays the first fdatasync.
    func arm(failing call: Int? = nil, of kind: String? = nil, with fault: Fault = .error(EIO)) {
        lock.withLock {
            callLog = []
            armed = call.map { ($0, kind, fault) }
            firedCall = nil
            frozen = nil
        }
    }

    /// Starts counting calls from zero; just before the `call`-th from now
    /// runs, keeps the disk's state, pending writes and all, as
    /// ``stateBeforeCut``. The call itself goes ahead. `kind` counts as for
    /// ``arm(failing:of:with:)``.
    func arm(cuttingPowerBefore call: Int, of kind: String? = nil) {
        lock.withLock {
            callLog = []
            armed = (call, kind, nil)
            firedCall = nil
            frozen = nil
        }
    }

    /// Makes the next fdatasync, before it does anything, signal `arrived`
    /// and wait for `gate`: a test can then act while that flush is under way.
    func holdNextFdatasync(arrived: DispatchSemaphore, gate: DispatchSemaphore) {
        lock.withLock { holds["fdatasync"] = (arrived, gate) }
    }

    /// Makes the next write, before it does anything, signal `arrived` and
    /// wait for `gate`: a test can then act while that write is about to land.
    func holdNextWrite(arrived: DispatchSemaphore, gate: DispatchSemaphore) {
        lock.withLock { holds["write"] = (arrived, gate) }
    }

    /// Makes the next read, before it does anything, signal `arrived` and
    /// wait for `gate`: a test can then act while a reader waits for the disk.
    /// With `skipping`, the reads before it go by first.
    func holdNextRead(skipping: Int = 0, arrived: DispatchSemaphore, gate: DispatchSemaphore) {
        lock.withLock {
            holds["read"] = (arrived, gate)
            holdSkips["read"] = skipping
        }
    }

    /// Waits at the hold set for the next `call`, if any, taking it.
    fileprivate func waitAtHold(of call: String) {
        guard let hold = lock.withLock({ () -> (arrived: DispatchSemaphore, gate: DispatchSemaphore)? in
            if let skips = holdSkips[call], skips > 0 {
                holdSkips[call] = skips - 1
                return nil
            }
            return holds.removeValue(forKey: call)
        }) else { return }
        hold.arrived.signal()
        hold.gate.wait()
    }

    // MARK: - Space

    /// Leaves room for `bytes` more than the named files hold now, as if the
    /// rest of the disk were taken: a write that would grow the files beyond
    /// it lands the part that fits and fails with ENOSPC, as a real full disk
    /// does. Shrinking a file frees its space again. Call it again, with
    /// more, to free space; ``removeSpaceLimit()`` lifts the limit.
    ///
    /// Only files with a name count: a removed file's space is free at once
    /// (a real disk frees it once the last descriptor closes too).
    func limitFreeSpace(to bytes: Int) {
        lock.withLock { capacity = usedBytesLocked() + bytes }
    }

    /// Lifts the limit ``limitFreeSpace(to:)`` set.
    func removeSpaceLimit() { lock.withLock { capacity = nil } }

    /// Bytes still free under the limit, nil when there is none.
    var freeBytes: Int? { lock.withLock { freeBytesLocked() } }

    private func usedBytesLocked() -> Int {
        Set(names.values).reduce(0) { $0 + (inodes[$1]?.current.count ?? 0) }
    }

    private func freeBytesLocked() -> Int? {
        capacity.map { max(0, $0 - usedBytesLocked()) }
    }

    /// The calls counted since the disk was armed, by name, in order.
    var calls: [String] { lock.withLock { callLog } }

    /// Calls made on a file after it was closed, by name, in order: on a
    /// real disk each would have used a descriptor number that another file
    /// may hold by then.
    var callsAfterClose: [String] { lock.withLock { closedFileCalls } }

    /// Whether the armed call has been reached.
    var faultFired: Bool { lock.withLock { firedCall != nil } }

    /// The name of the armed call once reached (threads can change which
    /// call comes N-th).
    var armedCall: String? { lock.withLock { firedCall } }

    /// The disk as it was just before the call ``arm(cuttingPowerBefore:of:)``
    /// named, once reached: cut its power with ``afterPowerCut(_:seed:)``.
    var stateBeforeCut: SimulatedDisk? { lock.withLock { frozen } }

    /// Counts a call; returns the fault to apply to it, if it is the armed one.
    /// Runs `body` under the disk's lock, keeping its typed error.
    fileprivate func locked<T>(_ body: () throws(LogStoreError) -> T) throws(LogStoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Counts a call; returns the fault to apply to it, if it is the armed
    /// one. Called with the lock held.
    private func count(_ call: String) -> Fault? {
        callLog.append(call)
        guard let armed, firedCall == nil else { return nil }
        if let kind = armed.kind {
            guard kind == call, armed.call == callLog.lazy.filter({ $0 == kind }).count else { return nil }
        } else {
            guard armed.call == callLog.count else { return nil }
        }
        firedCall = call
        guard let fault = armed.fault else {
            frozen = copyLocked()
            return nil
        }
        return fault
    }

    private func fail(_ call: String, _ path: String, _ fault: Fault) -> LogStoreError {
        if case .error(let code) = fault { return SystemFile.error(code, call, path: path) }
        return SystemFile.error(ENOSPC, call, path: path)
    }

    // MARK: - Power

    /// A new disk holding what a power cut now would leave, chosen by `seed`
    /// where the cut leaves a choice.
    func afterPowerCut(_ cut: PowerCut, seed: UInt64) -> SimulatedDisk {
        lock.withLock {
            var random = JournalFixtures.SeededGenerator(seed: seed)
            let disk = SimulatedDisk()
            disk.nextInode = nextInode
            // In a fixed order, so that a seed makes the same choices.
            for number in inodes.keys.sorted() {
                let inode = inodes[number]!
                let survivor = Inode()
                survivor.permissions = inode.permissions
                survivor.ownership = inode.ownership
                var contents = inode.durable
                let candidates = inode.pending
                switch cut {
                case .loseUnsynced:
                    break
                case .tornInOrder:
                    let landed = Int(random.next() % UInt64(candidates.count + 1))
                    for (index, change) in candidates.enumerated() where index <= landed {
                        Self.apply(change, to: &contents, keeping: index == landed ? Self.tear(change, &random) : nil)
                    }
                case .reordered:
                    for change in candidates {
                        switch random.next() % 3 {
                        case 0: Self.apply(change, to: &contents)
                        case 1: Self.apply(change, to: &contents, keeping: Self.tear(change, &random))
                        default: break
                        }
                    }
                }
                survivor.durable = contents
                survivor.current = contents
                disk.inodes[number] = survivor
            }
            var survivingNames = durableNames
            if cut != .loseUnsynced {
                // A rename, link or removal is atomic, and the directory's
                // journal keeps them in order: some prefix of them landed.
                let landed = Int(random.next() % UInt64(pendingNames.count + 1))
                for change in pendingNames.prefix(landed) { Self.apply(change, to: &survivingNames) }
            }
            disk.names = survivingNames
            disk.durableNames = survivingNames
            return disk
        }
    }

    /// A copy of this disk, pending changes and all, with no file open on
    /// it. Called with the lock held.
    private func copyLocked() -> SimulatedDisk {
        let disk = SimulatedDisk()
        disk.nextInode = nextInode
        for (number, inode) in inodes { disk.inodes[number] = inode.copy() }
        disk.names = names
        disk.durableNames = durableNames
        disk.pendingNames = pendingNames
        return disk
    }

    /// Applies `change`; a write lands only its first `keeping` bytes when given.
    private static func apply(_ change: Change, to contents: inout [UInt8], keeping: Int? = nil) {
        switch change {
        case .truncate(let size):
            if size < contents.count { contents.removeLast(contents.count - size) } else { contents += [UInt8](repeating: 0, count: size - contents.count) }
        case .extend(let size):
            if size > contents.count { contents += [UInt8](repeating: 0, count: size - contents.count) }
        case .write(let offset, let bytes):
            write(Array(bytes.prefix(keeping ?? bytes.count)), at: offset, into: &contents)
        }
    }

    /// Where a torn write stops: a random byte of it.
    private static func tear(_ change: Change, _ random: inout JournalFixtures.SeededGenerator) -> Int {
        guard case .write(_, let bytes) = change else { return 0 }
        return Int(random.next() % UInt64(bytes.count + 1))
    }

    private static func apply(_ change: NameChange, to names: inout [String: Int]) {
        switch change {
        case .set(let name, let inode): names[name] = inode
        case .remove(let name): names[name] = nil
        case .rename(let source, let destination):
            names[destination] = names[source]
            names[source] = nil
        }
    }

    private static func write(_ bytes: [UInt8], at offset: Int, into contents: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        if contents.count < offset + bytes.count { contents += [UInt8](repeating: 0, count: offset + bytes.count - contents.count) }
        contents.replaceSubrange(offset..<offset + bytes.count, with: bytes)
    }

    private func changeName(_ change: NameChange) {
        Self.apply(change, to: &names)
        pendingNames.append(change)
    }

    /// From now on, right after each read-write open of `path`, another
    /// process renames a copy of the file over it.
    func replaceAfterEachOpen(_ path: String) {
        lock.withLock { replacedAfterEachOpen = path }
    }

    // MARK: - Inspection

    /// The bytes of the file `path` names now.
    func contents(of path: String) -> [UInt8]? {
        lock.withLock { names[path].flatMap { inodes[$0]?.current } }
    }

    /// Replaces the contents of the file `path` names, durably (a test
    /// setting up damage); creates it when missing.
    func setContents(of path: String, to bytes: [UInt8]) {
        lock.withLock {
            let number = names[path] ?? { defer { nextInode += 1 }; return nextInode }()
            let inode = inodes[number] ?? Inode()
            inode.current = bytes
            inode.durable = bytes
            inode.pending = []
            inode.doomed = 0
            inodes[number] = inode
            names[path] = number
            durableNames[path] = number
        }
    }

    /// The permissions of the file `path` names.
    func permissions(of path: String) -> mode_t? {
        lock.withLock { names[path].flatMap { inodes[$0]?.permissions } }
    }

    /// A file's owner, group and extended attributes.
    struct Ownership: Hashable, Sendable {
        var owner: uid_t = 0
        var group: gid_t = 0
        var extendedAttributes: [String: [UInt8]] = [:]
    }

    /// The owner, group and extended attributes of the file `path` names.
    func ownership(of path: String) -> Ownership? {
        lock.withLock { names[path].flatMap { inodes[$0]?.ownership } }
    }

    /// Gives the file `path` names these permissions and ownership, durably.
    func setOwnership(of path: String, permissions: mode_t, _ ownership: Ownership) {
        lock.withLock {
            guard let inode = names[path].flatMap({ inodes[$0] }) else { return }
            inode.permissions = permissions
            inode.ownership = ownership
        }
    }

    /// Every name in the directory now, sorted.
    var allNames: [String] { lock.withLock { names.keys.sorted() } }

    // MARK: - FileSystem

    func open(_ path: String, _ mode: FileOpenMode, reportingAs name: String?) throws(LogStoreError) -> any FileIO {
        try locked { () throws(LogStoreError) -> any FileIO in
            if let fault = count("open") { throw fail("open", name ?? path, fault) }
            switch mode {
            case .readOnly, .readWrite:
                guard let number = names[path] else { throw SystemFile.error(ENOENT, "open", path: name ?? path) }
                let file = SimulatedFile(disk: self, inode: number, path: name ?? path, writable: mode == .readWrite)
                if mode == .readWrite, path == replacedAfterEachOpen, let old = inodes[number] {
                    let copy = Inode()
                    copy.current = old.current
                    copy.durable = old.current
                    copy.permissions = old.permissions
                    inodes[nextInode] = copy
                    changeName(.set(path, nextInode))
                    nextInode += 1
                }
                return file
            case .createExclusive(let permissions):
                guard names[path] == nil else { throw SystemFile.error(EEXIST, "open", path: path) }
                let inode = Inode()
                inode.permissions = permissions
                let number = nextInode
                nextInode += 1
                inodes[number] = inode
                changeName(.set(path, number))
                return SimulatedFile(disk: self, inode: number, path: path, writable: true)
            }
        }
    }

    func exists(_ path: String) -> Bool { lock.withLock { names[path] != nil } }

    func identity(ofPath path: String) -> FileIdentity? {
        lock.withLock { names[path].map { FileIdentity(device: 1, inode: UInt64($0)) } }
    }

    func rename(_ source: String, to destination: String) throws(LogStoreError) {
        try locked { () throws(LogStoreError) in
            if let fault = count("rename") { throw fail("rename", source, fault) }
            guard names[source] != nil else { throw SystemFile.error(ENOENT, "rename", path: source) }
            changeName(.rename(source, to: destination))
        }
    }

    func link(_ source: String, to destination: String) throws(LogStoreError) -> Bool {
        try locked { () throws(LogStoreError) -> Bool in
            if let fault = count("link") { throw fail("link", destination, fault) }
            guard let number = names[source] else { throw SystemFile.error(ENOENT, "link", path: source) }
            guard names[destination] == nil else { return false }
            changeName(.set(destination, number))
            return true
        }
    }

    func remove(_ path: String) {
        lock.withLock {
            if names[path] != nil { changeName(.remove(path)) }
        }
    }

    func synchronizeDirectory(of path: String) throws(LogStoreError) {
        try locked { () throws(LogStoreError) in
            if let fault = count("fsync directory") { throw fail("fsync directory", path, fault) }
            durableNames = names
            pendingNames = []
        }
    }

    func names(inDirectory directory: String) -> [String] {
        lock.withLock {
            let prefix = directory + "/"
            return names.keys.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }.map { String($0.dropFirst(prefix.count)) }
        }
    }

    func resolvingSymbolicLink(_ path: String) -> String { path }

    func copyOwnership(from original: any FileIO, to file: any FileIO) throws(LogStoreError) {
        try locked { () throws(LogStoreError) in
            if let fault = count("fchown") { throw fail("fchown", file.path, fault) }
            guard let source = original as? SimulatedFile, let target = file as? SimulatedFile,
                  let from = inodes[source.inode], let to = inodes[target.inode] else {
                throw SystemFile.error(EBADF, "fchown", path: file.path)
            }
            to.permissions = from.permissions
            to.ownership = from.ownership
        }
    }

    func freeSpace(at path: String) -> UInt64? {
        lock.withLock { freeBytesLocked().map(UInt64.init) ?? .max }
    }

    // MARK: - Files

    /// One open file of the disk; its calls go through the disk's lock and count.
    final class SimulatedFile: FileIO, @unchecked Sendable {
        let disk: SimulatedDisk
        let inode: Int
        private let reportedPath: Protected<String>
        var path: String { reportedPath.withLock { $0 } }
        let writable: Bool
        private var isClosed = false

        func didMove(to path: String) { reportedPath.withLock { $0 = path } }

        fileprivate init(disk: SimulatedDisk, inode: Int, path: String, writable: Bool) {
            self.disk = disk
            self.inode = inode
            reportedPath = Protected(path)
            self.writable = writable
        }

        /// Called with the disk's lock held.
        private func checkOpen(_ call: String) throws(LogStoreError) {
            if isClosed {
                // A real descriptor number may belong to another file by now.
                disk.closedFileCalls.append(call)
                throw SystemFile.error(EBADF, call, path: path)
            }
        }

        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(LogStoreError) -> Int {
            disk.waitAtHold(of: "read")
            return try disk.locked { () throws(LogStoreError) -> Int in
                try checkOpen("read")
                if let fault = disk.count("read") { throw disk.fail("read", path, fault) }
                let contents = disk.inodes[inode]!.current
                guard offset < contents.count else { return 0 }
                let count = min(buffer.count, contents.count - Int(offset))
                contents.withUnsafeBytes { source in
                    buffer.baseAddress!.copyMemory(from: source.baseAddress! + Int(offset), byteCount: count)
                }
                return count
            }
        }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(LogStoreError) {
            disk.waitAtHold(of: "write")
            try disk.locked { () throws(LogStoreError) in
                try checkOpen("write")
                guard writable else { throw SystemFile.error(EBADF, "write", path: path) }
                let whole = Array(bytes)
                var seen = whole, kept = whole
                let fault = disk.count("write")
                let file = disk.inodes[inode]!
                // Past the space limit, the part that fits lands, and the
                // write fails with ENOSPC, as an armed short write does.
                var isFull = fault == .shortWrite
                if fault == nil, let free = disk.freeBytesLocked(), Int(offset) + whole.count - file.current.count > free {
                    seen = Array(whole.prefix(max(0, file.current.count + free - Int(offset))))
                    kept = seen
                    isFull = true
                }
                switch fault {
                case .error(let code)?: throw SystemFile.error(code, "write", path: path, offset: offset)
                case .shortWrite?: seen = Array(whole.prefix(whole.count / 2)); kept = seen
                case .lyingWrite?: kept = Array(whole.prefix(whole.count / 2))
                case nil: break
                }
                SimulatedDisk.write(seen, at: Int(offset), into: &file.current)
                if !kept.isEmpty { file.pending.append(.write(offset: Int(offset), bytes: kept)) }
                if isFull { throw SystemFile.error(ENOSPC, "write", path: path, offset: offset + UInt64(seen.count)) }
            }
        }

        func synchronize() throws(LogStoreError) {
            disk.waitAtHold(of: "fdatasync")
            try disk.locked { () throws(LogStoreError) in
                try checkOpen("fdatasync")
                let file = disk.inodes[inode]!
                if let fault = disk.count("fdatasync") {
                    // The kernel may have dropped the dirty pages and
                    // forgotten the error: they are never written now.
                    file.doomed = file.pending.count
                    throw disk.fail("fdatasync", path, fault)
                }
                // What the disk keeps: the pending changes as they will land
                // (not what reads see: a lying write kept less), less those
                // a failed sync doomed.
                for change in file.pending.dropFirst(file.doomed) { SimulatedDisk.apply(change, to: &file.durable) }
                file.pending = []
                file.doomed = 0
            }
        }

        func size() throws(LogStoreError) -> UInt64 {
            try disk.locked { () throws(LogStoreError) -> UInt64 in
                try checkOpen("fstat")
                if let fault = disk.count("fstat") { throw disk.fail("fstat", path, fault) }
                return UInt64(disk.inodes[inode]!.current.count)
            }
        }

        func truncate(to size: UInt64) throws(LogStoreError) {
            try disk.locked { () throws(LogStoreError) in
                try checkOpen("truncate")
                // Counted first: a read-only descriptor's attempt is a call
                // made, which tests look for, even though it fails.
                let fault = disk.count("truncate")
                guard writable else { throw SystemFile.error(EINVAL, "truncate", path: path) }
                if let fault { throw disk.fail("truncate", path, fault) }
                let file = disk.inodes[inode]!
                SimulatedDisk.apply(.truncate(Int(size)), to: &file.current)
                file.pending.append(.truncate(Int(size)))
            }
        }

        func reserve(_ range: Range<UInt64>) throws(LogStoreError) {
            let size = range.upperBound
            try disk.locked { () throws(LogStoreError) in
                try checkOpen("fallocate")
                let fault = disk.count("fallocate")
                guard writable else { throw SystemFile.error(EBADF, "fallocate", path: path) }
                if let fault { throw disk.fail("fallocate", path, fault) }
                let file = disk.inodes[inode]!
                guard Int(size) > file.current.count else { return }
                // All or nothing: a full disk refuses the whole reservation.
                if let free = disk.freeBytesLocked(), Int(size) - file.current.count > free {
                    throw SystemFile.error(ENOSPC, "fallocate", path: path, offset: UInt64(file.current.count))
                }
                // The new size reaches the disk with the next sync, as the
                // bytes written into it do; until then a power cut may keep
                // the file as long as it was.
                SimulatedDisk.apply(.extend(Int(size)), to: &file.current)
                file.pending.append(.extend(Int(size)))
            }
        }

        func close() {
            disk.lock.withLock {
                guard !isClosed else { return }
                isClosed = true
                if disk.inodes[inode]?.lockHolder == ObjectIdentifier(self) { disk.inodes[inode]?.lockHolder = nil }
            }
        }

        func lockExclusively() throws(LogStoreError) {
            try disk.locked { () throws(LogStoreError) in
                try checkOpen("flock")
                if let fault = disk.count("flock") { throw disk.fail("flock", path, fault) }
                let file = disk.inodes[inode]!
                if let holder = file.lockHolder, holder != ObjectIdentifier(self) {
                    throw LogStoreError(.storeLocked, "\(path) is locked by this process (simulated disk)", path: path)
                }
                file.lockHolder = ObjectIdentifier(self)
            }
        }

        func isLockedByWriter() throws(LogStoreError) -> Bool {
            try disk.locked { () throws(LogStoreError) -> Bool in
                try checkOpen("flock")
                return disk.inodes[inode]!.lockHolder.map { $0 != ObjectIdentifier(self) } ?? false
            }
        }

        func identity() throws(LogStoreError) -> FileIdentity {
            try disk.locked { () throws(LogStoreError) -> FileIdentity in
                try checkOpen("fstat")
                return FileIdentity(device: 1, inode: UInt64(inode))
            }
        }

        func reopenForReading() throws(LogStoreError) -> any FileIO {
            try disk.locked { () throws(LogStoreError) -> any FileIO in
                try checkOpen("open")
                if let fault = disk.count("open") { throw disk.fail("open", path, fault) }
                return SimulatedFile(disk: disk, inode: inode, path: path, writable: false)
            }
        }
    }
}

extension SimulatedDisk {
    /// Opens the journal at `path` read-only on another thread, holds it at
    /// its read after the first `skipping`, runs `meanwhile` while that read
    /// waits, then lets the open go on; returns how the open ended. The
    /// read not coming within 30 s is recorded as an issue (`never`), and
    /// `meanwhile` then runs while the open goes on unheld.
    func openReadOnly(_ path: String, holdingReadAfter skipping: Int, never: Comment, sourceLocation: SourceLocation = #_sourceLocation, meanwhile: () throws -> Void) rethrows -> Result<Journal, LogStoreError> {
        let arrived = DispatchSemaphore(value: 0), gate = DispatchSemaphore(value: 0)
        holdNextRead(skipping: skipping, arrived: arrived, gate: gate)
        let opened = Protected<Result<Journal, LogStoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { () throws(LogStoreError) in try Journal(path: path, options: JournalOptions(access: .readOnly), fileSystem: self) }
            opened.withLock { $0 = result }
            done.signal()
        }.start()
        #expect(arrived.wait(timeout: .now() + 30) == .success, never, sourceLocation: sourceLocation)
        try meanwhile()
        gate.signal()
        done.wait()
        return opened.withLock { $0 }!
    }
}
