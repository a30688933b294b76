// Host program of gather_mask_custom (2 blocks).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void gather_mask_custom(GM_ADDR x, GM_ADDR y);

int32_t main() {
    const size_t inBytes = 512 * sizeof(float), outBytes = 512 * sizeof(float);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(inBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(outBytes);
    if (!ReadFile("./input/input_x.bin", inBytes, x, inBytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(gather_mask_custom, 2, x, y);
    WriteFile("./output/output_y.bin", y, outBytes);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    return 0;
}
