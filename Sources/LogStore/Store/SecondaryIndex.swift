// A secondary index of one attribute: record keys in the order of their values.

import Foundation

/// The records of one entity ordered by one attribute's value, for
/// equality, `IN` and range lookups and for sorted reads with a limit.
///
/// Entries live in sorted runs of bounded length, with the latest changes
/// in a short unsorted tail that is moved into the runs once a save leaves
/// it longer than `tailLimit`: a single-record save appends, a bulk save
/// merges once, and no save's work grows with the index.
/// A changed or deleted record's old entry is not searched for: the record's
/// generation moves on, and entries of an older generation are skipped and
/// dropped at the next merge.
///
/// The entries a snapshot stored are kept apart, as it stored them: its
/// values, and per value its keys (``Base``), 8 bytes a key, where an entry
/// of the runs takes about 32. A key changed since has a state, which hides
/// its snapshot entry; a compaction gives the index the new snapshot's
/// entries and drops the changes it wrote (``relocated(to:changedSince:)``).
struct SecondaryIndex: Sendable {
    struct Entry: Sendable {
        var value: StoredValue
        var key: UInt64
        var generation: UInt32
    }

    /// A set of values to look up.
    struct Range: Sendable {
        /// Exactly these values (`==`, `IN`); nil for a range.
        var values: [StoredValue]?
        var lower: (value: StoredValue, inclusive: Bool)?
        var upper: (value: StoredValue, inclusive: Bool)?

        static func equal(to values: [StoredValue]) -> Range { Range(values: values) }

        /// The values between `lower` and `upper` (either may be open) by
        /// the predicate order (``StoredValue/order(_:_:)``). NaN compares
        /// only with NaN, so a NaN bound selects NaN alone, or nothing.
        static func between(lower: (value: StoredValue, inclusive: Bool)?, upper: (value: StoredValue, inclusive: Bool)?) -> Range {
            let bounds = [lower, upper].compactMap { $0 }
            guard bounds.contains(where: { $0.value.numeric?.isNaN == true }) else {
                return Range(values: nil, lower: lower, upper: upper)
            }
            let nan = bounds.allSatisfy { $0.inclusive && $0.value.numeric?.isNaN == true }
            return .equal(to: nan ? [.double(.nan)] : [])
        }

        /// Whether `value` lies in the range, by the predicate order.
        func contains(_ value: StoredValue) -> Bool {
            if let values { return values.contains { StoredValue.order($0, value) == .orderedSame } }
            if let lower {
                guard let order = StoredValue.order(value, lower.value) else { return false }
                if order == .orderedAscending || (order == .orderedSame && !lower.inclusive) { return false }
            }
            if let upper {
                guard let order = StoredValue.order(value, upper.value) else { return false }
                if order == .orderedDescending || (order == .orderedSame && !upper.inclusive) { return false }
            }
            return value != .null && value.numeric?.isNaN != true
        }

        /// This range narrowed to values also in `other`.
        func intersected(with other: Range) -> Range {
            if let values { return Range(values: values.filter(other.contains)) }
            if let values = other.values { return Range(values: values.filter(contains)) }
            var result = self
            if let bound = other.lower {
                if let current = lower {
                    let order = StoredValue.sortOrder(bound.value, current.value)
                    if order == .orderedDescending || (order == .orderedSame && !bound.inclusive) { result.lower = bound }
                } else {
                    result.lower = bound
                }
            }
            if let bound = other.upper {
                if let current = upper {
                    let order = StoredValue.sortOrder(bound.value, current.value)
                    if order == .orderedAscending || (order == .orderedSame && !bound.inclusive) { result.upper = bound }
                } else {
                    result.upper = bound
                }
            }
            return result
        }
    }

