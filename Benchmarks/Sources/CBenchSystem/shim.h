// C APIs the benchmarks call directly: liblz4's streaming and dictionary API
// (LogStore's own CLZ4 module is internal to the library), and glibc's
// allocator statistics for measuring memory.
#include <lz4.h>
#include <malloc.h>
