// The records a fetch reads, one by one: tested, and kept when they match
// with the values the sort and the fetched objects read.

/// Tests each record a fetch reads and keeps the matches
/// (``FetchExecution/Match``).
///
/// The test runs on the record's encoded bytes first (``RawTest``) when the
/// predicate allows it; a record it cannot decide that way is decoded, only
/// the slots the test reads. A match is then decoded for what the sort and
/// the loaded objects read: most records of a scan fail the test, and need
/// not have their other values (strings above all) decoded.
///
/// What it keeps is a separate value, ``Collected``, that the scan changes
/// in place: as variables captured by a local function, the count and the
/// matches were checked for exclusive access at run time on every record,
/// and a collector that changed itself copied out its tests (retaining
/// them) for every record.
struct MatchCollector {
    /// Keys whose saved record is not the answer: the context deleted or
    /// changed the object, and it is tested as an object instead.
    let excluded: Set<UInt64>
    /// The test on encoded bytes (``RawTest/compile(_:)``); nil when the
    /// predicate needs decoded values.
    let rawTest: RawTest.Test?
    /// The test on decoded values; nil when every record matches.
    let test: ((RecordSubject) -> Bool)?
    /// The slots `test` reads.
    let testSlots: [Bool]
    /// The slots a match keeps: those the test, the sort and a loaded
    /// object read.
    let wanted: [Bool]
    /// A match keeps its values (for the sort, or a loaded object).
    let keepsValues: Bool
    /// A match is decoded again, for slots the test did not read.
    private let decodesMoreForMatches: Bool
    /// Matches are ``FetchExecution/Match/loaded(_:_:)``.
    let loadsRecords: Bool
    let table: EntityTable
    let snapshot: StateSnapshot
    let entity: EntityDescription

    /// What a scan kept.
    struct Collected {
        /// How many records were tested.
        var examined = 0
        var matches: [FetchExecution.Match] = []
        /// The values of the record being tested: one array for the scan.
        fileprivate var values: [StoredValue] = []
    }

    init(excluded: Set<UInt64>, rawTest: RawTest.Test?, test: ((RecordSubject) -> Bool)?, testSlots: [Bool], wanted: [Bool],
         keepsValues: Bool, loadsRecords: Bool, table: EntityTable, snapshot: StateSnapshot, entity: EntityDescription) {
        self.excluded = excluded
        self.rawTest = rawTest
        self.test = test
        self.testSlots = testSlots
        self.wanted = wanted
        decodesMoreForMatches = wanted != testSlots
        self.keepsValues = keepsValues
        self.loadsRecords = loadsRecords
        self.table = table
        self.snapshot = snapshot
        self.entity = entity
    }

    /// Tests the record with `key`, `version` (nil when the caller read
    /// none) and encoded values `bytes`, and keeps it in `collected` if it
    /// matches; returns whether it did.
    @inline(__always)
    func consider(_ key: UInt64, version: UInt64?, _ bytes: UnsafeRawBufferPointer, into collected: inout Collected) -> Bool {
        guard excluded.isEmpty || !excluded.contains(key) else { return false }
        collected.examined += 1
        let answer = rawTest?(bytes)
        if answer == false { return false }
        let decided = answer == true
        if decided && !keepsValues {
            collected.matches.append(.record(key, []))
            return true
        }
        if let test, !decided {
            EntityTable.decode(bytes, wanted: testSlots, into: &collected.values)
            let matches = collected.values.withUnsafeBufferPointer { values in
                testSlots.withUnsafeBufferPointer { decoded in
                    test(RecordSubject(snapshot: snapshot, entity: entity, key: key, values: values, decoded: decoded))
                }
            }
            guard matches else { return false }
            if decodesMoreForMatches { EntityTable.decode(bytes, wanted: wanted, into: &collected.values) }
        } else {
            EntityTable.decode(bytes, wanted: wanted, into: &collected.values)
        }
        if loadsRecords, let version = version ?? table.version(key) {
            collected.matches.append(.loaded(key, Record(values: collected.values, version: version)))
        } else {
            collected.matches.append(.record(key, keepsValues ? collected.values : []))
        }
        return true
    }

    /// Keeps `key` in `collected` without testing it: a lookup that answers
    /// the whole predicate, with nothing to decode.
    func keep(_ key: UInt64, into collected: inout Collected) {
        guard excluded.isEmpty || !excluded.contains(key) else { return }
        collected.matches.append(.record(key, []))
    }
}
