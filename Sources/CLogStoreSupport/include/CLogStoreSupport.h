// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every
// LogStore header and frame. FORMAT.md §1 states the variant.
#ifndef CLOGSTORESUPPORT_H
#define CLOGSTORESUPPORT_H

#include <stddef.h>
#include <stdint.h>

// Extended attributes, which a compaction copies to its new file: Swift's
// Glibc module leaves <sys/xattr.h> out, so it reaches Swift through here.
#if __has_include(<sys/xattr.h>)
#include <sys/xattr.h>
#endif

/// Extends `crc` (the value returned for the bytes before; 0 to start) over
/// `count` bytes at `bytes`. Uses the CPU's CRC32C instruction when it has one
/// and a slicing-by-8 table otherwise; both give the same result.
uint32_t logstore_crc32c_extend(uint32_t crc, const void *bytes, size_t count);

/// The portable slicing-by-8 implementation, exposed so tests can check it
/// against the hardware path on the same bytes.
uint32_t logstore_crc32c_extend_portable(uint32_t crc, const void *bytes, size_t count);

/// 1 when `logstore_crc32c_extend` uses a CPU instruction, 0 otherwise.
int logstore_crc32c_is_hardware_accelerated(void);

/// Starts loading the cache line at `address` for a read soon, without
/// waiting for it: a lookup that knows where its next miss is can overlap
/// that miss with other work.
static inline void logstore_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

/// The device and inode of the file `path` names, as `stat` would give
/// them, without reading its timestamps (see file_identity.c). Returns 0, or
/// -1 with `errno` set.
int logstore_path_identity(const char *path, uint64_t *device, uint64_t *inode);

/// The same for the file open on `descriptor`.
int logstore_descriptor_identity(int descriptor, uint64_t *device, uint64_t *inode);

#endif
