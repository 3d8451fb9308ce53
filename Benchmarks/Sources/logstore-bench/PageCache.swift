// Emptying the kernel's page cache, for cold-cache measurements.

import Foundation

enum PageCache {
    /// Writes back dirty pages and drops clean ones, so the next read of a
    /// file comes from the disk. Needs root; returns false when not allowed.
    static func drop() -> Bool {
        sync()
        let descriptor = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "3\n", 2) == 2
    }
}
