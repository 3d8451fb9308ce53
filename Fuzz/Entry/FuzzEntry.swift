// The fuzz executable. Built with LOGSTORE_FUZZING (scripts/fuzz), it runs
// libFuzzer on the target LOGSTORE_FUZZ_TARGET names; built plainly, it
// replays input files through a target named on the command line, or
// writes a target's seed corpus.

import LogStoreFuzzTargets

#if LOGSTORE_FUZZING
/// Read once: libFuzzer calls the entry millions of times.
nonisolated(unsafe) let target = FuzzTarget.fromEnvironment()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    target.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

/// libFuzzer's driver, exported by its runtime since LLVM 11.
@_extern(c, "LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafeRawPointer?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's `main` to `<module>_main`, which a module
/// parsed as a library (as libFuzzer needs) never emits: this is it, and it
/// hands the command line to libFuzzer's driver.
@_cdecl("logstore_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv) { start, count in fuzzOneInput(start, count) }
}
#else
@main enum FuzzEntry {
    static func main() { FuzzReplay.run() }
}
#endif
