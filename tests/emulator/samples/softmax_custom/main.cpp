// Host program of softmax_custom: fills the tiling with the SoftMax tiling API, runs 4 blocks.
#include <cstring>

#include "data_utils.h"
#include "tikicpulib.h"
#include "tiling/tiling_api.h"

struct SoftmaxCustomTilingData {
    uint32_t rowsPerBlock;
    uint32_t cols;
    AscendC::SoftMaxTiling softmaxTilingData;
};
extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling);

int32_t main() {
    const uint32_t blockDim = 4, rows = 64, cols = 64;
    const size_t bytes = rows * cols * sizeof(float);
    SoftmaxCustomTilingData hostTiling{rows / blockDim, cols, {}};
    ge::Shape tileShape({rows / blockDim, cols});
    uint32_t minTmp = AscendC::GetSoftMaxMinTmpSize(tileShape, sizeof(float), false);
    AscendC::SoftMaxTilingFunc(tileShape, sizeof(float), minTmp, hostTiling.softmaxTilingData);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* tiling = (uint8_t*)AscendC::GmAlloc(sizeof(hostTiling));
    std::memcpy(tiling, &hostTiling, sizeof(hostTiling));
    if (!ReadFile("./input/input_x.bin", bytes, x, bytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(softmax_custom, blockDim, x, y, tiling);
    WriteFile("./output/output_y.bin", y, bytes);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    AscendC::GmFree((void*)tiling);
    return 0;
}
