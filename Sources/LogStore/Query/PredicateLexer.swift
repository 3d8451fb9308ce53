// Splits a predicate format string into tokens, each with its column.

/// A token of a predicate format string.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        /// A key, or a keyword (keywords are recognized by the parser, case-insensitively).
        case identifier(String)
        /// A key escaped with `#`, never a keyword.
        case escapedIdentifier(String)
        case integer(Int64)
        case double(Double)
        case string(String)
        /// `%@`, `%K`, `%d`, `%i`, `%f` (the letter, after any length modifier).
        case argument(Character)
        /// `$NAME`.
        case variable(String)
        /// `@count`, `@sum`, … (the name after `@`, lowercased).
        case collectionOperator(String)
        /// Punctuation and symbolic operators: `==`, `<=`, `&&`, `(`, `{`, `.`, …
        case symbol(String)
        case end
    }

    var kind: Kind
    /// The text as written, for error messages.
    var text: String
    /// Characters before the token (0 for the first character).
    var column: Int
}

/// Turns a format string into tokens.
struct PredicateLexer {
    private let characters: [Character]
    private var position = 0

    init(_ format: String) { characters = Array(format) }

    /// Every token, ending with `.end`.
    mutating func tokens() throws(LogStoreError) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            let token = try next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var current: Character? { position < characters.count ? characters[position] : nil }

    private func peek(_ offset: Int) -> Character? {
        position + offset < characters.count ? characters[position + offset] : nil
    }

    private mutating func next() throws(LogStoreError) -> PredicateToken {
        while let character = current, character.isWhitespace { position += 1 }
        let start = position
        guard let character = current else { return PredicateToken(kind: .end, text: "end of the predicate", column: start) }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, text: String(characters[start..<position]), column: start)
        }
        if character.isLetter || character == "_" {
            return token(.identifier(readWord()))
        }
        if character == "#" {
            position += 1
            let word = readWord()
            guard !word.isEmpty else { throw PredicateParser.error("expected a key after '#'", column: start) }
            return token(.escapedIdentifier(word))
        }
        if character.isNumber && character.isASCII {
            return token(try readNumber(start))
        }
        if character == "." && peek(1)?.isNumber == true && peek(1)?.isASCII == true {
            return token(try readNumber(start))
        }
        if character == "'" || character == "\"" {
            return token(.string(try readString(quote: character, start: start)))
        }
        if character == "%" {
            position += 1
            // Length modifiers of printf-style integers: %ld, %lld, %lu, %hd, %qd.
            while let modifier = current, "lhq".contains(modifier) { position += 1 }
            guard let letter = current, "@KdiufDIUF".contains(letter) else {
                throw PredicateParser.error("expected %@, %K, %d, %i or %f", column: start)
            }
            position += 1
            let normalized: Character = switch letter {
            case "D", "I", "U", "u", "i": "d"
            case "F": "f"
            default: letter
            }
            return token(.argument(normalized))
        }
        if character == "$" {
            position += 1
            let name = readWord()
            guard !name.isEmpty else { throw PredicateParser.error("expected a variable name after '$'", column: start) }
            return token(.variable(name))
        }
        if character == "@" {
            position += 1
            let name = readWord()
            guard !name.isEmpty else { throw PredicateParser.error("expected a collection operator such as @count after '@'", column: start) }
            return token(.collectionOperator(name.lowercased()))
        }
        for symbol in ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"] where matches(symbol) {
            position += symbol.count
            return token(.symbol(symbol))
        }
        if "=<>!(){},.[]-+".contains(character) {
            position += 1
            return token(.symbol(String(character)))
        }
        throw PredicateParser.error("unexpected character '\(character)'", column: start)
    }

    private func matches(_ symbol: String) -> Bool {
        for (offset, character) in symbol.enumerated() where peek(offset) != character { return false }
        return true
    }

    private mutating func readWord() -> String {
        let start = position
        while let character = current, character.isLetter || character.isNumber || character == "_" { position += 1 }
        return String(characters[start..<position])
    }

    private mutating func readNumber(_ start: Int) throws(LogStoreError) -> PredicateToken.Kind {
        if current == "0", let x = peek(1), x == "x" || x == "X" {
            position += 2
            let digits = position
            while let character = current, character.isHexDigit { position += 1 }
            guard position > digits, let value = UInt64(String(characters[digits..<position]), radix: 16) else {
                throw PredicateParser.error("expected hexadecimal digits after '0x'", column: start)
            }
            // Beyond Int64, a number, as a decimal literal of that size is.
            return Int64(exactly: value).map(PredicateToken.Kind.integer) ?? .double(Double(value))
        }
        var isInteger = true
        while let character = current, character.isASCII, character.isNumber { position += 1 }
        if current == ".", peek(1)?.isNumber == true {
            isInteger = false
            position += 1
            while let character = current, character.isASCII, character.isNumber { position += 1 }
        }
        if let e = current, e == "e" || e == "E", let after = peek(1),
           after.isNumber || ((after == "-" || after == "+") && peek(2)?.isNumber == true) {
            isInteger = false
            position += 2
            while let character = current, character.isASCII, character.isNumber { position += 1 }
        }
        let text = String(characters[start..<position])
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { throw PredicateParser.error("expected a number, not '\(text)',", column: start) }
        return .double(value)
    }

    private mutating func readString(quote: Character, start: Int) throws(LogStoreError) -> String {
        position += 1
        var result = ""
        while true {
            guard let character = current else {
                throw PredicateParser.error("expected a closing \(quote) for the string that starts", column: start)
            }
            position += 1
            if character == quote { return result }
            guard character == "\\" else {
                result.append(character)
                continue
            }
            guard let escaped = current else { continue }
            position += 1
            switch escaped {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "0": result.append("\0")
            case "u":
                let digits = position
                while position < digits + 4, let character = current, character.isHexDigit { position += 1 }
                guard position == digits + 4, let scalar = UInt32(String(characters[digits..<position]), radix: 16).flatMap(Unicode.Scalar.init) else {
                    throw PredicateParser.error("expected four hexadecimal digits after \\u", column: digits - 2)
                }
                result.unicodeScalars.append(scalar)
            default: result.append(escaped)
            }
        }
    }
}
