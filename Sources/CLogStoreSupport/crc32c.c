// CRC32C for LogStore: a CPU-instruction path and a slicing-by-8 fallback.
//
// Written in C because Swift cannot name the SSE4.2 / ARMv8 CRC intrinsics;
// everything else in LogStore is Swift. The checksum is the standard CRC32C
// (initial value ~0, final xor ~0, reflected), so `crc32c("123456789")` is
// 0xE3069283.

#include "CLogStoreSupport.h"
#include <pthread.h>
#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int k = 1; k < 8; k++) {
            c = table[0][c & 0xFF] ^ (c >> 8);
            table[k][n] = c;
        }
    }
}

uint32_t logstore_crc32c_extend_portable(uint32_t crc, const void *bytes, size_t count) {
    pthread_once(&table_once, build_tables);
    const uint8_t *p = bytes;
    uint32_t c = ~crc;
    while (count > 0 && ((uintptr_t)p & 7) != 0) {
        c = table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
        count--;
    }
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        // The tables assume little-endian loads; LogStore builds only for
        // little-endian targets (x86_64, arm64), checked in Swift at start-up.
        uint32_t lo = (uint32_t)word ^ c;
        uint32_t hi = (uint32_t)(word >> 32);
        c = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^
            table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
            table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^
            table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        c = table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
        count--;
    }
    return ~c;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2")))
static uint32_t crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const uint8_t *p = bytes;
    uint64_t c = ~crc;
    while (count > 0 && ((uintptr_t)p & 7) != 0) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        count--;
    }
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        count--;
    }
    return ~(uint32_t)c;
}

static int has_hardware(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

static uint32_t crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const uint8_t *p = bytes;
    uint32_t c = ~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __crc32cd(c, word);
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        c = __crc32cb(c, *p++);
        count--;
    }
    return ~c;
}

static int has_hardware(void) { return 1; }
#else
static uint32_t crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    return logstore_crc32c_extend_portable(crc, bytes, count);
}

static int has_hardware(void) { return 0; }
#endif

static int hardware = -1;
static pthread_once_t hardware_once = PTHREAD_ONCE_INIT;

static void detect_hardware(void) { hardware = has_hardware(); }

int logstore_crc32c_is_hardware_accelerated(void) {
    pthread_once(&hardware_once, detect_hardware);
    return hardware;
}

uint32_t logstore_crc32c_extend(uint32_t crc, const void *bytes, size_t count) {
    if (logstore_crc32c_is_hardware_accelerated()) return crc32c_hardware(crc, bytes, count);
    return logstore_crc32c_extend_portable(crc, bytes, count);
}
