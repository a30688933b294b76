// ascx emulator: the kernel side of op projects: `GET_TILING_DATA`, `TILING_KEY_IS`, the system /
// user workspace calls, and `DTYPE_<NAME>` / `ORIG_DTYPE_<NAME>` defaults. Written from the
// public operator-development guide. Clean-room (Apache-2.0).
//
// `GET_TILING_DATA(var, tiling)` copies the tiling bytes the host's `SaveToBuffer` wrote into a
// `var` of the class the project registered as its default (`REGISTER_TILING_DATA_CLASS(Op, cls)`;
// `GET_TILING_DATA_WITH_STRUCT(cls, var, tiling)` for a class registered per key, seen here because
// `ascx emulator build` force-includes the op_host tiling headers); `TILING_KEY_IS(k)` compares
// with the key of the launch (`ICPU_SET_TILING_KEY`, or the op driver's `SetTilingKey`).
// `DTYPE_X` / `ORIG_DTYPE_X` for an input or output `x` are defined by the build from the
// OpDef's first data type (`-DDTYPE_X=half -DORIG_DTYPE_X=DT_FLOAT16`).
#pragma once
#include <cstdint>
#include <cstring>

#include "ge_types.h"

namespace ascx_emu {
inline uint64_t& tiling_key() {
    static uint64_t k = 0;
    return k;
}
inline void tiling_load(void* dst, size_t bytes, const void* tiling) {
    if (tiling == nullptr) {
        std::fprintf(stderr, "ascx-emu: error: GET_TILING_DATA: the kernel got no tiling buffer (nullptr)\n");
        std::_Exit(ASCX_EMU_ERROR_EXIT);
    }
    std::memcpy(dst, tiling, bytes);
}
inline uint8_t*& sys_workspace() {
    static uint8_t* p = nullptr;
    return p;
}
}  // namespace ascx_emu

#define GET_TILING_DATA(var, tiling) \
    decltype(::optiling::ascx_emu_registered_tiling(::ascx_emu::default_tiling_tag{})) var; \
    ::ascx_emu::tiling_load(&var, sizeof(var), (tiling))
// The kernel names a keyed class without its namespace (as on the device): optiling is in scope.
namespace optiling {}
#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) \
    using namespace ::optiling;                        \
    type var;                                          \
    ::ascx_emu::tiling_load(&var, sizeof(var), (tiling))
#define TILING_KEY_IS(k) (::ascx_emu::tiling_key() == static_cast<uint64_t>(k))

namespace AscendC {
// The system workspace the high-level APIs use; the emulated ones need none, so the user
// workspace starts at the workspace base (the host's GetLibApiWorkSpaceSize() is 0).
inline void SetSysWorkspace(GM_ADDR workspace) { ::ascx_emu::sys_workspace() = workspace; }
inline GM_ADDR GetSysWorkSpacePtr() { return ::ascx_emu::sys_workspace(); }
}  // namespace AscendC
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace; }
