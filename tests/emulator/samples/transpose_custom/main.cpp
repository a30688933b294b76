// Host program of transpose_custom (4 blocks, one tile each).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void transpose_custom(GM_ADDR x, GM_ADDR y);

int32_t main() {
    const size_t inBytes = 4 * 256 * sizeof(uint16_t), outBytes = 4 * 256 * sizeof(uint16_t);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(inBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(outBytes);
    if (!ReadFile("./input/input_x.bin", inBytes, x, inBytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(transpose_custom, 4, x, y);
    WriteFile("./output/output_y.bin", y, outBytes);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    return 0;
}
