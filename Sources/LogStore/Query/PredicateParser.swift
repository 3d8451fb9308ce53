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
//   expression  = term { ("+" | "-") term }
//   term        = factor { ("*" | "/") factor }
//   factor      = "-" number | "-" factor | operand
//   operand     = number | string | "(" expression ")" | "%@" | "%d" | "%i" | "%f" | "%K" [ "." keyPath ]
//               | "$" name [ "." keyPath ] | "SELF" [ "." keyPath ] | "nil" | "NULL"
//               | "YES" | "NO" | "TRUE" | "FALSE" | "{" [ expression { "," expression } ] "}"
//               | "SUBQUERY" "(" expression "," "$" name "," predicate ")" [ "." keyPath ]
//               | "CAST" "(" expression "," string ")" | keyPath
//   keyPath     = component { "." component }     component = key | "#" key | "%K" | "@count" | "@sum" | …
//
// Keywords are case-insensitive, as in Core Data. A "(" at the start of a
// primary may open a predicate, `(age > 3)`, or the comparison's first
// expression, `(age + 1) * 2 > 10`: the parser tries a predicate first,
// then a comparison, and reports the error of whichever got further.
// `-` right before a number makes a negative number, not a negation.
//
// Forms that parse but could never mean anything are refused here, with
// their column, rather than when a fetch binds them: options on values that
// are not strings, a number on the right of IN, ANY before a value.

import Foundation

/// Parses one format string with its arguments into an ``ObjectPredicate``.
struct PredicateParser {
    private let tokens: [PredicateToken]
    private var index = 0
    private let arguments: [Any?]
    private var nextArgument = 0
    /// How deep the parentheses, NOTs and lists around the current token go.
    private var depth = 0
    /// The columns of the key paths and variables of the expression being
    /// parsed, in order (``PredicateComparison/leftColumns``).
    private var keyPathColumns: [Int] = []

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


    /// What backtracking restores: the position, the arguments taken and
    /// the columns recorded.
    private struct Mark {
        var index: Int
        var nextArgument: Int
        var keyPathColumns: [Int]
    }

    private var mark: Mark { Mark(index: index, nextArgument: nextArgument, keyPathColumns: keyPathColumns) }

