// Byte access that keeps typed throws: the standard library's
// `withUnsafeBytes` rethrows as `any Error`, which would erase LogStoreError.

import Foundation

extension ContiguousBytes {
    /// `withUnsafeBytes`, preserving the closure's error type.
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var result: Result<R, E>?
        withUnsafeBytes { raw in result = Result { () throws(E) -> R in try body(raw) } }
        return try result!.get()
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeMutableBytes`, preserving the closure's error type.
    mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var result: Result<R, E>?
        withUnsafeMutableBytes { raw in result = Result { () throws(E) -> R in try body(raw) } }
        return try result!.get()
    }
}
