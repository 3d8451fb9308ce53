// Fetched properties: a named fetch relative to the object that owns it.

/// A property whose value is a fetch: the objects of `destination` that
/// match `predicate`, where `$FETCH_SOURCE` is the object that owns the
/// property (Core Data's `NSFetchedPropertyDescription`).
///
/// ```swift
/// FetchedProperty("olderHeroes", of: "Hero", where: "birthdate < $FETCH_SOURCE.birthdate",
///                 sortedBy: [SortKey("birthdate")])
/// ```
///
/// Reading it (`hero["olderHeroes"]`, or a `@Managed` property of type
/// `[Hero]`) runs the fetch in the object's context each time, so the
/// result includes the context's unsaved changes and is never stale.
public struct FetchedProperty: Sendable {
    /// The key it is read by.
    public var name: String
    /// The entity fetched.
    public var destination: String
    /// Which objects, with `$FETCH_SOURCE` for the owner.
    public var predicate: ObjectPredicate
    /// The order of the result.
    public var sortDescriptors: [SortKey]

    /// A fetched property with a predicate already made.
    public init(_ name: String, of destination: String, where predicate: ObjectPredicate, sortedBy sortDescriptors: [SortKey] = []) {
        self.name = name
        self.destination = destination
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// A fetched property with a predicate format string; a format that
    /// does not parse is reported when the model is built.
    public init(_ name: String, of destination: String, where format: String, sortedBy sortDescriptors: [SortKey] = []) {
        self.name = name
        self.destination = destination
        do throws(LogStoreError) {
            predicate = try ObjectPredicate(format)
        } catch {
            predicate = .constant(false)
            parseError = error
        }
        self.sortDescriptors = sortDescriptors
    }

    /// Why the format string did not parse, for the model check.
    var parseError: LogStoreError?
}
