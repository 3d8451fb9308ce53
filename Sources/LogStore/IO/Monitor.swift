// A mutex with separate condition variables, for waiters that must not wake
// each other.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex and the condition variables that wait on it.
///
/// `NSCondition` ties one condition to one lock, so every signal wakes every
/// kind of waiter. The group-commit leader waits for frames while followers
/// wait for its flush; with one condition each frame written would wake all
/// the followers for nothing, and on a small machine those context switches
/// cost more than the flush they share.
///
/// `@unchecked Sendable`: the pthread objects are made for sharing between
/// threads, and they live at fixed heap addresses for the monitor's lifetime.
final class Monitor: @unchecked Sendable {
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the mutex held.
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Something to wait for under this monitor's mutex.
    final class Condition: @unchecked Sendable {
        private let monitor: Monitor
        private let condition: UnsafeMutablePointer<pthread_cond_t>

        init(_ monitor: Monitor) {
            self.monitor = monitor
            condition = .allocate(capacity: 1)
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            // Deadlines are monotonic: a clock change must not stretch a
            // wait. Apple's systems cannot set the clock; `wait(until:)`
            // waits a relative time there instead.
            #if !canImport(Darwin)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            #endif
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        }

        deinit {
            pthread_cond_destroy(condition)
            condition.deallocate()
        }

        /// Releases the mutex until signalled (or spuriously woken), then
        /// takes it again. Call with the mutex held, in a loop over the
        /// condition you wait for.
        func wait() { pthread_cond_wait(condition, monitor.mutex) }

        /// Like ``wait()``, but gives up at `deadline` (a `CLOCK_MONOTONIC`
        /// time); returns false when it did.
        func wait(until deadline: timespec) -> Bool {
            #if canImport(Darwin)
            var remaining = deadline.remaining
            return pthread_cond_timedwait_relative_np(condition, monitor.mutex, &remaining) != ETIMEDOUT
            #else
            var deadline = deadline
            return pthread_cond_timedwait(condition, monitor.mutex, &deadline) != ETIMEDOUT
            #endif
        }

        func signal() { pthread_cond_signal(condition) }
        func broadcast() { pthread_cond_broadcast(condition) }
    }
}

extension timespec {
    /// `CLOCK_MONOTONIC` now plus `seconds`.
    static func monotonic(after seconds: Double) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanoseconds = Int(now.tv_nsec) + Int(seconds * 1e9)
        return timespec(tv_sec: now.tv_sec + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    }

    /// The time from `CLOCK_MONOTONIC` now until this deadline, zero once past.
    var remaining: timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanoseconds = max(0, (Int(tv_sec) - Int(now.tv_sec)) * 1_000_000_000 + Int(tv_nsec) - Int(now.tv_nsec))
        return timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    }
}

/// A value that threads share behind a pthread mutex.
///
/// Not `Synchronization.Mutex`: on Linux it waits with raw futex calls that
/// ThreadSanitizer cannot see, so every access under it looks like a race,
/// and CI runs the concurrency tests under ThreadSanitizer.
final class Protected<Value>: @unchecked Sendable {
    private let monitor = Monitor()
    // Unchecked exclusivity: the mutex already makes every access
    // exclusive (a nested withLock would deadlock before it overlapped),
    // and the run-time check cost as much as the lock on hot paths.
    @exclusivity(unchecked) private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        monitor.lock()
        defer { monitor.unlock() }
        return try body(&value)
    }
}
