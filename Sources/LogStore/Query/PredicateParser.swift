// Core Data's predicate format syntax, parsed by recursive descent.
//
//   predicate   = or
//   or          = and { ("OR" | "||") and }
//   and         = not { ("AND" | "&&") not }
//   not         = ("NOT" | "!") not | primary
//   primary     = "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
//   comparison  = [ "ANY" | "SOME" | "ALL" | "NONE" ] expression operator [ "[" options "]" ] expression
//   operator    = "==" | "=" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>"
//               | "BETWEEN" | "IN" | "BEGINSWITH" | "ENDSWITH" | "CONTAINS" | "LIKE" | "MATCHES"
//   expression  = ["-"] number | string | "%@" | "%d" | "%i" | "%f" | "%K" [ "." keyPath ]
//               | "$" name [ "." keyPath ] | "SELF" [ "." keyPath ] | "nil" | "NULL"
//               | "YES" | "NO" | "TRUE" | "FALSE" | "{" [ expression { "," expression } ] "}" | keyPath
//   keyPath     = component { "." component }     component = key | "#" key | "%K" | "@count" | "@sum" | …
//
// Keywords are case-insensitive, as in Core Data.

import Foundation

/// Parses one format string with its arguments into an ``ObjectPredicate``.
struct PredicateParser {
    private let tokens: [PredicateToken]
    private var index = 0
    private let arguments: [Any?]
    private var nextArgument = 0
    /// How deep the parentheses, NOTs and lists around the current token go.
    private var depth = 0

    /// The deepest nesting a format string may have. Each level is a
    /// recursive call, so without a bound a hostile string of a few hundred
    /// '{' or '(' overflows the stack (found by fuzzing); no real predicate
    /// comes near it.
    static let maximumDepth = 100

    init(_ format: String, arguments: [Any?]) throws(LogStoreError) {
        var lexer = PredicateLexer(format)
        tokens = try lexer.tokens()
        self.arguments = arguments
    }

    static func error(_ message: String, column: Int) -> LogStoreError {
        LogStoreError(.invalidPredicate, "\(message) at column \(column)", column: column)
    }

