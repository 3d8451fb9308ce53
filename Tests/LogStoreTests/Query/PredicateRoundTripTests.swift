// A predicate's description parses back to an equal predicate: a table of
// format strings covering every literal kind and construct, and a property
// test over random predicate trees of the shapes the parser produces
// (seeded, so that a failure names the seed that reproduces it).

import Foundation
import Testing
@testable import LogStore

/// LogStore's, not Foundation's.
typealias PredicateExpression = LogStore.PredicateExpression


/// Random predicate trees of the shapes the parser produces: ANDs and ORs
/// of two or more parts, none directly inside one of its own kind; arrays
/// as lists of constants; no custom values (they have no syntax).
struct PredicateTreeGenerator {
    var random: JournalFixtures.SeededGenerator

    init(seed: UInt64) { random = JournalFixtures.SeededGenerator(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }

    /// Keys, including keywords (printed escaped), a key starting with a
    /// digit, and letters beyond ASCII.
    static let keys = ["age", "name", "pets", "IN", "and", "SELF", "nil", "Yes", "subquery", "CAST", "between", "any", "1st", "_x", "caf\u{E9}", "\u{39B}\u{3AC}\u{3BC}\u{3B4}\u{3B1}", "truepredicate"]

    /// Pieces of strings: quotes, backslashes, control characters, text
    /// beyond ASCII, a combining mark (that would join a quote before it),
    /// a prepended mark (that would join the quote after it), and the
    /// format's own syntax.
    static let stringPieces = ["a", "Z", " ", "'", "\"", "\\", "\n", "\r", "\t", "\r\n", "\0", "\u{7F}", "\u{1}", "\u{E9}", "e\u{301}", "\u{301}", "\u{600}", "\u{1F600}", "\u{1F468}\u{200D}\u{1F469}", "\u{200D}", "%@", "$x", "{", "\\u0041", "*?", "\u{FEFF}"]

    mutating func string() -> String {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in pick(Self.stringPieces) }.joined()
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return pick([0.0, -0.0, 0.5, -1.5, 1e300, -1e-300, 5e-324, .greatestFiniteMagnitude, .infinity, -.infinity, .nan, 1e20, 123456789.125])
        case 1: return Double(bitPattern: random.next())
        default: return Double.random(in: -1e6...1e6, using: &random)
        }
    }

    mutating func value() -> PredicateValue {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .integer(pick([0, -1, 7, .min, .max, Int64.random(in: .min ... .max, using: &random)]))
        case 3: return .double(double())
        case 4: return .date(Date(timeIntervalSinceReferenceDate: pick([0, -1e9, 1.5, Double.random(in: -1e10...1e10, using: &random)])))
        case 5: return .data(Data((0..<Int.random(in: 0...5, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case 6: return .uuid(UUID())
        case 7: return .object(ObjectID(storeID: UUID(), entityName: pick(["Person", "Pet_2", "Caf\u{E9}"]), key: pick([0, 1, UInt64.max, UInt64.random(in: 0 ... .max, using: &random)])))
        default: return .string(string())
        }
    }

    mutating func keyPath() -> [KeyPathComponent] {
        var components: [KeyPathComponent] = [pick([.key(pick(Self.keys)), .key(pick(Self.keys)), .count])]
        while chance(40) {
            components.append(pick([.key(pick(Self.keys)), .key(pick(Self.keys)), .count, .sum, .average, .minimum, .maximum]))
        }
        return components
    }

    mutating func variable() -> PredicateExpression {
        .variable(pick(["VAR", "x", "FETCH_SOURCE", "in", "p"]), chance(50) ? [] : keyPath())
    }

    /// A side of a comparison that may be a string: a key path, a string,
    /// a variable, nil.
    mutating func stringSide() -> PredicateExpression {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return .keyPath(keyPath())
        case 1: return variable()
        case 2: return chance(10) ? .constant(.null) : .constant(.string(string()))
        default: return .keyPath(keyPath())
        }
    }

    /// Any side of a comparison.
    mutating func expression(depth: Int) -> PredicateExpression {
        switch Int.random(in: 0..<13, using: &random) {
        case 0, 1: return .keyPath(keyPath())
        case 2: return variable()
        case 3: return .evaluatedObject
        case 4 where depth > 0: return .list((0..<Int.random(in: 0...3, using: &random)).map { _ in expression(depth: depth - 1) })
        case 5...6 where depth > 0: return arithmetic(depth: depth - 1)
        case 7 where depth > 0: return subquery(depth: depth - 1)
        default: return .constant(value())
        }
    }

    /// Arithmetic over numbers, key paths, variables and more arithmetic,
    /// with every operator and negation.
    mutating func arithmetic(depth: Int) -> PredicateExpression {
        func operand(_ generator: inout PredicateTreeGenerator) -> PredicateExpression {
            switch Int.random(in: 0..<6, using: &generator.random) {
            case 0 where depth > 0: return generator.arithmetic(depth: depth - 1)
            case 1: return .constant(generator.pick([.integer(Int64.random(in: -100...100, using: &generator.random)), .double(generator.double()), .integer(.min)]))
            case 2: return generator.variable()
            case 3: return .constant(.date(Date(timeIntervalSinceReferenceDate: 1e6)))
            default: return .keyPath(generator.keyPath())
            }
        }
        if chance(30) { return .negated(operand(&self)) }
        return .arithmetic(pick(ArithmeticOperator.allCases), operand(&self), operand(&self))
    }

    /// A subquery over a key path or an outer variable's key path, with
    /// any key path after it.
    mutating func subquery(depth: Int) -> PredicateExpression {
        let collection: PredicateExpression = chance(70) ? .keyPath(keyPath()) : .variable(pick(["p", "x"]), keyPath())
        let inner = PredicateSubquery(collection, variable: pick(["p", "t", "x", "in"]), where: predicate(depth: depth))
        return .subquery(inner, pick([[], [.count], [.count], [.sum, .key("weight")], keyPath()]))
    }

    /// A side that names a collection, for ANY, ALL and NONE.
    mutating func collectionSide(depth: Int) -> PredicateExpression {
        switch Int.random(in: 0..<10, using: &random) {
        case 0 where depth > 0: return subquery(depth: depth - 1)
        case 1, 2: return variable()
        default: return .keyPath(keyPath())
        }
    }

    mutating func options() -> ComparisonOptions {
        pick([[], [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]])
    }

    mutating func comparison(depth: Int) -> PredicateComparison {
        let modifier: ComparisonModifier = chance(75) ? .direct : pick([.any, .all, .none])
        func left(_ generator: inout PredicateTreeGenerator, strings: Bool) -> PredicateExpression {
            if modifier != .direct { return generator.collectionSide(depth: depth) }
            return strings ? generator.stringSide() : generator.expression(depth: depth)
        }
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            // Ordering with string options: only strings and key paths.
            let op: ComparisonOperator = pick([.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
            return PredicateComparison(left(&self, strings: true), op, stringSide(), options: options(), modifier: modifier)
        case 1:
            let op: ComparisonOperator = pick([.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
            return PredicateComparison(left(&self, strings: false), op, expression(depth: depth), modifier: modifier)
        case 2:
            let op: ComparisonOperator = pick([.beginsWith, .endsWith, .like, .matches, .contains])
            return PredicateComparison(left(&self, strings: true), op, stringSide(), options: options(), modifier: modifier)
        case 3:
            let right: PredicateExpression = pick([.list((0..<Int.random(in: 0...3, using: &random)).map { _ in .constant(value()) }), .keyPath(keyPath()), variable(), .constant(.string(string()))])
            if case .constant = right { return PredicateComparison(left(&self, strings: true), .in, right, options: options(), modifier: modifier) }
            return PredicateComparison(left(&self, strings: false), .in, right, modifier: modifier)
        default:
            let right: PredicateExpression = chance(80) ? .list([expression(depth: 0), expression(depth: 0)]) : .variable(pick(["RANGE", "x"]), [])
            return PredicateComparison(left(&self, strings: false), .between, right, modifier: modifier)
        }
    }

    mutating func predicate(depth: Int) -> ObjectPredicate {
        guard depth > 0 else { return chance(90) ? .comparison(comparison(depth: 0)) : .constant(chance(50)) }
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .not(predicate(depth: depth - 1))
        case 1, 2:
            let isAnd = chance(50)
            let parts = (0..<Int.random(in: 2...3, using: &random)).map { _ in
                var part = predicate(depth: depth - 1)
                // A part of the same kind would be flattened into this one.
                while (isAnd && part.isAnd) || (!isAnd && part.isOr) { part = predicate(depth: depth - 1) }
                return part
            }
            return isAnd ? .and(parts) : .or(parts)
        default: return .comparison(comparison(depth: depth - 1))
        }
    }
}

extension ObjectPredicate {
    fileprivate var isAnd: Bool { if case .and = self { return true } else { return false } }
    fileprivate var isOr: Bool { if case .or = self { return true } else { return false } }
}

@Suite("Predicate round trip")
struct PredicateRoundTripTests {
    /// Format strings (with arguments) whose predicates must print as text
    /// that parses back to them.
    nonisolated(unsafe) static let formats: [(String, [Any?])] = [
        ("age == -3", []), ("age == -9223372036854775808", []), ("age == 9223372036854775807", []),
        ("age == %@", [Int64.min]), ("score == 1.5e-7", []), ("score == 1e300", []), ("score == -2.5E+10", []),
        ("score == %@", [Double.infinity]), ("score == %@", [-Double.infinity]), ("score == %@", [Double.nan]),
        ("score == %@", [-0.0]), ("score == %@", [5e-324]), ("score == 0x10", []),
        ("name == %@", ["it's \"quoted\" \\ back\nslash\ttab\r\0 caf\u{E9} \u{1F600}"]),
        ("name == %@", ["\u{301}leading combining mark"]), ("name == %@", ["prepended mark\u{600}"]), ("name == %@", ["\u{7}\u{7F}"]),
        ("#IN == 1 AND #SELF == 2 AND #nil == 3 AND #subquery == 4 AND home.#AND == 5", []),
        ("ANY pets.name == 'x' OR ALL pets.weight > 1 OR NONE pets.name BEGINSWITH[cd] 'y'", []),
        ("name ==[c] 'a' AND name LIKE[d] '*b?' AND name MATCHES[cd] '.*' AND name CONTAINS 'c' AND name ENDSWITH 'd'", []),
        ("age BETWEEN {1, 2} AND age IN {1, 2, 3} AND name IN {} AND age BETWEEN $RANGE", []),
        ("NOT (a == 1 AND (b == 2 OR c == 3)) OR NOT NOT d == 4", []),
        ("(a == 1 OR b == 2) AND (c == 3 OR NOT (d == 4 AND e == 5))", []),
        ("age > $LOW AND home.city == $FETCH_SOURCE.home.city AND SELF != $ME AND SELF.name == 'x' AND SELF IN %@", [[1, 2]]),
        ("TRUEPREDICATE OR FALSEPREDICATE", []),
        ("birth == %@", [Date(timeIntervalSinceReferenceDate: -123456789.125)]),
        ("id == %@", [UUID()]), ("photo == %@", [Data([0, 1, 0xAB, 0xFF])]), ("photo == %@", [Data()]),
        ("SELF == %@", [ObjectID(storeID: UUID(), entityName: "Person", key: 42)]),
        ("SUBQUERY(pets, $p, $p.weight > 1 AND name == 'x').@count > 2", []),
        ("SUBQUERY(projects, $p, SUBQUERY($p.tasks, $t, $t.owner == $p.lead).@count > 0).@count > 0", []),
        ("SUBQUERY(pets, $p, TRUEPREDICATE).@sum.weight > 2 AND ANY SUBQUERY(pets, $p, TRUEPREDICATE).name == 'x'", []),
        ("(age + 1) * 2 > 10 AND age - (1 - 1) == 3 AND age - 1 - 1 == 3 AND -age < -5 AND -(age) < 2 AND -(-5) == a", []),
        ("a / (b * c) == a / b / c AND a * (b + c) == a * b + a * c AND a - -5 == 2 AND -(a + b) == $X.y - 3", []),
        ("birth < $FETCH_SOURCE.birth - 315576000 AND {1 + 2, -(3)} CONTAINS age", []),
    ]

    @Test("Every literal kind and construct prints as a string that parses back to an equal predicate")
    func formatsRoundTrip() throws {
        for (format, arguments) in Self.formats {
            let predicate: ObjectPredicate
            do { predicate = try ObjectPredicate(format: format, argumentArray: arguments) } catch {
                Issue.record("\(format) does not parse: \(error)")
                continue
            }
            do {
                let again = try ObjectPredicate(predicate.description)
                #expect(again == predicate, "\(format) prints as \(predicate.description), which parses to \(again)")
            } catch {
                Issue.record("\(format) prints as \(predicate.description), which does not parse: \(error)")
            }
        }
    }

    @Test("A NaN constant equals itself, so that a predicate holding one equals itself")
    func nanEquality() throws {
        let predicate = try ObjectPredicate("score == %@", Double.nan)
        #expect(predicate == predicate)
        #expect(Set([predicate, try ObjectPredicate("score == %@", Double.nan)]).count == 1)
        #expect(PredicateValue.double(.nan) != .double(1))
    }

    @Test("Random predicate trees print as strings that parse back to them", arguments: 0..<8)
    func randomTreesRoundTrip(batch: UInt64) throws {
        var forms: [String: Int] = [:]
        defer {
            // The batch covered the constructs it is meant to (a generator
            // that stopped making them would pass vacuously).
            for form in ["SUBQUERY(", "CAST(", " * ", " / ", " - ", "#", "ANY ", "BETWEEN", " IN ", "[cd]", "NOT ", " OR ", "\\n"] {
                #expect(forms[form, default: 0] > 0, "batch \(batch) printed no \(form)")
            }
        }
        for index in 0..<250 {
            let seed = batch * 1_000 + UInt64(index)
            var generator = PredicateTreeGenerator(seed: seed)
            let predicate = generator.predicate(depth: 3)
            let printed = predicate.description
            for form in ["SUBQUERY(", "CAST(", " * ", " / ", " - ", "#", "ANY ", "BETWEEN", " IN ", "[cd]", "NOT ", " OR ", "\\n"] where printed.contains(form) {
                forms[form, default: 0] += 1
            }
            do {
                let again = try ObjectPredicate(printed)
                guard again == predicate else {
                    Issue.record("seed \(seed): \(printed) parses to \(again.description), a different tree")
                    return
                }
            } catch {
                Issue.record("seed \(seed): \(printed) does not parse: \(error)")
                return
            }
        }
    }
}