    /// The entries of a snapshot, grouped by value in value order, each
    /// group's keys increasing, in pages (``IndexPages``): in memory, or
    /// read from the snapshot's leaves as lookups need them. An entry is
    /// current while its key has no state: no change since the snapshot.
    private struct Base: Sendable {
        var pages: any IndexPages = LoadedIndexPages(values: [], counts: [], keys: [])

        var isEmpty: Bool { pages.count == 0 }

        /// A place between two groups: before group `group` of page `page`,
        /// or at the end (`page == pages.count`).
        struct Position: Comparable {
            var page: Int
            var group: Int
            static func < (a: Position, b: Position) -> Bool { (a.page, a.group) < (b.page, b.group) }
        }

        var end: Position { Position(page: pages.count, group: 0) }

        /// The first group whose value is not before `value` (or, with
        /// `after`, not before or equal). Reads one page at most: the last
        /// whose first value is before the boundary.
        func boundary(_ value: StoredValue, after: Bool) -> Position {
            var low = 0, high = pages.count
            while low < high {
                let middle = (low + high) / 2
                let order = StoredValue.sortOrder(pages.firstValue(ofPage: middle), value)
                if order == .orderedAscending || (after && order == .orderedSame) { low = middle + 1 } else { high = middle }
            }
            guard low > 0, let page = pages.page(low - 1) else { return Position(page: low, group: 0) }
            let group = page.boundary(value, after: after)
            return group < page.groupCount ? Position(page: low - 1, group: group) : Position(page: low, group: 0)
        }

        /// The groups whose values lie in `range`, as spans of positions.
        func span(_ range: Range) -> [(Position, Position)] {
            if let values = range.values {
                return values.map { (boundary($0, after: false), boundary($0, after: true)) }
            }
            // Ranges never include nil or NaN, which sort before every number.
            let start = range.lower.map { boundary($0.value, after: !$0.inclusive) } ?? boundary(.double(.nan), after: true)
            let end = range.upper.map { boundary($0.value, after: $0.inclusive) } ?? self.end
            return [(start, max(start, end))]
        }

        /// Calls `body` with the keys of each group from `start` up to `end`.
        /// A page that cannot be read is passed over; the snapshot keeps the
        /// failure for the read to throw.
        func forEachGroup(from start: Position, to end: Position, _ body: (ArraySlice<UInt64>) -> Void) {
            var position = start
            while position < end {
                guard let page = pages.page(position.page) else {
                    position = Position(page: position.page + 1, group: 0)
                    continue
                }
                let stop = position.page == end.page ? end.group : page.groupCount
                for group in position.group..<max(position.group, stop) { body(page.keys(ofGroup: group)) }
                position = Position(page: position.page + 1, group: 0)
            }
        }

        /// About how many keys lie from `start` up to `end`: whole pages
        /// between them are counted from what is known of them, unread.
        func estimate(from start: Position, to end: Position) -> Int {
            guard start < end else { return 0 }
            func keys(before position: Position) -> Int {
                guard position.group > 0, position.page < pages.count, let page = pages.page(position.page) else { return 0 }
                return page.starts[position.group]
            }
            if start.page == end.page { return keys(before: end) - keys(before: start) }
            var count = pages.keyCount(ofPage: start.page) - keys(before: start) + keys(before: end)
            for page in (start.page + 1)..<end.page { count += pages.keyCount(ofPage: page) }
            return count
        }

        /// A walk over the groups in value order, either way.
        struct Walk {
            private let pages: any IndexPages
            private let ascending: Bool
            private var pageNumber: Int
            private var group = 0
            private var page: IndexPage?

            init(_ pages: any IndexPages, ascending: Bool) {
                self.pages = pages
                self.ascending = ascending
                pageNumber = ascending ? -1 : pages.count
                nextPage()
            }

            /// The group at the walk's position, nil past the last.
            var current: (value: StoredValue, keys: ArraySlice<UInt64>)? {
                page.map { ($0.values[group], $0.keys(ofGroup: group)) }
            }

