// The one error type LogStore throws: what happened, where, and what to do.

/// One object of a merge conflict (``LogStoreError/conflict``): the
/// version of its record the saving context loaded and the version the
/// store has now (nil when another save deleted it), and the keys each
/// side changed since the loaded version.
public struct MergeConflict: Sendable, Hashable {
    public var objectID: ObjectID
    /// The record's version when this context loaded it (nil if it never did).
    public var loadedVersion: UInt64?
    /// The record's version in the store now; nil when it was deleted.
    public var storedVersion: UInt64?
    /// The keys this context changed.
    public var changedHere: [String]
    /// The keys whose stored values differ from what this context loaded.
    public var changedInStore: [String]
}

/// An error from LogStore, with the context needed to act on it.
///
/// Every message says what happened, where (path, offset, frame, entity,
/// attribute) and what to do next. Messages never include attribute values,
/// which may be private.
///
/// Match on ``kind`` to react to a class of error:
///
/// ```swift
/// do {
///     let journal = try Journal(path: path)
/// } catch let error where error.kind == .storeLocked {
///     print(error.message)   // "… is locked by process 4242 …"
/// }
/// ```
///
/// ``Kind`` is an open set: new kinds can appear in later versions, so a
/// `switch` over kinds needs a `default` case.
public struct LogStoreError: Error, Sendable, CustomStringConvertible {
    /// A class of error. Compare with `==` against the static members.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// A stable, lower-camel-case name for the kind, used in `--json` output.
        public let name: String

        init(_ name: String) { self.name = name }

        public var description: String { name }

