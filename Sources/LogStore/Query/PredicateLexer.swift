// Splits a predicate format string into tokens, each with its column.
//
// The lexer reads Unicode scalars, not Characters: a string that starts
// with a combining mark, or ends with a prepended one, would otherwise join
// its quote into one Character and never close. Columns therefore count
// scalars, which for ASCII and precomposed text are the characters.

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
    /// Where the token starts: 1 for the first character of the format
    /// string, its length + 1 for the end (``LogStoreError/column``).
    var column: Int
}

/// Turns a format string into tokens.
struct PredicateLexer {
    private let characters: [Unicode.Scalar]
    private var position = 0

    init(_ format: String) { characters = Array(format.unicodeScalars) }

    /// Every token, ending with `.end`.
    mutating func tokens() throws(LogStoreError) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            let token = try next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var current: Unicode.Scalar? { position < characters.count ? characters[position] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        position + offset < characters.count ? characters[position + offset] : nil
    }

    private mutating func next() throws(LogStoreError) -> PredicateToken {
        while let character = current, character.properties.isWhitespace { position += 1 }
        let start = position
        // Columns count from 1.
        let column = start + 1
        guard let character = current else { return PredicateToken(kind: .end, text: "end of the predicate", column: column) }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, text: text(start..<position), column: column)
        }
        if Self.isLetter(character) || character == "_" {
            return token(.identifier(readWord()))
        }
        if character == "#" {
            position += 1
            let word = readWord()
            guard !word.isEmpty else { throw PredicateParser.error("expected a key after '#'", column: column) }
            return token(.escapedIdentifier(word))
        }
        if Self.isDigit(character) || (character == "." && peek(1).map(Self.isDigit) == true) {
            return token(try readNumber(start))
        }
        if character == "'" || character == "\"" {
            return token(.string(try readString(quote: character, start: start)))
        }
        if character == "%" {
            position += 1
            // Length modifiers of printf-style integers: %ld, %lld, %lu, %hd, %qd.
            while let modifier = current, "lhq".unicodeScalars.contains(modifier) { position += 1 }
            guard let letter = current, "@KdiufDIUF".unicodeScalars.contains(letter) else {
                throw PredicateParser.error("expected %@, %K, %d, %i or %f", column: column)
            }
            position += 1
            let normalized: Character = switch Character(letter) {
            case "D", "I", "U", "u", "i": "d"
            case "F": "f"
            default: Character(letter)
            }
            return token(.argument(normalized))
        }
        if character == "$" {
            position += 1
            let name = readWord()
            guard !name.isEmpty else { throw PredicateParser.error("expected a variable name after '$'", column: column) }
            return token(.variable(name))
        }
        if character == "@" {
            position += 1
            let name = readWord()
            guard !name.isEmpty else { throw PredicateParser.error("expected a collection operator such as @count after '@'", column: column) }
            return token(.collectionOperator(name.lowercased()))
        }
        for symbol in ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"] where matches(symbol) {
            position += symbol.count
            return token(.symbol(symbol))
        }
        if "=<>!(){},.[]-+*/".unicodeScalars.contains(character) {
            position += 1
            return token(.symbol(String(character)))
        }
        throw PredicateParser.error("unexpected character '\(character)'", column: column)
    }

    private func text(_ range: Range<Int>) -> String {
        var text = ""
        text.unicodeScalars.append(contentsOf: characters[range])
        return text
    }

    /// Letters start keys and keywords; marks may continue them (a key
    /// written with a combining accent).
    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic
    }

    private static func continuesWord(_ scalar: Unicode.Scalar) -> Bool {
        if isLetter(scalar) || isDigit(scalar) || scalar == "_" { return true }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber: return true
        default: return false
        }
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar.isASCII && scalar.properties.numericType == .decimal }

    private func matches(_ symbol: String) -> Bool {
        for (offset, character) in symbol.unicodeScalars.enumerated() where peek(offset) != character { return false }
        return true
    }

    private mutating func readWord() -> String {
        let start = position
        while let character = current, Self.continuesWord(character) { position += 1 }
        return text(start..<position)
    }

    private mutating func readNumber(_ start: Int) throws(LogStoreError) -> PredicateToken.Kind {
        if current == "0", let x = peek(1), x == "x" || x == "X" {
            position += 2
            let digits = position
            while let character = current, Self.isHexDigit(character) { position += 1 }
            guard position > digits, let value = UInt64(text(digits..<position), radix: 16) else {
                throw PredicateParser.error("expected hexadecimal digits after '0x'", column: start + 1)
            }
            // Beyond Int64, a number, as a decimal literal of that size is.
            return Int64(exactly: value).map(PredicateToken.Kind.integer) ?? .double(Double(value))
        }
        var isInteger = true
        while let character = current, Self.isDigit(character) { position += 1 }
        if current == ".", peek(1).map(Self.isDigit) == true {
            isInteger = false
            position += 1
            while let character = current, Self.isDigit(character) { position += 1 }
        }
        if let e = current, e == "e" || e == "E", let after = peek(1),
           Self.isDigit(after) || ((after == "-" || after == "+") && peek(2).map(Self.isDigit) == true) {
            isInteger = false
            position += 2
            while let character = current, Self.isDigit(character) { position += 1 }
        }
        let text = text(start..<position)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { throw PredicateParser.error("expected a number, not '\(text)',", column: start + 1) }
        return .double(value)
    }

    private static func isHexDigit(_ scalar: Unicode.Scalar) -> Bool { scalar.isASCII && Character(scalar).isHexDigit }

    private mutating func readString(quote: Unicode.Scalar, start: Int) throws(LogStoreError) -> String {
        position += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let character = current else {
                throw PredicateParser.error("expected a closing \(quote) for the string that starts", column: start + 1)
            }
            position += 1
            if character == quote { return String(result) }
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
                while position < digits + 4, let character = current, Self.isHexDigit(character) { position += 1 }
                guard position == digits + 4, let scalar = UInt32(text(digits..<position), radix: 16).flatMap(Unicode.Scalar.init) else {
                    throw PredicateParser.error("expected four hexadecimal digits after \\u", column: digits - 1)
                }
                result.append(scalar)
            default: result.append(escaped)
            }
        }
    }
}
