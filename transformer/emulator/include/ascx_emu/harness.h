// ascx emulator: the CPU-debug conventions of the public sample host programs.
// Clean-room (Apache-2.0): samples name `KernelMode::AIV_MODE` without `AscendC::`, hide their
// NPU launch behind `#ifndef __CCE_KT_TEST__` (defined in CPU-debug builds; the flags from
// `ascx emulator --cflags` define it too) and check conditions with an ASSERT macro. Kernels
// may use ascendc_assert(cond[, fmt, args...]) (documented debug API).
#pragma once
#include <cstdio>

#include "runtime.h"

#ifndef __CCE_KT_TEST__
#define __CCE_KT_TEST__ 1
#endif

using AscendC::KernelMode;

namespace ascx_emu {
// A failed assertion stops the run like an emulator check (exit 3) with the kernel location.
template <typename... A>
[[noreturn]] inline void assert_failed(const char* api, const char* cond, const char* file, int line, const char* fmt = nullptr, A... args) {
    char msg[1024] = "";
    if (fmt) {
        if constexpr (sizeof...(A) == 0) std::snprintf(msg, sizeof msg, "%s", fmt);
        else std::snprintf(msg, sizeof msg, fmt, args...);
    }
    fail(api, SrcLoc{file, line}, "Assertion `%s' failed. %s", cond, msg);
}
}  // namespace ascx_emu

#ifndef ASSERT
#define ASSERT(cond, ...) \
    do { if (!(cond)) ::ascx_emu::assert_failed("ASSERT", #cond, __FILE__, __LINE__, ##__VA_ARGS__); } while (0)
#endif
#ifndef ascendc_assert
#define ascendc_assert(cond, ...) \
    do { if (!(cond)) ::ascx_emu::assert_failed("ascendc_assert", #cond, __FILE__, __LINE__, ##__VA_ARGS__); } while (0)
#endif

// AscendC::printf / PRINTF (documented debug API): printed directly on the host.
namespace AscendC {
template <typename... A> inline void printf(const char* fmt, A... args) {
    if constexpr (sizeof...(A) == 0) std::fputs(fmt, stdout);
    else std::printf(fmt, args...);
}
}  // namespace AscendC
#ifndef PRINTF
#define PRINTF AscendC::printf
#endif
