// ascx emulator: stand-in for the kernel-side tiling struct header: `TCubeTiling` (the Matmul
// tiling, fields as the public TCubeTiling page lists them, each an int32) here; SoftMaxTiling
// and LayerNormTiling are in ascx_emu/highlevel.h, PadTiling / UnPadTiling in ascx_emu/pad.h
// (at global scope too, as the generated header gives them). The host's `optiling::TCubeTiling` is the same
// struct (SaveToBuffer / GetDataSize and set_/get_ accessors as a tiling-data class), so a tiling
// filled by matmul_tiling::...::GetTiling and copied to the kernel word by word arrives intact.
// Clean-room (Apache-2.0).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../kernel_operator.h"

#define ASCX_EMU_TCUBE_FIELDS(X)                                                                                          \
    X(usedCoreNum) X(M) X(N) X(Ka) X(Kb) X(singleCoreM) X(singleCoreN) X(singleCoreK) X(baseM) X(baseN) X(baseK)           \
    X(depthA1) X(depthB1) X(stepM) X(stepN) X(isBias) X(transLength) X(iterateOrder) X(shareMode) X(shareL1Size)          \
    X(shareL0CSize) X(shareUbSize) X(batchM) X(batchN) X(singleBatchM) X(singleBatchN) X(stepKa) X(stepKb)                 \
    X(depthAL1CacheUB) X(depthBL1CacheUB) X(dbL0A) X(dbL0B) X(dbL0C) X(reserved)

struct TCubeTiling {
#define ASCX_EMU_FIELD(f) int32_t f = 0;
    ASCX_EMU_TCUBE_FIELDS(ASCX_EMU_FIELD)
#undef ASCX_EMU_FIELD
#define ASCX_EMU_ACCESSORS(f) \
    void set_##f(int32_t v) { f = v; } \
    int32_t get_##f() const { return f; }
    ASCX_EMU_TCUBE_FIELDS(ASCX_EMU_ACCESSORS)
#undef ASCX_EMU_ACCESSORS
    void SaveToBuffer(void* buf, size_t capacity) const {
        std::memcpy(buf, this, capacity < sizeof(*this) ? capacity : sizeof(*this));
    }
    size_t GetDataSize() const { return sizeof(*this); }
};
namespace optiling {
using TCubeTiling = ::TCubeTiling;
}  // namespace optiling
namespace AscendC {
namespace tiling {
using TCubeTiling = ::TCubeTiling;
}  // namespace tiling
}  // namespace AscendC
