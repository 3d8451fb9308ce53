// String comparisons decided on a record's encoded bytes: a full scan
// with `lastName BEGINSWITH[c] 'sm'` reads a million records, and making a
// String of each value cost more than the comparison itself.

/// `attribute op constant` for a string attribute and an ASCII constant,
/// decided on the record's encoded values without decoding them.
struct RawStringTest {
    let slot: Int
    let operation: ComparisonOperator
    /// The constant's UTF-8, lowercased when the test folds case.
    let needle: [UInt8]
    let foldsCase: Bool

    /// The test for `comparison`, when it is such a comparison.
    static func test(for comparison: BoundComparison) -> RawStringTest? {
        guard comparison.modifier == .direct, case .path(let path) = comparison.left, let slot = path.directAttribute,
              case .string = path.entity.attributes[slot].type,
              case .constant(.value(.string(let constant))) = comparison.right, !constant.isEmpty,
              constant.utf8.allSatisfy({ $0 < 0x80 }),
              comparison.options.isEmpty || comparison.options == .caseInsensitive,
              [.beginsWith, .equal].contains(comparison.operator) else { return nil }
        let foldsCase = comparison.options == .caseInsensitive
        let needle = foldsCase ? Array(constant.lowercased().utf8) : Array(constant.utf8)
        return RawStringTest(slot: slot, operation: comparison.operator, needle: needle, foldsCase: foldsCase)
    }

    /// The answer for one record's encoded values, or nil when the bytes
    /// leave it open (text that is not ASCII where case folding or a
    /// combining mark could matter) and the record must be decoded.
    func evaluate(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        var reader = ByteReader(bytes)
        for _ in 0..<slot {
            guard (try? reader.skipTrustedValue()) != nil else { return nil }
        }
        guard let code = try? reader.readByte() else { return false }
        guard code == ValueTypeCode.string.rawValue else { return code == ValueTypeCode.null.rawValue ? false : nil }
        guard let text = try? reader.readLengthPrefixed() else { return nil }
        switch operation {
        case .beginsWith:
            guard text.count >= needle.count else { return text.allSatisfy { $0 < 0x80 } ? false : nil }
            // A combining mark right after the prefix joins its last
            // character, and so does "\n" after "\r" (one Character).
            if text.count > needle.count, text[needle.count] >= 0x80 || (needle.last == 0x0D && text[needle.count] == 0x0A) { return nil }
            return matches(text, count: needle.count)
        default:
            guard text.count == needle.count else { return text.allSatisfy { $0 < 0x80 } ? false : nil }
            return matches(text, count: needle.count)
        }
    }

    private func matches(_ text: UnsafeRawBufferPointer, count: Int) -> Bool? {
        for index in 0..<count {
            var byte = text[index]
            guard byte < 0x80 else { return nil }
            if foldsCase, byte >= 0x41, byte <= 0x5A { byte += 0x20 }
            if byte != needle[index] { return false }
        }
        return true
    }
}
