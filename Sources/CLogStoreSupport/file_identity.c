// A file's device and inode without asking for its timestamps.
//
// On Linux 6.13 and later (multigrain timestamps), a stat(2) that reads a
// file's timestamps makes the next write give it a fine-grained change time,
// which the file system journals at once, and the fdatasync after that write
// waits for it. LogStore checks the store's name before every flush, so a
// full stat there slows every durable save (BENCHMARKS.md, issue 24). statx
// asking for the inode alone reads no timestamp.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif
#include "include/CLogStoreSupport.h"

static int identity_at(int directory, const char *path, int flags, uint64_t *device, uint64_t *inode) {
#if defined(__linux__) && defined(STATX_INO)
    struct statx info;
    if (statx(directory, path, flags, STATX_INO, &info) == 0) {
        if (info.stx_mask & STATX_INO) {
            *device = (uint64_t)makedev(info.stx_dev_major, info.stx_dev_minor);
            *inode = (uint64_t)info.stx_ino;
            return 0;
        }
        // A file system that did not give the inode: stat instead.
    } else if (errno != ENOSYS && errno != EPERM && errno != EINVAL) {
        // ENOSYS: a kernel before 4.11; EPERM: a sandbox (seccomp) that
        // refuses statx; EINVAL: flags it does not know. Anything else
        // (ENOENT, EACCES) is the answer.
        return -1;
    }
#endif
    struct stat fallback;
    if (fstatat(directory, path, &fallback, flags) != 0) return -1;
    *device = (uint64_t)fallback.st_dev;
    *inode = (uint64_t)fallback.st_ino;
    return 0;
}

int logstore_path_identity(const char *path, uint64_t *device, uint64_t *inode) {
    return identity_at(AT_FDCWD, path, 0, device, inode);
}

int logstore_descriptor_identity(int descriptor, uint64_t *device, uint64_t *inode) {
#if defined(__linux__)
    return identity_at(descriptor, "", AT_EMPTY_PATH, device, inode);
#else
    struct stat info;
    if (fstat(descriptor, &info) != 0) return -1;
    *device = (uint64_t)info.st_dev;
    *inode = (uint64_t)info.st_ino;
    return 0;
#endif
}
