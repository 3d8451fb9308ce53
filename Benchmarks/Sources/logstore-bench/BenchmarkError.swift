// A benchmark that could not run, with what went wrong.

#if canImport(Glibc)
import Glibc
#endif

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }

    /// A failed system call, with errno's text.
    static func system(_ call: String, _ path: String, errno code: Int32 = errno) -> BenchmarkError {
        BenchmarkError("\(call) failed on \(path): \(String(cString: strerror(code))) (errno \(code))")
    }
}
