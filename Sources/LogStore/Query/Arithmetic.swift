// What `+ - * /` mean in a predicate's expressions: one definition over
// stored values, used by evaluation and by the binder's folding of constants.

import Foundation

/// An arithmetic operator of a predicate expression: `age + 1`,
/// `price * quantity`, `$FETCH_SOURCE.birthdate - 315576000`.
///
/// `*` and `/` bind tighter than `+` and `-`; each is left associative,
/// so `a - b - c` is `(a - b) - c`.
public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"

    public var description: String { rawValue }

    /// How tightly the operator binds: `*` and `/` before `+` and `-`.
    var precedence: Int {
        switch self {
        case .add, .subtract: 1
        case .multiply, .divide: 2
        }
    }
}

/// Arithmetic over stored values.
enum Arithmetic {
    /// A number or a date, as arithmetic sees it.
    private enum Operand {
        case integer(Int64)
        case real(Double)
        case decimal(Decimal)
        case date(Date)

        var real: Double? {
            switch self {
            case .integer(let value): Double(value)
            case .real(let value): value
            case .decimal(let value): DecimalText.double(value)
            case .date: nil
            }
        }

        /// The exact decimal of an integer or a decimal.
        var decimal: Decimal? {
            switch self {
            case .integer(let value): Decimal(value)
            case .decimal(let value): value
            case .real, .date: nil
            }
        }
    }

    /// Integers of any width are numbers; so are floats and doubles, and
    /// dates take part in `+` and `-`. Booleans are not numbers here
    /// (`active + 1` is nil, not 2), nor are strings; nil is nil.
    private static func operand(_ value: StoredValue) -> Operand? {
        switch value {
        case .int16(let value): .integer(Int64(value))
        case .int32(let value): .integer(Int64(value))
        case .int64(let value): .integer(value)
        case .float(let value): .real(Double(value))
        case .double(let value): .real(value)
        case .date(let value): .date(value)
        case .decimal(let value): .decimal(value)
        default: nil
        }
    }

    /// `a op b`.
    ///
    /// - Integers stay Int64 for `+`, `-` and `*`; a result that would
    ///   overflow is computed in Double instead.
    /// - `/` always gives a Double, following IEEE 754 (`1 / 0` is
    ///   +infinity, `0 / 0` is NaN).
    /// - `date + seconds`, `seconds + date` and `date - seconds` give a
    ///   date; `date - date` gives the seconds between them as a Double.
    /// - A decimal with an integer or a decimal gives an exact decimal
    ///   (dividing by zero gives nil); with a double, a Double.
    /// - Anything else (nil, a boolean, a string, a date multiplied) gives nil.
    static func apply(_ op: ArithmeticOperator, _ a: StoredValue, _ b: StoredValue) -> StoredValue {
        guard let left = operand(a), let right = operand(b) else { return .null }
        switch (left, right) {
        case (.date(let date), .date(let other)):
            return op == .subtract ? .double(date.timeIntervalSince(other)) : .null
        case (.date(let date), _):
            guard let seconds = right.real else { return .null }
            switch op {
            case .add: return .date(date.addingTimeInterval(seconds))
            case .subtract: return .date(date.addingTimeInterval(-seconds))
            case .multiply, .divide: return .null
            }
        case (_, .date(let date)):
            guard op == .add, let seconds = left.real else { return .null }
            return .date(date.addingTimeInterval(seconds))
        case (.integer(let x), .integer(let y)) where op != .divide:
            let (result, overflow) = switch op {
            case .add: x.addingReportingOverflow(y)
            case .subtract: x.subtractingReportingOverflow(y)
            default: x.multipliedReportingOverflow(by: y)
            }
            if !overflow { return .int64(result) }
            return .double(real(op, Double(x), Double(y)))
        case (.decimal, _), (_, .decimal):
            guard let x = left.decimal, let y = right.decimal else {
                guard let x = left.real, let y = right.real else { return .null }
                return .double(real(op, x, y))
            }
            switch op {
            case .add: return .decimal(x + y)
            case .subtract: return .decimal(x - y)
            case .multiply: return .decimal(x * y)
            case .divide: return y == 0 ? .null : .decimal(x / y)
            }
        default:
            guard let x = left.real, let y = right.real else { return .null }
            return .double(real(op, x, y))
        }
    }

    private static func real(_ op: ArithmeticOperator, _ x: Double, _ y: Double) -> Double {
        switch op {
        case .add: x + y
        case .subtract: x - y
        case .multiply: x * y
        case .divide: x / y
        }
    }
}