            mutating func advance() {
                group += ascending ? 1 : -1
                if let page, page.values.indices.contains(group) { return }
                nextPage()
            }

            /// Moves to the next page in the walk's direction holding a
            /// group; pages that cannot be read are passed over.
            private mutating func nextPage() {
                page = nil
                while page == nil {
                    pageNumber += ascending ? 1 : -1
                    guard pages.count > 0, (0..<pages.count).contains(pageNumber) else { return }
                    if let next = pages.page(pageNumber), next.groupCount > 0 {
                        page = next
                        group = ascending ? 0 : next.groupCount - 1
                    }
                }
            }
        }
    }

    /// The attribute's slot.
    let slot: Int
    private var base = Base()
    /// The merged entries in order, cut into runs of at most
    /// `2 × chunkCapacity`: a few recent entries go into the one run where
    /// they belong, so a save's cost does not grow with the index.
    private var chunks: [[Entry]] = []
    /// How many entries `chunks` holds, stale ones included.
    private var chunkedCount = 0
    private var tail: [Entry] = []
    /// Per record key, the generation of its current entry shifted left
    /// by one, with the low bit set while the record holds a value: one
    /// array, so that checking an entry costs one memory access.
    private var states = KeyMap<UInt32>(empty: 0)
    /// The run the next settle sweeps of stale entries.
    private var sweepPosition = 0
    private let chunkCapacity: Int
    private let tailLimit: Int

    /// `chunkCapacity` and `tailLimit` are there for tests, which make
    /// them small so that a few hundred changes split, sweep and merge runs.
    init(slot: Int, chunkCapacity: Int = 512, tailLimit: Int = 1024) {
        self.slot = slot
        self.chunkCapacity = chunkCapacity
        self.tailLimit = tailLimit
    }

    /// The index a snapshot stored (FORMAT.md §11.3): `keys` in runs of
    /// `counts`, one run per value, values in sort order and each run's keys
    /// increasing, exactly as ``groups()`` gives them.
    init(slot: Int, values: [StoredValue], counts: [Int], keys: [UInt64]) {
        self.init(slot: slot, stored: LoadedIndexPages(values: values, counts: counts, keys: keys))
    }

    /// The index a snapshot stored, in `pages`: read from the snapshot as
    /// lookups need them, or held in memory.
    init(slot: Int, stored pages: any IndexPages) {
        self.init(slot: slot)
        base.pages = pages
    }

    /// This index once a compaction wrote it, as the compaction took it,
    /// into a snapshot that stores its entries in `pages`: those entries as
    /// the base, then each record in `changes` (its key, and its value now,
    /// nil once deleted) changed since, so that the memory of the changes
    /// the snapshot holds is given back.
    func relocated(to pages: any IndexPages, changedSince changes: [(key: UInt64, value: StoredValue?)]) -> SecondaryIndex {
        var index = SecondaryIndex(slot: slot, chunkCapacity: chunkCapacity, tailLimit: tailLimit)
        index.base.pages = pages
        // Sorted into runs at once, not through the tail and a settle: a
        // bulk import leaves as many changes as it saved meanwhile, and
        // each copy the tail's growth and the settle make costs their size.
        var entries: [Entry] = []
        entries.reserveCapacity(changes.count)
        for (key, value) in changes {
            if let value {
                index.set(key, value)
                entries.append(index.tail.removeLast())
            } else {
                index.remove(key)
            }
        }
        entries.sort(by: Self.precedes)
        index.mergeIntoRuns(entries)
        return index
    }

    /// Every current entry as a snapshot stores it: the values in sort
    /// order, how many keys each has, and the keys, increasing per value.
    func groups() -> (values: [StoredValue], counts: [Int], keys: [UInt64]) {
        var values: [StoredValue] = [], counts: [Int] = [], keys: [UInt64] = []
        forEachGroup(ascending: true) { value, group in
            values.append(value)
            counts.append(group.count)
            keys += group
            return true
        }
        return (values, counts, keys)
    }

