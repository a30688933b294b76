// Host program of layernorm_custom: tiling from GetLayerNormNDTilingInfo, one block.
#include <cstring>

#include "data_utils.h"
#include "tikicpulib.h"
#include "tiling/tiling_api.h"

struct LayernormCustomTilingData {
    AscendC::LayerNormTiling layernormTilingData;
    float epsilon;
};
extern "C" __global__ __aicore__ void layernorm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean, GM_ADDR var,
                                                       GM_ADDR tiling);

int32_t main() {
    const uint32_t b = 2, s = 8, h = 32;
    LayernormCustomTilingData hostTiling{};
    hostTiling.epsilon = 1e-5f;
    ge::Shape shape({b, s, h});
    uint32_t maxTmp = 0, minTmp = 0;
    AscendC::GetLayerNormMaxMinTmpSize(shape, sizeof(float), false, maxTmp, minTmp);
    AscendC::GetLayerNormNDTilingInfo(shape, minTmp, sizeof(float), false, hostTiling.layernormTilingData);
    const size_t xBytes = b * s * h * sizeof(float), hBytes = h * sizeof(float), rBytes = b * s * sizeof(float);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* gamma = (uint8_t*)AscendC::GmAlloc(hBytes);
    uint8_t* beta = (uint8_t*)AscendC::GmAlloc(hBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* mean = (uint8_t*)AscendC::GmAlloc(rBytes);
    uint8_t* var = (uint8_t*)AscendC::GmAlloc(rBytes);
    uint8_t* tiling = (uint8_t*)AscendC::GmAlloc(sizeof(hostTiling));
    std::memcpy(tiling, &hostTiling, sizeof(hostTiling));
    if (!ReadFile("./input/input_x.bin", xBytes, x, xBytes) || !ReadFile("./input/input_gamma.bin", hBytes, gamma, hBytes) ||
        !ReadFile("./input/input_beta.bin", hBytes, beta, hBytes))
        return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(layernorm_custom, 1, x, gamma, beta, y, mean, var, tiling);
    WriteFile("./output/output_y.bin", y, xBytes);
    WriteFile("./output/output_mean.bin", mean, rBytes);
    WriteFile("./output/output_var.bin", var, rBytes);
    for (uint8_t* p : {x, gamma, beta, y, mean, var, tiling}) AscendC::GmFree((void*)p);
    return 0;
}
