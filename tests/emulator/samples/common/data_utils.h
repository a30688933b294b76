// Host-side file helpers of the conformance samples, in the layout of the public CPU-debug
// samples: the host program reads input/*.bin, runs the kernel, writes output/*.bin.
// Written for ascx (Apache-2.0). Each sample folder links this file as its data_utils.h.
#ifndef ASCX_SAMPLES_DATA_UTILS_H
#define ASCX_SAMPLES_DATA_UTILS_H
#include <cstdint>
#include <cstdio>
#include <string>

#include "acl/acl.h"

#define INFO_LOG(fmt, ...) std::fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) std::fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)
#define CHECK_ACL(x)                                                             \
    do {                                                                         \
        aclError __ret = (x);                                                    \
        if (__ret != ACL_SUCCESS) ERROR_LOG("%s: acl error %d", #x, __ret);      \
    } while (0)

// Reads exactly `size` bytes of `path` into `buf` (capacity `cap`); false on any shortfall.
inline bool ReadFile(const std::string& path, size_t size, void* buf, size_t cap) {
    if (size > cap) { ERROR_LOG("%s: %zu bytes do not fit a %zu-byte buffer", path.c_str(), size, cap); return false; }
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) { ERROR_LOG("cannot open %s", path.c_str()); return false; }
    size_t got = std::fread(buf, 1, size, f);
    std::fclose(f);
    if (got != size) { ERROR_LOG("%s: read %zu of %zu bytes", path.c_str(), got, size); return false; }
    return true;
}

inline bool WriteFile(const std::string& path, const void* buf, size_t size) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) { ERROR_LOG("cannot create %s", path.c_str()); return false; }
    size_t put = std::fwrite(buf, 1, size, f);
    std::fclose(f);
    return put == size;
}

// Prints the first `count` half values (stored as aclFloat16) for eyeballing.
inline void PrintHalf(const void* data, size_t count) {
    const aclFloat16* h = static_cast<const aclFloat16*>(data);
    for (size_t i = 0; i < count; ++i) std::printf("%g%s", static_cast<double>(aclFloat16ToFloat(h[i])), i + 1 < count ? " " : "\n");
}
#endif