    /// Records `key` as holding `value` (replacing what it held).
    mutating func set(_ key: UInt64, _ value: StoredValue) {
        states[key] = ((states[key] >> 1) &+ 1) << 1 | 1
        tail.append(Entry(value: value, key: key, generation: states[key]))
    }

    /// Records that `key` holds no value: its entries, in the runs or in the
    /// base, are no longer current.
    mutating func remove(_ key: UInt64) {
        let state = states[key]
        // A key with no state and no entry in the base costs nothing; one
        // with a base entry gets a state that hides it.
        guard state != 0 || !base.isEmpty else { return }
        states[key] = ((state >> 1) &+ 1) << 1
    }

    /// Moves the tail into the runs once it is long; called after each
    /// save is applied. A tail that is large beside the index (a bulk
    /// save) is merged in one pass over everything; a short one goes entry
    /// by entry into its run, and runs are swept of stale entries in turn,
    /// so the work of a save is bounded by its own size, not the index's.
    mutating func settle() {
        guard tail.count > tailLimit else { return }
        let moved = tail.count
        // Taken, not copied: a bulk save's tail is as long as the save.
        var recent = tail
        tail = []
        let states = self.states
        recent.removeAll { states[$0.key] != $0.generation }
        recent.sort(by: Self.precedes)
        if recent.count * 8 >= chunkedCount {
            mergeIntoRuns(recent)
            return
        }
        insert(recent)
        // Each entry of the tail left at most one stale entry behind. The
        // sweep goes round every run, examining `sweepRatio` entries per
        // entry moved, so a run is swept before more than about
        // 1/`sweepRatio` of the index can have gone stale since its turn.
        var budget = Self.sweepRatio * moved
        var swept = 0
        while budget > 0, swept < chunks.count {
            budget -= sweepNextChunk()
            swept += 1
        }
    }

    /// Entries examined for stale ones per entry a settle moves into the runs.
    static let sweepRatio = 16

    /// Replaces the runs with runs of `chunkCapacity` holding their current
    /// entries and the sorted `recent` ones, in order. Each old run is given
    /// back once read, so the old runs and the new never both hold the
    /// whole index: a bulk save's settle needs about the size of the index
    /// and of the save, not twice both.
    private mutating func mergeIntoRuns(_ recent: [Entry]) {
        var old = chunks
        chunks = []
        var runs: [[Entry]] = []
        runs.reserveCapacity((chunkedCount + recent.count) / chunkCapacity + 1)
        var run: [Entry] = []
        var count = 0
        func add(_ entry: Entry) {
            if run.isEmpty { run.reserveCapacity(chunkCapacity) }
            run.append(entry)
            count += 1
            if run.count == chunkCapacity {
                runs.append(run)
                run = []
            }
        }
        var next = 0
        for position in old.indices {
            let chunk = old[position]
            old[position] = []
            for left in chunk where isCurrent(left) {
                while next < recent.count, Self.precedes(recent[next], left) {
                    add(recent[next])
                    next += 1
                }
                add(left)
            }
        }
        for entry in recent[next...] { add(entry) }
        if !run.isEmpty { runs.append(run) }
        chunks = runs
        chunkedCount = count
        sweepPosition = 0
    }

