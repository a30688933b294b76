// Host program of axpy_custom: y is both input and output.
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void axpy_custom(GM_ADDR x, GM_ADDR y);

int32_t main() {
    const size_t xBytes = 2048 * sizeof(uint16_t), yBytes = 2048 * sizeof(float);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(yBytes);
    if (!ReadFile("./input/input_x.bin", xBytes, x, xBytes) || !ReadFile("./input/input_y.bin", yBytes, y, yBytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(axpy_custom, 4, x, y);
    WriteFile("./output/output_y.bin", y, yBytes);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    return 0;
}
