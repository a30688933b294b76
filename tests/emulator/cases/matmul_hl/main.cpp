// Host of the high-level Matmul case, in the public CPU-debug style: the tiling comes from
// matmul_tiling::MultiCoreMatmulTiling on the platform's cores (SetDim), saved to a buffer the
// kernel copies; reads input/a.bin, b.bin, bias.bin; writes output/c.bin (IterateAll) and
// output/c_iter.bin (Iterate + GetTensorC), then without SetKernelMode (the build infers MIX)
// output/c_mix.bin (AIV clients, half as many blocks) and output/c_cube.bin (ASCENDC_CUBE_ONLY).
// `./k M N K DIM`.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "data_utils.h"
#include "tikicpulib.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

extern "C" __global__ __aicore__ void matmul_hl_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling);
extern "C" __global__ __aicore__ void matmul_hl_mix_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                                                           GM_ADDR tiling);
extern "C" __global__ __aicore__ void matmul_hl_cube_only_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                                 GM_ADDR workspace, GM_ADDR tiling);
extern "C" __global__ __aicore__ void matmul_hl_iter_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                                                            GM_ADDR tiling);

int32_t main(int32_t argc, char *argv[])
{
    const int32_t M = argc > 1 ? std::atoi(argv[1]) : 200, N = argc > 2 ? std::atoi(argv[2]) : 96;
    const int32_t K = argc > 3 ? std::atoi(argv[3]) : 80, dim = argc > 4 ? std::atoi(argv[4]) : 4;
    auto *platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MultiCoreMatmulTiling api(*platform);
    api.SetDim(dim);
    api.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetShape(M, N, K);
    api.SetOrgShape(M, N, K);
    api.SetBias(true);
    api.SetBufferSpace(-1, -1, -1);
    optiling::TCubeTiling tilingData;
    if (api.GetTiling(tilingData) == -1) {
        std::printf("GetTiling failed\n");
        return 1;
    }
    std::printf("tiling: usedCoreNum %d singleCore %d x %d x %d base %d x %d x %d\n", tilingData.usedCoreNum, tilingData.singleCoreM,
                tilingData.singleCoreN, tilingData.singleCoreK, tilingData.baseM, tilingData.baseN, tilingData.baseK);
    const size_t aBytes = size_t(M) * K * 2, bBytes = size_t(K) * N * 2, biasBytes = size_t(N) * 4, cBytes = size_t(M) * N * 4;
    uint8_t *a = AscendC::GmAlloc(aBytes), *b = AscendC::GmAlloc(bBytes), *bias = AscendC::GmAlloc(biasBytes);
    uint8_t *c = AscendC::GmAlloc(cBytes), *c2 = AscendC::GmAlloc(cBytes), *ws = AscendC::GmAlloc(1024);
    uint8_t *c3 = AscendC::GmAlloc(cBytes), *c4 = AscendC::GmAlloc(cBytes);
    uint8_t *tiling = AscendC::GmAlloc(tilingData.GetDataSize());
    tilingData.SaveToBuffer(tiling, tilingData.GetDataSize());
    ReadFile("./input/a.bin", aBytes, a, aBytes);
    ReadFile("./input/b.bin", bBytes, b, bBytes);
    ReadFile("./input/bias.bin", biasBytes, bias, biasBytes);
    ICPU_RUN_KF(matmul_hl_mix_custom, (tilingData.usedCoreNum + 1) / 2, a, b, bias, c3, ws, tiling);
    ICPU_RUN_KF(matmul_hl_cube_only_custom, tilingData.usedCoreNum, a, b, bias, c4, ws, tiling);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(matmul_hl_custom, tilingData.usedCoreNum, a, b, bias, c, ws, tiling);
    ICPU_RUN_KF(matmul_hl_iter_custom, tilingData.usedCoreNum, a, b, bias, c2, ws, tiling);
    WriteFile("./output/c.bin", c, cBytes);
    WriteFile("./output/c_iter.bin", c2, cBytes);
    WriteFile("./output/c_mix.bin", c3, cBytes);
    WriteFile("./output/c_cube.bin", c4, cBytes);
    for (uint8_t *p : {a, b, bias, c, c2, c3, c4, ws, tiling}) AscendC::GmFree(p);
    return 0;
}
