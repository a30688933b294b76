// ascx emulator: stand-in for the host platform header (`tiling/platform/platform_ascendc.h`):
// `platform_ascendc::PlatformAscendC` and `PlatformAscendCManager`, read by host tiling code for
// core counts and on-chip memory sizes, written from the public API reference. Clean-room
// (Apache-2.0). The numbers are the emulator's: the local-memory sizes it was built with
// (ASCX_EMU_<SCOPE>_BYTES, from the target table through `ascx emulator --cflags`) and the core
// counts ASCX_EMU_AIV_CORES / ASCX_EMU_AIC_CORES (default: the target table's default target,
// kept in step by tests/emulator/test_op_project.py).
#pragma once
#include <cstdint>

#include "../../ascx_emu/mem_sizes.h"

#ifndef ASCX_EMU_AIV_CORES
#define ASCX_EMU_AIV_CORES 48
#endif
#ifndef ASCX_EMU_AIC_CORES
#define ASCX_EMU_AIC_CORES 24
#endif

namespace fe {
class PlatFormInfos {};
}  // namespace fe

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };
enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND310P, ASCEND310B, ASCEND910_93, RESERVED_VERSION };

class PlatformAscendC {
public:
    PlatformAscendC() = default;
    explicit PlatformAscendC(const void*) {}
    explicit PlatformAscendC(const fe::PlatFormInfos*) {}
    uint32_t GetCoreNum() const { return ASCX_EMU_AIV_CORES; }  // vector cores: a split chip's AIV count
    uint32_t GetCoreNumAic() const { return ASCX_EMU_AIC_CORES; }
    uint32_t GetCoreNumAiv() const { return ASCX_EMU_AIV_CORES; }
    void GetCoreMemSize(CoreMemType t, uint64_t& size) const {
        switch (t) {
            case CoreMemType::UB: size = ASCX_EMU_UB_BYTES; break;
            case CoreMemType::L1: size = ASCX_EMU_L1_BYTES; break;
            case CoreMemType::L0_A: size = ASCX_EMU_L0A_BYTES; break;
            case CoreMemType::L0_B: size = ASCX_EMU_L0B_BYTES; break;
            case CoreMemType::L0_C: size = ASCX_EMU_L0C_BYTES; break;
            default: size = 0; break;
        }
    }
    SocVersion GetSocVersion() const { return SocVersion::ASCEND910B; }
    // blockDim for a launch of `sliceNum` slices: the slices, at most the cores of the kind used.
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) return sliceNum;
        uint32_t ratio = aivCoreNum / aicCoreNum;
        return ratio ? (sliceNum + ratio - 1) / ratio : sliceNum;
    }
    uint32_t CalcTschNumBlocks(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
        return CalcTschBlockDim(sliceNum, aicCoreNum, aivCoreNum);
    }
    uint32_t GetLibApiWorkSpaceSize() const { return 0; }  // the emulated high-level APIs need no system workspace
};

class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance() {
        static PlatformAscendC p;
        return &p;
    }
    static PlatformAscendC* GetInstance(const char*) { return GetInstance(); }
};
}  // namespace platform_ascendc