    /// Puts the sorted `recent` entries into the runs where they belong. A
    /// run that receives a few takes each in place (moving half the run);
    /// one that receives many is merged with them in one pass. A run grown
    /// past twice `chunkCapacity` is cut into runs of `chunkCapacity`. Runs
    /// that receive nothing are not touched, and stale entries are left
    /// to the sweep.
    private mutating func insert(_ recent: [Entry]) {
        guard !chunks.isEmpty else {
            mergeIntoRuns(recent)
            return
        }
        var runs: [[Entry]] = []
        runs.reserveCapacity(chunks.count + recent.count / chunkCapacity + 1)
        var next = 0
        for position in chunks.indices {
            // An entry belongs to the first run whose last entry does not
            // precede it, or to the last run.
            var end = next
            if position == chunks.count - 1 {
                end = recent.count
            } else {
                let last = chunks[position][chunks[position].count - 1]
                while end < recent.count, !Self.precedes(last, recent[end]) { end += 1 }
            }
            var run = chunks[position]
            chunks[position] = []  // the run is uniquely referenced while it changes
            if end - next <= Self.entriesInsertedInPlace {
                for entry in recent[next..<end] {
                    run.insert(entry, at: Self.firstPosition(in: run) { !Self.precedes($0, entry) })
                }
            } else {
                var merged: [Entry] = []
                merged.reserveCapacity(run.count + end - next)
                for entry in run {
                    while next < end, Self.precedes(recent[next], entry) {
                        merged.append(recent[next])
                        next += 1
                    }
                    merged.append(entry)
                }
                merged += recent[next..<end]
                run = merged
            }
            next = end
            if run.count <= 2 * chunkCapacity {
                runs.append(run)
            } else {
                for start in stride(from: 0, to: run.count, by: chunkCapacity) {
                    runs.append(Array(run[start..<min(start + chunkCapacity, run.count)]))
                }
            }
        }
        chunks = runs
        chunkedCount = runs.reduce(0) { $0 + $1.count }
    }

    /// Up to how many new entries a run takes one at a time rather than by
    /// a merge: each costs a move of half the run, a merge a copy of all of it.
    private static let entriesInsertedInPlace = 8

    /// Drops the stale entries of the run at `sweepPosition` and moves on,
    /// joining it with the next run when both fit in one; returns how
    /// many entries it examined.
    private mutating func sweepNextChunk() -> Int {
        guard !chunks.isEmpty else { return 0 }
        if sweepPosition >= chunks.count { sweepPosition = 0 }
        let position = sweepPosition
        var examined = chunks[position].count
        sweep(position)
        if chunks[position].isEmpty {
            chunks.remove(at: position)
            return examined
        }
        if position + 1 < chunks.count {
            examined += chunks[position + 1].count
            sweep(position + 1)
            if chunks[position].count + chunks[position + 1].count <= chunkCapacity {
                chunks[position] += chunks[position + 1]
                chunks.remove(at: position + 1)
            } else if chunks[position + 1].isEmpty {
                chunks.remove(at: position + 1)
            }
        }
        sweepPosition = position + 1
        return examined
    }

    private mutating func sweep(_ chunk: Int) {
        let before = chunks[chunk].count
        let states = self.states
        chunks[chunk].removeAll { states[$0.key] != $0.generation }
        chunkedCount -= before - chunks[chunk].count
    }

    private func isCurrent(_ entry: Entry) -> Bool {
        states[entry.key] == entry.generation
    }

