// Host program of matmul_custom: 2 AIC blocks.
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c);

int32_t main() {
    const size_t aBytes = 64 * 64 * sizeof(uint16_t), bBytes = 64 * 32 * sizeof(uint16_t), cBytes = 64 * 32 * sizeof(uint16_t);
    uint8_t* a = (uint8_t*)AscendC::GmAlloc(aBytes);
    uint8_t* b = (uint8_t*)AscendC::GmAlloc(bBytes);
    uint8_t* c = (uint8_t*)AscendC::GmAlloc(cBytes);
    if (!ReadFile("./input/input_a.bin", aBytes, a, aBytes) || !ReadFile("./input/input_b.bin", bBytes, b, bBytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(matmul_custom, 2, a, b, c);
    WriteFile("./output/output_c.bin", c, cBytes);
    AscendC::GmFree((void*)a);
    AscendC::GmFree((void*)b);
    AscendC::GmFree((void*)c);
    return 0;
}
