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

#include "../ascx_emu/tiling_save.h"

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
// Registration (the public "TilingData structure registration" page): `op` is the operator
// type for its default class, or `<op type>_<tiling key>` for a class of one tiling key (read
// by the kernel with GET_TILING_DATA_WITH_STRUCT). Each registration declares an overload of
// `ascx_emu_registered_tiling` (never defined: only its return type is used): the default one
// takes `default_tag`, a keyed one a tag of its own, so the kernel's GET_TILING_DATA finds the
// default class and a second default registration is a compile error (one per project).
namespace ascx_emu {
struct default_tiling_tag {};
template <int N> struct keyed_tiling_tag {};
// "AddCustom_1": the name ends in '_' and decimal digits.
constexpr bool keyed_op_name(const char* s) {
    size_t n = 0;
    while (s[n]) ++n;
    size_t i = n;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
    return i < n && i > 0 && s[i - 1] == '_';
}
template <bool keyed, int N> struct tiling_tag { using type = default_tiling_tag; };
template <int N> struct tiling_tag<true, N> { using type = keyed_tiling_tag<N>; };
}  // namespace ascx_emu
#define REGISTER_TILING_DATA_CLASS(op, cls) \
    cls ascx_emu_registered_tiling(::ascx_emu::tiling_tag<::ascx_emu::keyed_op_name(#op), __COUNTER__>::type);