    static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        switch StoredValue.sortOrder(a.value, b.value) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a.key < b.key
        }
    }

    /// The first position in `entries` where `isAtOrAfter` holds, which
    /// holds from some position to the end.
    private static func firstPosition(in entries: [Entry], where isAtOrAfter: (Entry) -> Bool) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if isAtOrAfter(entries[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// A place between two entries of the runs: before entry `offset` of
    /// run `chunk`, or at the end (`chunk == chunks.count`).
    private struct Position: Comparable {
        var chunk: Int
        var offset: Int
        static func < (a: Position, b: Position) -> Bool { (a.chunk, a.offset) < (b.chunk, b.offset) }
    }

    /// The first position whose value is not before `value` (or, with
    /// `after`, not before or equal).
    private func boundary(_ value: StoredValue, after: Bool) -> Position {
        func isAtOrAfter(_ entry: Entry) -> Bool {
            let order = StoredValue.sortOrder(entry.value, value)
            return !(order == .orderedAscending || (after && order == .orderedSame))
        }
        // The first run whose last entry is at or after the boundary.
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if isAtOrAfter(chunks[middle][chunks[middle].count - 1]) { high = middle } else { low = middle + 1 }
        }
        guard low < chunks.count else { return Position(chunk: chunks.count, offset: 0) }
        return Position(chunk: low, offset: Self.firstPosition(in: chunks[low], where: isAtOrAfter))
    }

    private var end: Position { Position(chunk: chunks.count, offset: 0) }

    private func span(_ range: Range) -> [(Position, Position)] {
        if let values = range.values {
            return values.map { (boundary($0, after: false), boundary($0, after: true)) }
        }
        // Ranges never include nil or NaN, which sort before every number.
        let start = range.lower.map { boundary($0.value, after: !$0.inclusive) }
            ?? boundary(.double(.nan), after: true)
        let end = range.upper.map { boundary($0.value, after: $0.inclusive) } ?? self.end
        return [(start, max(start, end))]
    }

    /// Calls `body` with each entry from `start` up to `end`.
    private func forEachEntry(from start: Position, to end: Position, _ body: (Entry) -> Void) {
        var chunk = start.chunk, offset = start.offset
        while chunk < end.chunk || (chunk == end.chunk && offset < end.offset) {
            let entries = chunks[chunk]
            let stop = chunk == end.chunk ? end.offset : entries.count
            for position in offset..<stop { body(entries[position]) }
            chunk += 1
            offset = 0
        }
    }

    /// The keys whose current value lies in `range`, in no set order.
    func keys(in range: Range) -> [UInt64] {
        var keys: [UInt64] = []
        var seen = Set<UInt64>()
        for (start, end) in span(range) {
            forEachEntry(from: start, to: end) { entry in if isCurrent(entry) { keys.append(entry.key) } }
        }
        for entry in tail where isCurrent(entry) && range.contains(entry.value) { keys.append(entry.key) }
        for (start, end) in base.span(range) {
            base.forEachGroup(from: start, to: end) { group in
                for key in group where states[key] == 0 { keys.append(key) }
            }
        }
        // `IN` with a repeated value finds a key twice.
        if range.values.map({ $0.count > 1 }) ?? false { keys = keys.filter { seen.insert($0).inserted } }
        return keys
    }

    /// How many records hold a value in `range`.
    func count(in range: Range) -> Int {
        // Several values may be one value of different kinds (5 and 5.0).
        if let values = range.values, values.count > 1 { return keys(in: range).count }
        var count = 0
        for (start, end) in span(range) {
            forEachEntry(from: start, to: end) { entry in if isCurrent(entry) { count += 1 } }
        }
        for (start, end) in base.span(range) {
            base.forEachGroup(from: start, to: end) { group in count += group.count { states[$0] == 0 } }
        }
        return count + tail.count { isCurrent($0) && range.contains($0.value) }
    }

    /// About how many records `range` holds, without reading them.
    func estimate(_ range: Range) -> Int {
        var count = 0
        for (start, end) in span(range) where start < end {
            if start.chunk == end.chunk {
                count += end.offset - start.offset
                continue
            }
            count += chunks[start.chunk].count - start.offset + end.offset
            for chunk in (start.chunk + 1)..<end.chunk { count += chunks[chunk].count }
        }
        for (start, end) in base.span(range) { count += base.estimate(from: start, to: end) }
        return count + tail.count { range.contains($0.value) }
    }

    /// Calls `body` with the keys of each value in value order (nil first
    /// when ascending, last when descending), the keys of one value in
    /// increasing order, until it returns false.
    func forEachGroup(ascending: Bool, _ body: (StoredValue, [UInt64]) -> Bool) {
        // A read in order usually stops after a few groups (a sorted list
        // with a limit, after every save), so the tail is made a heap, in
        // linear time, and taken from as far as the read goes, instead of
        // being sorted whole.
        var recent = EntryHeap(tail.filter(isCurrent), ascending: ascending)
        // Two cursors, over the runs' entries and the recent ones, moving
        // in the direction asked for.
        var main = ascending ? Position(chunk: 0, offset: 0)
                             : Position(chunk: chunks.count - 1, offset: (chunks.last?.count ?? 0) - 1)
        let step = ascending ? 1 : -1
        func entry(_ position: Position) -> Entry? {
            chunks.indices.contains(position.chunk) ? chunks[position.chunk][position.offset] : nil
        }
        func advance(_ position: inout Position) {
            position.offset += step
            if ascending, position.offset == chunks[position.chunk].count {
                position = Position(chunk: position.chunk + 1, offset: 0)
            } else if !ascending, position.offset < 0 {
                position.chunk -= 1
                position.offset = position.chunk >= 0 ? chunks[position.chunk].count - 1 : 0
            }
        }
        // And a third over the base's groups.
        var stored = Base.Walk(base.pages, ascending: ascending)
        while true {
            while let candidate = entry(main), !isCurrent(candidate) { advance(&main) }
            // The next value: the first, in the direction asked for, of the
            // three cursors' (ties go to the runs, then the recent entries).
            var chosen: (value: StoredValue, source: Int)?
            for (source, candidate) in [entry(main)?.value, recent.first?.value, stored.current?.value].enumerated() {
                guard let candidate else { continue }
                if let current = chosen {
                    let order = StoredValue.sortOrder(candidate, current.value)
                    if order != .orderedSame && (order == .orderedAscending) == ascending { chosen = (candidate, source) }
                } else {
                    chosen = (candidate, source)
                }
            }
            guard let (value, source) = chosen else { return }
            // Every cursor moves past the value. The one that gave it moves
            // on first, whatever the order says, so every step moves on.
            var keys: [UInt64] = []
            switch source {
            case 0:
                keys.append(entry(main)!.key)
                advance(&main)
            case 1:
                keys.append(recent.first!.key)
                recent.removeFirst()
            default:
                for key in stored.current!.keys where states[key] == 0 { keys.append(key) }
                stored.advance()
            }
            while let next = entry(main), StoredValue.sortOrder(next.value, value) == .orderedSame {
                if isCurrent(next) { keys.append(next.key) }
                advance(&main)
            }
            while let next = recent.first, StoredValue.sortOrder(next.value, value) == .orderedSame {
                keys.append(next.key)
                recent.removeFirst()
            }
            while let next = stored.current, StoredValue.sortOrder(next.value, value) == .orderedSame {
                for key in next.keys where states[key] == 0 { keys.append(key) }
                stored.advance()
            }
            // A value whose every entry went stale is no group.
            guard !keys.isEmpty else { continue }
            keys.sort()
            guard body(value, keys) else { return }
        }
    }
}

/// Entries taken smallest first (largest first when descending) by
/// ``SecondaryIndex``'s order of (value, key): a binary heap, built in
/// linear time, each removal logarithmic.
private struct EntryHeap {
    private var entries: [SecondaryIndex.Entry]
    private let ascending: Bool

    init(_ entries: [SecondaryIndex.Entry], ascending: Bool) {
        self.entries = entries
        self.ascending = ascending
        for index in stride(from: entries.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    var first: SecondaryIndex.Entry? { entries.first }

    mutating func removeFirst() {
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        siftDown(0)
    }

    private func before(_ a: Int, _ b: Int) -> Bool {
        ascending ? SecondaryIndex.precedes(entries[a], entries[b]) : SecondaryIndex.precedes(entries[b], entries[a])
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var chosen = parent
            let left = 2 * parent + 1, right = left + 1
            if left < entries.count && before(left, chosen) { chosen = left }
            if right < entries.count && before(right, chosen) { chosen = right }
            guard chosen != parent else { return }
            entries.swapAt(parent, chosen)
            parent = chosen
        }
    }
}
