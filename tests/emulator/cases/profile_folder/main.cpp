// Host of a two-kernel sample folder (main.cpp + scale_custom.cpp + bias_custom.cpp): runs
// z = 2 * x + 1 as two launches and checks its own result, as public sample hosts do, so a
// profile that skipped the arithmetic would see it fail ("mismatch", exit 1).
#include <cstdint>
#include <cstdio>

#include "tikicpulib.h"

extern "C" __global__ __aicore__ void scale_custom(GM_ADDR x, GM_ADDR y, uint32_t unusedLength);
extern "C" __global__ __aicore__ void bias_custom(GM_ADDR y, GM_ADDR z);

int32_t main()
{
    constexpr uint32_t blocks = 4, n = 4 * 1024;
    const size_t bytes = n * sizeof(float);
    float *x = reinterpret_cast<float *>(AscendC::GmAlloc(bytes));
    float *y = reinterpret_cast<float *>(AscendC::GmAlloc(bytes));
    float *z = reinterpret_cast<float *>(AscendC::GmAlloc(bytes));
    for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) - 48.0f;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(scale_custom, blocks, reinterpret_cast<GM_ADDR>(x), reinterpret_cast<GM_ADDR>(y), n);
    ICPU_RUN_KF(bias_custom, blocks, reinterpret_cast<GM_ADDR>(y), reinterpret_cast<GM_ADDR>(z));
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; ++i) bad += z[i] != 2.0f * x[i] + 1.0f;
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
    if (bad != 0) {
        std::printf("mismatch: %u of %u elements\n", bad, n);
        return 1;
    }
    std::printf("result ok\n");
    return 0;
}