    /// Runs `body` one level deeper, or fails at the token that goes too deep.
    private mutating func nested<T>(_ body: (inout PredicateParser) throws(LogStoreError) -> T) throws(LogStoreError) -> T {
        guard depth < Self.maximumDepth else {
            throw Self.error("the predicate nests parentheses, NOTs and lists more than \(Self.maximumDepth) deep", column: current.column)
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    mutating func parse() throws(LogStoreError) -> ObjectPredicate {
        let predicate = try parseOr()
        guard current.kind == .end else {
            throw Self.error("expected AND, OR or the end of the predicate, not '\(current.text)',", column: current.column)
        }
        if nextArgument < arguments.count {
            throw Self.error("\(arguments.count) arguments were given but the format uses \(nextArgument)", column: current.column)
        }
        return predicate
    }

    // MARK: - Tokens

    private var current: PredicateToken { tokens[index] }
    private var previous: PredicateToken { tokens[max(index - 1, 0)] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    /// Whether the current token is the keyword `word` (any case).
    private func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name) = current.kind { return name.uppercased() == word }
        return false
    }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    private mutating func take(keyword word: String) -> Bool {
        guard isKeyword(word) else { return false }
        advance()
        return true
    }

    private mutating func take(symbol: String) -> Bool {
        guard isSymbol(symbol) else { return false }
        advance()
        return true
    }

    private mutating func expect(symbol: String, _ what: String) throws(LogStoreError) {
        guard take(symbol: symbol) else {
            throw Self.error("expected \(what), not '\(current.text)',", column: current.column)
        }
    }

    // MARK: - Predicates

    private mutating func parseOr() throws(LogStoreError) -> ObjectPredicate {
        var parts = [try parseAnd()]
        while take(keyword: "OR") || take(symbol: "||") { parts.append(try parseAnd()) }
        return parts.count == 1 ? parts[0] : .or(parts.flatMap(\.disjuncts))
    }

    private mutating func parseAnd() throws(LogStoreError) -> ObjectPredicate {
        var parts = [try parseNot()]
        while take(keyword: "AND") || take(symbol: "&&") { parts.append(try parseNot()) }
        return parts.count == 1 ? parts[0] : .and(parts.flatMap(\.conjuncts))
    }

    private mutating func parseNot() throws(LogStoreError) -> ObjectPredicate {
        if isKeyword("NOT") || isSymbol("!") {
            return .not(try nested { (parser) throws(LogStoreError) in
                parser.advance()
                return try parser.parseNot()
            })
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(LogStoreError) -> ObjectPredicate {
        if isSymbol("(") {
            let open = current
            let inner = try nested { (parser) throws(LogStoreError) in
                parser.advance()
                return try parser.parseOr()
            }
            guard take(symbol: ")") else {
                throw Self.error("expected ')' to close the '(' at column \(open.column), not '\(current.text)',", column: current.column)
            }
            return inner
        }
        if take(keyword: "TRUEPREDICATE") { return .constant(true) }
        if take(keyword: "FALSEPREDICATE") { return .constant(false) }
        return .comparison(try parseComparison())
    }

    private mutating func parseComparison() throws(LogStoreError) -> PredicateComparison {
        var modifier = ComparisonModifier.direct
        if take(keyword: "ANY") || take(keyword: "SOME") {
            modifier = .any
        } else if take(keyword: "ALL") {
            modifier = .all
        } else if take(keyword: "NONE") {
            modifier = .none
        }
        if current.kind == .end {
            if index == 0 { throw Self.error("the predicate is empty: expected a comparison", column: current.column) }
            throw Self.error("expected a comparison after '\(previous.text)'", column: current.column)
        }
        let left = try parseExpression(after: nil)
        let operatorToken = current
        guard let op = parseOperator() else {
            throw Self.error("expected an operator such as ==, <, IN or BEGINSWITH after '\(previous.text)', not '\(current.text)',", column: current.column)
        }
        var options: ComparisonOptions = []
        if isSymbol("[") {
            options = try parseOptions()
        }
        let rightToken = current
        let right = try parseExpression(after: operatorToken.text + options.description)
        if op == .between {
            guard case .list(let bounds) = right, bounds.count == 2 else {
                if case .constant(.list(let values)) = right, values.count == 2 {
                    return PredicateComparison(left, op, right, options: options, modifier: modifier)
                }
                // A variable substituted later (`BETWEEN $RANGE`).
                if case .variable(_, let path) = right, path.isEmpty {
                    return PredicateComparison(left, op, right, options: options, modifier: modifier)
                }
                throw Self.error("expected {lower, upper} after BETWEEN", column: rightToken.column)
            }
        }
        return PredicateComparison(left, op, right, options: options, modifier: modifier)
    }

    private mutating func parseOperator() -> ComparisonOperator? {
        let symbols: [String: ComparisonOperator] = [
            "==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual, "<": .less, "<=": .lessOrEqual,
            "=<": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual, "=>": .greaterOrEqual,
        ]
        if case .symbol(let symbol) = current.kind, let op = symbols[symbol] {
            advance()
            return op
        }
        let words: [String: ComparisonOperator] = [
            "BETWEEN": .between, "IN": .in, "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith,
            "CONTAINS": .contains, "LIKE": .like, "MATCHES": .matches,
        ]
        if case .identifier(let word) = current.kind, let op = words[word.uppercased()] {
            advance()
            return op
        }
        return nil
    }

    private mutating func parseOptions() throws(LogStoreError) -> ComparisonOptions {
        let open = current
        advance()
        guard case .identifier(let letters) = current.kind else {
            throw Self.error("expected comparison options c, d or cd inside '[' ']'", column: current.column)
        }
        var options: ComparisonOptions = []
        for (offset, letter) in letters.lowercased().enumerated() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": break  // normalized: LogStore compares Unicode canonically already
            default: throw Self.error("unknown comparison option '\(letter)': expected c, d or cd", column: current.column + offset)
            }
        }
        advance()
        guard take(symbol: "]") else {
            throw Self.error("expected ']' to close the options at column \(open.column), not '\(current.text)',", column: current.column)
        }
        return options
    }

    // MARK: - Expressions

    /// An expression; `operatorText` names what came before, for the error
    /// when there is none.
    private mutating func parseExpression(after operatorText: String?) throws(LogStoreError) -> PredicateExpression {
        let token = current
        func missing() -> LogStoreError {
            if let operatorText {
                return Self.error("expected a value after '\(operatorText)', not '\(token.text)',", column: token.column)
            }
            return Self.error("expected a key path or value, not '\(token.text)',", column: token.column)
        }
        switch token.kind {
        case .integer(let value):
            advance()
            return .constant(.integer(value))
        case .double(let value):
            advance()
            return .constant(.double(value))
        case .string(let value):
            advance()
            return .constant(.string(value))
        case .symbol("-"):
            advance()
            switch current.kind {
            case .integer(let value):
                advance()
                let (negated, overflow) = Int64(0).subtractingReportingOverflow(value)
                return .constant(overflow ? .double(-Double(value)) : .integer(negated))
            case .double(let value):
                advance()
                return .constant(.double(-value))
            default:
                throw Self.error("expected a number after '-'", column: current.column)
            }
        case .symbol("{"):
            return try nested { (parser) throws(LogStoreError) in
                parser.advance()
                var items: [PredicateExpression] = []
                if parser.take(symbol: "}") { return .list(items) }
                repeat {
                    items.append(try parser.parseExpression(after: items.isEmpty ? "{" : ","))
                } while parser.take(symbol: ",")
                try parser.expect(symbol: "}", "',' or '}' in the list")
                return .list(items)
            }
        case .argument(let letter):
            advance()
            let argument = try takeArgument(token)
            switch letter {
            case "K":
                guard let key = argument as? String, !key.isEmpty else {
                    throw Self.error("%K needs a key path string argument, not \(argument.map { "\(type(of: $0))" } ?? "nil"),", column: token.column)
                }
                return .keyPath(KeyPathComponent.parse(key) + (try parseKeyPathTail()))
            case "d":
                guard case .integer(let value) = PredicateValue(argument) else {
                    throw Self.error("%d needs an integer argument, not \(argument.map { "\(type(of: $0))" } ?? "nil"),", column: token.column)
                }
                return .constant(.integer(value))
            case "f":
                switch PredicateValue(argument) {
                case .double(let value): return .constant(.double(value))
                case .integer(let value): return .constant(.double(Double(value)))
                default:
                    throw Self.error("%f needs a number argument, not \(argument.map { "\(type(of: $0))" } ?? "nil"),", column: token.column)
                }
            default:
                return .constant(PredicateValue(argument))
            }
        case .variable(let name):
            advance()
            return .variable(name, try parseKeyPathTail())
        case .identifier(let word):
            switch word.uppercased() {
            case "NIL", "NULL":
                advance()
                return .constant(.null)
            case "YES", "TRUE":
                advance()
                return .constant(.bool(true))
            case "NO", "FALSE":
                advance()
                return .constant(.bool(false))
            case "SELF":
                advance()
                let tail = try parseKeyPathTail()
                return tail.isEmpty ? .evaluatedObject : .keyPath(tail)
            default:
                guard !Self.reserved.contains(word.uppercased()) else { throw missing() }
                return .keyPath(try parseKeyPath())
            }
        case .escapedIdentifier, .collectionOperator:
            return .keyPath(try parseKeyPath())
        default:
            throw missing()
        }
    }

    /// Words that end an expression rather than name a key.
    private static let reserved: Set<String> = [
        "AND", "OR", "NOT", "BETWEEN", "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES",
        "ANY", "SOME", "ALL", "NONE", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    private mutating func parseKeyPath() throws(LogStoreError) -> [KeyPathComponent] {
        var components = [try parseComponent()]
        components += try parseKeyPathTail()
        return components
    }

    /// `.component` repeated, after the first component.
    private mutating func parseKeyPathTail() throws(LogStoreError) -> [KeyPathComponent] {
        var components: [KeyPathComponent] = []
        while take(symbol: ".") { components.append(try parseComponent()) }
        return components
    }

    private mutating func parseComponent() throws(LogStoreError) -> KeyPathComponent {
        let token = current
        switch token.kind {
        case .identifier(let name), .escapedIdentifier(let name):
            advance()
            return .key(name)
        case .collectionOperator(let name):
            advance()
            switch name {
            case "count": return .count
            case "sum": return .sum
            case "avg": return .average
            case "min": return .minimum
            case "max": return .maximum
            default: throw Self.error("unknown collection operator '@\(name)': expected @count, @sum, @avg, @min or @max", column: token.column)
            }
        case .argument("K"):
            advance()
            let argument = try takeArgument(token)
            guard let key = argument as? String, !key.isEmpty else {
                throw Self.error("%K needs a key path string argument", column: token.column)
            }
            return .key(key)
        default:
            throw Self.error("expected a key after '.', not '\(token.text)',", column: token.column)
        }
    }

    private mutating func takeArgument(_ token: PredicateToken) throws(LogStoreError) -> Any? {
        guard nextArgument < arguments.count else {
            throw Self.error("\(token.text) has no argument: \(arguments.count) were given", column: token.column)
        }
        defer { nextArgument += 1 }
        return arguments[nextArgument]
    }
}