    private mutating func reset(to mark: Mark) {
        index = mark.index
        nextArgument = mark.nextArgument
        keyPathColumns = mark.keyPathColumns
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
            // A parenthesized predicate, or a comparison whose first
            // expression starts with a parenthesis: `(age + 1) * 2 > 10`.
            let start = mark
            let predicateError: LogStoreError
            do throws(LogStoreError) {
                return try parseParenthesizedPredicate()
            } catch {
                predicateError = error
            }
            reset(to: start)
            do throws(LogStoreError) {
                return .comparison(try parseComparison())
            } catch {
                // The attempt that read further knows better what was meant.
                throw (error.column ?? 0) > (predicateError.column ?? 0) ? error : predicateError
            }
        }
        if take(keyword: "TRUEPREDICATE") { return .constant(true) }
        if take(keyword: "FALSEPREDICATE") { return .constant(false) }
        return .comparison(try parseComparison())
    }

    private mutating func parseParenthesizedPredicate() throws(LogStoreError) -> ObjectPredicate {
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

    private mutating func parseComparison() throws(LogStoreError) -> PredicateComparison {
        var modifier = ComparisonModifier.direct
        let modifierToken = current
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
        let leftToken = current
        let (left, leftColumns) = try parseSide(after: nil)
        let operatorToken = current
        guard let op = parseOperator() else {
            throw Self.error("expected an operator such as ==, <, IN or BEGINSWITH after '\(previous.text)', not '\(current.text)',", column: current.column)
        }
        var options: ComparisonOptions = []
        let optionsToken = current
        if isSymbol("[") {
            options = try parseOptions()
        }
        let rightToken = current
        let (right, rightColumns) = try parseSide(after: operatorToken.text + options.description)
        var comparison = PredicateComparison(left, op, right, options: options, modifier: modifier)
        comparison.leftColumns = leftColumns
        comparison.rightColumns = rightColumns
        try check(comparison, modifier: modifierToken, left: leftToken, options: optionsToken, right: rightToken)
        return comparison
    }

    /// One side of a comparison, with the columns of its key paths.
    private mutating func parseSide(after operatorText: String?) throws(LogStoreError) -> (PredicateExpression, [Int]) {
        let outer = keyPathColumns
        keyPathColumns = []
        defer { keyPathColumns = outer }
        let expression = try parseExpression(after: operatorText)
        return (expression, keyPathColumns)
    }

    /// Refuses comparisons that parse but cannot mean anything, at the
    /// column of the part at fault.
    private func check(_ comparison: PredicateComparison, modifier: PredicateToken, left: PredicateToken,
                       options: PredicateToken, right: PredicateToken) throws(LogStoreError) {
        let op = comparison.operator
        if comparison.modifier != .direct {
            switch comparison.left {
            case .keyPath, .variable, .subquery: break
            default:
                throw Self.error("\(modifier.text.uppercased()) needs a key path through a to-many relationship (\(modifier.text.uppercased()) pets.name == 'Rex'), not \(comparison.left),", column: left.column)
            }
        }
        if op == .between {
            switch comparison.right {
            case .list(let bounds) where bounds.count == 2: break
            // A variable substituted later (`BETWEEN $RANGE`).
            case .variable(_, let path) where path.isEmpty: break
            default: throw Self.error("expected {lower, upper} after BETWEEN", column: right.column)
            }
        }
        if op == .in {
            if let kind = Self.scalar(comparison.right) {
                throw Self.error("IN needs a collection ({1, 2}, a to-many key path, an array argument) or a string to search on its right, not \(kind)", column: right.column)
            }
            if case .constant(.string) = comparison.right, let kind = Self.nonString(comparison.left) {
                throw Self.error("a string on the right of IN is searched for the string on its left, but the left is \(kind)", column: left.column)
            }
        }
        if op.isStringOperator && op != .contains {
            for (side, token) in [(comparison.left, left), (comparison.right, right)] {
                if let kind = Self.nonString(side) {
                    throw Self.error("\(op) compares strings, and \(side) is \(kind)", column: token.column)
                }
            }
        }
        if !comparison.options.isEmpty {
            for side in [comparison.left, comparison.right] {
                if let kind = Self.nonString(side) {
                    throw Self.error("\(comparison.options) compares strings ignoring case or diacritics, and \(side) is \(kind): remove the options", column: options.column)
                }
            }
        }
    }

    /// What kind of value an expression is when it is one value that is
    /// neither a string nor a collection: what cannot be on the right of IN.
    private static func scalar(_ expression: PredicateExpression) -> String? {
        switch expression {
        case .constant(.list), .list: nil
        default: nonString(expression)
        }
    }

    /// What kind of value an expression certainly is when it is not a
    /// string (a number, a date, …); nil when it may be a string (a key
    /// path, a variable, nil, a list of strings).
    private static func nonString(_ expression: PredicateExpression) -> String? {
        switch expression {
        case .constant(let value):
            switch value {
            case .null, .string, .custom: return nil
            case .bool: return "a boolean"
            case .integer, .double, .decimal: return "a number"
            case .date: return "a date"
            case .data: return "data"
            case .uuid: return "a UUID"
            case .object: return "an object"
            case .list(let values): return values.lazy.compactMap { nonString(.constant($0)) }.first
            }
        case .list(let items): return items.lazy.compactMap(nonString).first
        case .arithmetic, .negated: return "a number"
        case .keyPath, .variable, .evaluatedObject, .subquery: return nil
        }
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

    /// An expression: terms joined by `+` and `-`; `operatorText` names
    /// what came before, for the error when there is none.
    private mutating func parseExpression(after operatorText: String?) throws(LogStoreError) -> PredicateExpression {
        var expression = try parseTerm(after: operatorText)
        while case .symbol(let symbol) = current.kind, let op = ArithmeticOperator(rawValue: symbol), op.precedence == 1 {
            advance()
            expression = .arithmetic(op, expression, try parseTerm(after: symbol))
        }
        return expression
    }

    /// Factors joined by `*` and `/`.
    private mutating func parseTerm(after operatorText: String?) throws(LogStoreError) -> PredicateExpression {
        var expression = try parseFactor(after: operatorText)
        while case .symbol(let symbol) = current.kind, let op = ArithmeticOperator(rawValue: symbol), op.precedence == 2 {
            advance()
            expression = .arithmetic(op, expression, try parseFactor(after: symbol))
        }
        return expression
    }

    /// An operand, or `-` before one: a negative number when a number
    /// follows, a negation otherwise.
    private mutating func parseFactor(after operatorText: String?) throws(LogStoreError) -> PredicateExpression {
        guard isSymbol("-") else { return try parseOperand(after: operatorText) }
        return try nested { (parser) throws(LogStoreError) in
            parser.advance()
            switch parser.current.kind {
            case .integer(let value):
                parser.advance()
                let (negated, overflow) = Int64(0).subtractingReportingOverflow(value)
                return .constant(overflow ? .double(-Double(value)) : .integer(negated))
            case .double(let value):
                // -9223372036854775808 is Int64.min, though its digits alone
                // are beyond Int64 and read as a double.
                let isMinimum = UInt64(parser.current.text) == Int64.min.magnitude
                parser.advance()
                return .constant(isMinimum ? .integer(.min) : .double(-value))
            default:
                return .negated(try parser.parseFactor(after: "-"))
            }
        }
    }

    private mutating func parseOperand(after operatorText: String?) throws(LogStoreError) -> PredicateExpression {
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
        case .symbol("("):
            return try nested { (parser) throws(LogStoreError) in
                parser.advance()
                let inner = try parser.parseExpression(after: "(")
                guard parser.take(symbol: ")") else {
                    throw Self.error("expected ')' to close the '(' at column \(token.column), not '\(parser.current.text)',", column: parser.current.column)
                }
                return inner
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
                keyPathColumns.append(token.column)
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
                // An array becomes a list of constants, as `{…}` does, so
                // that the predicate prints as text that reads back as it.
                return PredicateExpression(value: PredicateValue(argument))
            }
        case .variable(let name):
            advance()
            keyPathColumns.append(token.column)
            return .variable(name, try parseKeyPathTail())
        case .identifier(let word):
            let next = tokens[min(index + 1, tokens.count - 1)]
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
                if !tail.isEmpty { keyPathColumns.append(token.column) }
                return tail.isEmpty ? .evaluatedObject : .keyPath(tail)
            case "SUBQUERY" where next.kind == .symbol("("):
                return try parseSubquery()
            case "CAST" where next.kind == .symbol("("):
                return try parseCast()
            default:
                guard !Self.reserved.contains(word.uppercased()) else { throw missing() }
                keyPathColumns.append(token.column)
                return .keyPath(try parseKeyPath())
            }
        case .escapedIdentifier, .collectionOperator:
            keyPathColumns.append(token.column)
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

    /// `SUBQUERY(collection, $variable, predicate)`, then any key path.
    private mutating func parseSubquery() throws(LogStoreError) -> PredicateExpression {
        let start = current
        let subquery = try nested { (parser) throws(LogStoreError) -> PredicateSubquery in
            parser.advance()
            parser.advance()
            let (collection, collectionColumns) = try parser.parseSide(after: "SUBQUERY(")
            try parser.expect(symbol: ",", "',' and a $variable after SUBQUERY's collection")
            guard case .variable(let variable) = parser.current.kind else {
                throw Self.error("expected a $variable to name each element after SUBQUERY's collection, not '\(parser.current.text)',", column: parser.current.column)
            }
            parser.advance()
            try parser.expect(symbol: ",", "',' and a predicate after SUBQUERY's variable")
            // The inner predicate's comparisons keep their own columns.
            let outer = parser.keyPathColumns
            let predicate = try parser.parseOr()
            parser.keyPathColumns = outer
            guard parser.take(symbol: ")") else {
                throw Self.error("expected ')' to close the SUBQUERY at column \(start.column), not '\(parser.current.text)',", column: parser.current.column)
            }
            var subquery = PredicateSubquery(collection, variable: variable, where: predicate)
            subquery.collectionColumns = collectionColumns
            return subquery
        }
        return .subquery(subquery, try parseKeyPathTail())
    }

    /// `CAST(value, "Type")`: Core Data's `CAST(seconds, "NSDate")` for a
    /// date, and LogStore's forms for values that have no literal, which
    /// descriptions print: `CAST("inf", "NSNumber")`, `CAST("19.99", "NSDecimalNumber")`, `CAST("…", "NSUUID")`,
    /// `CAST("hex", "NSData")`, `CAST("logstore://…", "NSManagedObjectID")`.
    private mutating func parseCast() throws(LogStoreError) -> PredicateExpression {
        try nested { (parser) throws(LogStoreError) in
            parser.advance()
            parser.advance()
            let valueToken = parser.current
            let (expression, _) = try parser.parseSide(after: "CAST(")
            guard case .constant(let value) = expression else {
                throw Self.error("CAST needs a constant number or string to convert, not \(expression),", column: valueToken.column)
            }
            try parser.expect(symbol: ",", "',' and a type name after CAST's value")
            let typeToken = parser.current
            guard case .string(let type) = typeToken.kind else {
                throw Self.error("expected a type name string such as \"NSDate\" in CAST, not '\(typeToken.text)',", column: typeToken.column)
            }
            parser.advance()
            guard parser.take(symbol: ")") else {
                throw Self.error("expected ')' to close the CAST, not '\(parser.current.text)',", column: parser.current.column)
            }
            func invalid(_ what: String) -> LogStoreError {
                Self.error("CAST to \(type) needs \(what), not \(value),", column: valueToken.column)
            }
            switch (type, value) {
            case ("NSDate", .integer(let seconds)): return .constant(.date(Date(timeIntervalSinceReferenceDate: Double(seconds))))
            case ("NSDate", .double(let seconds)): return .constant(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            case ("NSDate", _): throw invalid("a number of seconds since 2001")
            case ("NSNumber", .integer), ("NSNumber", .double): return .constant(value)
            case ("NSNumber", .string(let text)):
                if let integer = Int64(text) { return .constant(.integer(integer)) }
                guard let number = Double(text) else { throw invalid("a number such as \"1.5\", \"inf\" or \"nan\"") }
                return .constant(.double(number))
            case ("NSNumber", _): throw invalid("a number or a string of one")
            case ("NSDecimalNumber", .string(let text)):
                guard let number = DecimalText.number(text) else { throw invalid("a decimal number in a string, such as \"19.99\"") }
                return .constant(.decimal(number))
            case ("NSDecimalNumber", .integer(let integer)): return .constant(.decimal(Decimal(integer)))
            case ("NSDecimalNumber", _): throw invalid("a decimal number in a string, such as \"19.99\"")
            case ("NSUUID", .string(let text)):
                guard let uuid = UUID(uuidString: text) else { throw invalid("a UUID string; \(value) is not a UUID") }
                return .constant(.uuid(uuid))
            case ("NSUUID", _): throw invalid("a UUID string")
            case ("NSData", .string(let text)):
                guard let data = Self.data(hex: text) else { throw invalid("an even number of hexadecimal digits") }
                return .constant(.data(data))
            case ("NSData", _): throw invalid("a string of hexadecimal digits")
            case ("NSManagedObjectID", .string(let text)):
                guard let url = URL(string: text), let id = ObjectID(uriRepresentation: url) else {
                    throw invalid("an object ID's URI (logstore://STORE/Entity/pKEY)")
                }
                return .constant(.object(id))
            case ("NSManagedObjectID", _): throw invalid("an object ID's URI string")
            default:
                throw Self.error("unknown CAST type \"\(type)\": expected \"NSDate\", \"NSNumber\", \"NSDecimalNumber\", \"NSUUID\", \"NSData\" or \"NSManagedObjectID\"", column: typeToken.column)
            }
        }
    }

    private static func data(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var data = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            data.append(byte)
        }
        return data
    }

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
