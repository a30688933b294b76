// ascx emulator: stand-in for the bounds-checked C library header sample hosts and op_host
// tiling code use (`memcpy_s`, `memset_s`). Clean-room (Apache-2.0): the documented contract
// of the C11 Annex K functions, returning 0 (EOK) or a non-zero error without copying.
#pragma once
#include <cstddef>
#include <cstring>

#ifndef EOK
#define EOK 0
#endif

inline int memcpy_s(void* dest, size_t destMax, const void* src, size_t count) {
    if (dest == nullptr || src == nullptr) return 22;  // EINVAL
    if (count > destMax) return 34;                    // ERANGE: nothing copied
    if (count) std::memmove(dest, src, count);
    return EOK;
}
inline int memset_s(void* dest, size_t destMax, int c, size_t count) {
    if (dest == nullptr) return 22;
    if (count > destMax) return 34;
    if (count) std::memset(dest, c, count);
    return EOK;
}
