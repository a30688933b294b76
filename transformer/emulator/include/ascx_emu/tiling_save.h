// ascx emulator: `SaveToBuffer` of a tiling struct (op-project tiling classes, the high-level
// APIs' tiling structs): copy its bytes into the raw tiling buffer, refusing a short buffer.
// Written for ascx (Apache-2.0).
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ascx_emu {
inline void tiling_save(const void* self, size_t bytes, void* buf, size_t capacity) {
    if (bytes > capacity) {
        std::fprintf(stderr, "ascx-emu: error: SaveToBuffer: the tiling data needs %zu bytes, the buffer holds %zu\n", bytes,
                     capacity);
        std::_Exit(3);
    }
    std::memcpy(buf, self, bytes);
}
}  // namespace ascx_emu
