// ascx emulator: stand-in for the op-project tiling-data header (`BEGIN_TILING_DATA_DEF`,
// `TILING_DATA_FIELD_DEF`, `END_TILING_DATA_DEF`, `REGISTER_TILING_DATA_CLASS`), written from
// the public operator-development guide. Clean-room (Apache-2.0).
//
// A tiling-data class is a plain struct with one member per field (in declaration order) and
// the documented setters/getters; `SaveToBuffer` copies its bytes into the raw tiling buffer,
// and the kernel's `GET_TILING_DATA` copies them back into the same struct (the kernel unit
// sees this header: `ascx emulator build` force-includes the project's op_host tiling headers
// into every unit), so both sides agree on the layout by construction.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../securec.h"

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

#define BEGIN_TILING_DATA_DEF(name)                                                                                     \
    struct name {                                                                                                       \
        void SaveToBuffer(void* buf, size_t capacity) const { ascx_emu::tiling_save(this, sizeof(*this), buf, capacity); } \
        size_t GetDataSize() const { return sizeof(*this); }
#define TILING_DATA_FIELD_DEF(type, field) \
    type field{};                          \
    void set_##field(type v) { field = v; } \
    type get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_ARR(type, n, field)                            \
    type field[n]{};                                                         \
    void set_##field(const type* v) { std::memcpy(field, v, sizeof field); } \
    const type* get_##field() const { return field; }
#define TILING_DATA_FIELD_DEF_STRUCT(type, field) type field{};
#define END_TILING_DATA_DEF }
// The kernel's GET_TILING_DATA reads the registered class (one operator per project).
#define REGISTER_TILING_DATA_CLASS(op, cls) using ascx_emu_op_tiling_t = cls;
