// Interned entity and attribute names: numbers in records, strings once per file.

/// An entity or attribute name, interned to a small number.
///
/// Records in the journal carry symbols, not strings: a name is written
/// once, in the first transaction that needs it (FORMAT.md §5.1), and every
/// later mention is a varint of one or two bytes.
public struct Symbol: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The symbol's number, dense from 0 in the order names were first written.
    public let rawValue: UInt32

    /// Creates a symbol from its number.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static func < (lhs: Symbol, rhs: Symbol) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }
}

/// The names behind symbols, in symbol order, with a reverse index.
///
/// `persistedCount` splits the table: symbols below it are declared in a
/// frame already written; the rest are declared by the next frame written.
struct SymbolTable: Sendable {
    private(set) var names: [String] = []
    private var index: [String: Symbol] = [:]
    /// How many names a written frame has declared.
    private(set) var persistedCount = 0

    var count: Int { names.count }

    func symbol(for name: String) -> Symbol? { index[name] }

    func name(of symbol: Symbol) -> String? {
        let position = Int(symbol.rawValue)
        return position < names.count ? names[position] : nil
    }

    /// The symbol of `name`, assigning the next number if it is new.
    mutating func intern(_ name: String) -> Symbol {
        if let symbol = index[name] { return symbol }
        let symbol = Symbol(rawValue: UInt32(names.count))
        names.append(name)
        index[name] = symbol
        return symbol
    }

    /// The names a frame must declare before it can use every symbol interned so far.
    var undeclared: ArraySlice<String> { names[persistedCount...] }

    /// Records that a written frame declared every name interned so far.
    mutating func markAllPersisted() { persistedCount = names.count }

    /// Adds a name declared by a frame being read. Declarations must come in
    /// symbol order with no gaps and no repeats, so the table a reader builds
    /// is the one the writer had.
    mutating func declare(_ symbol: UInt64, _ name: String) throws(DecodeFailure) {
        guard symbol == UInt64(names.count) else {
            throw DecodeFailure("declares name #\(symbol) where #\(names.count) is next")
        }
        guard !name.isEmpty, index[name] == nil else {
            throw DecodeFailure("declares name #\(symbol) as an empty or repeated name")
        }
        index[name] = Symbol(rawValue: UInt32(names.count))
        names.append(name)
        persistedCount = names.count
    }
}
