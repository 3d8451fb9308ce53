// The fuzz executable. Built with LOGSTORE_FUZZING (scripts/fuzz), it is
// libFuzzer's entry and fuzzes the target LOGSTORE_FUZZ_TARGET names;
// built plainly, it replays input files through a target named on the
// command line, or writes a target's seed corpus.

import LogStoreFuzzTargets

#if LOGSTORE_FUZZING
/// Read once: libFuzzer calls the entry millions of times.
nonisolated(unsafe) let target = FuzzTarget.fromEnvironment()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    target.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
#else
@main enum FuzzEntry {
    static func main() { FuzzReplay.run() }
}
#endif
