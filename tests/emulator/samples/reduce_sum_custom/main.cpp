// Host program of reduce_sum_custom (4 blocks of 8 rows).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void reduce_sum_custom(GM_ADDR x, GM_ADDR y);

int32_t main() {
    const size_t inBytes = 32 * 200 * sizeof(float), outBytes = 32 * sizeof(float);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(inBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(outBytes);
    if (!ReadFile("./input/input_x.bin", inBytes, x, inBytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(reduce_sum_custom, 4, x, y);
    WriteFile("./output/output_y.bin", y, outBytes);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    return 0;
}