        /// A system call failed (open, read, write, fsync, rename, truncate).
        public static let io = Kind("io")
        /// The file does not start with a LogStore header: it is empty or of another kind.
        public static let notAStore = Kind("notAStore")
        /// The file header fails its checksum or holds impossible values.
        public static let corruptHeader = Kind("corruptHeader")
        /// The file was written by a newer LogStore whose format this version cannot read.
        public static let unsupportedFormatVersion = Kind("unsupportedFormatVersion")
        /// A frame is damaged and valid frames follow it, or it declares impossible sizes.
        public static let corruptFrame = Kind("corruptFrame")
        /// A snapshot's index or one of its blocks is damaged (FORMAT.md §11).
        public static let corruptSnapshot = Kind("corruptSnapshot")
        /// Another writer holds the store's lock.
        public static let storeLocked = Kind("storeLocked")
        /// The file is one that a compaction or a salvage of its store
        /// replaced (FORMAT.md §2): the store went on in the file renamed
        /// over its old name, so this one may only be read. Open the store
        /// by its name, or make a store of this file with
        /// ``StoreInspector/recover(path:to:)``. Also thrown by a save or a
        /// compaction of an open store whose path no longer names its file
        /// (removed, renamed or replaced by another process): nothing more
        /// is written, since no one opening the path would read it. Saves
        /// are checked before each fsync; without fsync (`.deferredToOS`),
        /// those of the first millisecond after the change may still be
        /// acknowledged (FORMAT.md §7).
        public static let storeReplaced = Kind("storeReplaced")
        /// An earlier fsync, or a write for another reason than a full disk,
        /// failed; the store refuses writes until reopened.
        public static let writeFailed = Kind("writeFailed")
        /// A write was attempted on a store opened read-only.
        public static let readOnly = Kind("readOnly")
        /// The disk holding the store (or the user's quota on it) has too
        /// little free space: a save that found it full was not written and
        /// later saves succeed once space is free; a compaction that would
        /// not fit did not start. Nothing saved before is lost.
        public static let diskFull = Kind("diskFull")
        /// The store was closed.
        public static let closed = Kind("closed")
        /// A save's encoded size exceeds the frame limit (256 MiB): nothing
        /// was written, and the context keeps its changes. Save in parts, or
        /// use the batch requests, which commit in transactions below it.
        public static let transactionTooLarge = Kind("transactionTooLarge")
        /// A value or argument is not acceptable to the API it was passed to.
        public static let invalidArgument = Kind("invalidArgument")
        /// A model has mistakes (every one is in ``LogStoreError/details``).
        public static let invalidModel = Kind("invalidModel")
        /// The model differs from the store's in a way lightweight migration cannot bridge.
        public static let modelMismatch = Kind("modelMismatch")
        /// A save found objects that break the model's rules (every one is in ``LogStoreError/details``).
        public static let validationFailed = Kind("validationFailed")
        /// A value of the wrong type for an attribute or relationship.
        public static let wrongType = Kind("wrongType")
        /// A key that the object's entity does not have.
        public static let unknownKey = Kind("unknownKey")
        /// An entity name that the model does not have.
        public static let unknownEntity = Kind("unknownEntity")
        /// An object ID that names no live object (deleted, or never saved).
        public static let objectNotFound = Kind("objectNotFound")
        /// An object used with a context it does not belong to.
        public static let wrongContext = Kind("wrongContext")
        /// A save conflicts with one committed since the objects were loaded.
        public static let mergeConflict = Kind("mergeConflict")
        /// A value transformer failed, or none is registered under the model's name.
        public static let transformerFailed = Kind("transformerFailed")
        /// A predicate format string that does not parse, or a predicate
        /// that does not fit the entity it is used with.
        public static let invalidPredicate = Kind("invalidPredicate")
    }

    /// The class of error.
    public var kind: Kind
    /// What happened, where and what to do, in one or two sentences.
    public var message: String
    /// The file concerned, when there is one.
    public var path: String?
    /// The byte offset in ``path`` where the problem was found.
    public var offset: UInt64?
    /// The ordinal of the frame concerned (1 for the first frame of the file).
    public var frameNumber: Int?
    /// The entity concerned, for model and validation errors.
    public var entity: String?
    /// The attribute concerned, for model and validation errors.
    public var attribute: String?
    /// The `errno` of a failed system call.
    public var errno: Int32?
    /// The column (1 for the first character, the length + 1 for the end;
    /// Unicode scalars are counted) of a predicate format string where
    /// parsing failed, or where a key path that binding found wrong starts.
    public var column: Int?
    /// Further errors reported together with this one (for example every
    /// validation failure of a save, not just the first).
    public var details: [LogStoreError]
    /// The object concerned, for a validation failure or a merge conflict.
    public var objectID: ObjectID?
    /// The rule a validation failure broke.
    public var violation: Violation?
    /// The value that broke the rule, as the app's type (nil for no
    /// value). A field only: messages never include values, which may be
    /// private.
    public var offendingValue: (any Sendable)?
    /// For one object of a merge conflict: what each side changed.
    public var conflict: MergeConflict?

    /// The kind of rule a validation failure broke.
    public enum Violation: String, Sendable, Hashable, CaseIterable {
        /// A required attribute has no value, or a required to-one relationship is empty.
        case required
        /// A number below its minimum, or a date before its earliest.
        case tooSmall
        /// A number above its maximum, or a date after its latest.
        case tooLarge
        /// A string shorter than its minimum length.
        case tooShort
        /// A string longer than its maximum length.
        case tooLong
        /// A string that does not match its pattern.
        case pattern
        /// A value not among the allowed strings or integers.
        case notAllowed
        /// A to-many relationship with fewer objects than its minimum.
        case countTooSmall
        /// A to-many relationship with more objects than its maximum.
        case countTooLarge
        /// A delete that a `deny` rule refuses while referrers remain.
        case deleteDenied
        /// A validation hook (`validateForInsert` and the others) threw, or the hooks never settled.
        case hook
    }

    /// Creates an error. Library code uses the factory methods instead.
    public init(
        _ kind: Kind, _ message: String, path: String? = nil, offset: UInt64? = nil,
        frameNumber: Int? = nil, entity: String? = nil, attribute: String? = nil,
        errno: Int32? = nil, column: Int? = nil, details: [LogStoreError] = []
    ) {
        self.kind = kind
        self.message = message
        self.path = path
        self.offset = offset
        self.frameNumber = frameNumber
        self.entity = entity
        self.attribute = attribute
        self.errno = errno
        self.column = column
        self.details = details
    }

    /// The kind and message, then each detail the message does not
    /// already list: every problem once.
    public var description: String {
        var text = "\(kind): \(message)"
        for detail in details where !message.contains(detail.message) { text += "\n  - \(detail.message)" }
        return text
    }
}

extension LogStoreError {
    /// The `.validationFailed` error of a save refused for `problems`,
    /// each one a detail.
    static func saveRefused(_ problems: [LogStoreError]) -> LogStoreError {
        let list = problems.map { "- \($0.message)" }.joined(separator: "\n")
        return LogStoreError(.validationFailed, "the save was refused, nothing was written; \(problems.count) problem\(problems.count == 1 ? "" : "s"):\n\(list)", entity: problems.first?.entity, attribute: problems.first?.attribute, details: problems)
    }

    /// The problem of a delete that a `deny` rule refuses: `relationship`
    /// of the object `id` still holds `referrers`.
    static func deleteDenied(_ id: ObjectID, relationship: String, referrers: [ObjectID]) -> LogStoreError {
        let count = referrers.count
        var error = LogStoreError(.validationFailed, "\(id.entityName) \(id) cannot be deleted while its \(relationship) holds \(count) object\(count == 1 ? "" : "s") (delete rule deny)", entity: id.entityName, attribute: relationship)
        error.objectID = id
        error.violation = .deleteDenied
        error.offendingValue = referrers
        return error
    }
}
