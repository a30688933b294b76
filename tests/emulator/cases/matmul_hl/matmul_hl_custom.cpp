// High-level Matmul kernels in the style of the public matmul samples: C = A * B + bias with
// A [M, K] half, B [K, N] half, bias [N] float, C [M, N] float; each block takes its
// [singleCoreM, singleCoreN] part of C (offsets from the tiling, tails via SetTail).
// matmul_hl_custom: IterateAll; matmul_hl_iter_custom: Iterate + GetTensorC.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace matmul;  // alone, as the public samples write it: AscendC's names come with it

__aicore__ inline void CopyTiling(TCubeTiling *tiling, GM_ADDR tilingGM)
{
    uint32_t *dst = reinterpret_cast<uint32_t *>(tiling);
    const __gm__ uint32_t *src = reinterpret_cast<__gm__ uint32_t *>(tilingGM);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); ++i) dst[i] = src[i];
}

template <bool ITERATE>
__aicore__ inline void RunMatmul(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace, GM_ADDR tilingGm)
{
    TCubeTiling tiling;
    CopyTiling(&tiling, tilingGm);
    using AType = MatmulType<TPosition::GM, ::CubeFormat::ND, half>;  // global CubeFormat, as samples name it
    using BType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
    using CType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    Matmul<AType, BType, CType, BiasType> mm;
    TPipe pipe;
    REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling);
    const int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    const int32_t mIdx = GetBlockIdx() % mBlocks, nIdx = GetBlockIdx() / mBlocks;
    const int32_t tailM = tiling.M - mIdx * tiling.singleCoreM, tailN = tiling.N - nIdx * tiling.singleCoreN;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> biasGm, cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(a), tiling.M * tiling.Ka);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(b), tiling.Kb * tiling.N);
    biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(bias), tiling.N);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(c), tiling.M * tiling.N);
    mm.SetTensorA(aGm[mIdx * tiling.singleCoreM * tiling.Ka]);
    mm.SetTensorB(bGm[nIdx * tiling.singleCoreN]);
    mm.SetBias(biasGm[nIdx * tiling.singleCoreN]);
    mm.SetTail(tailM < tiling.singleCoreM ? tailM : tiling.singleCoreM, tailN < tiling.singleCoreN ? tailN : tiling.singleCoreN);
    GlobalTensor<float> cBlock = cGm[mIdx * tiling.singleCoreM * tiling.N + nIdx * tiling.singleCoreN];
    if constexpr (ITERATE) {
        while (mm.Iterate()) mm.GetTensorC(cBlock);
    } else {
        mm.IterateAll(cBlock);
    }
    mm.End();
}

extern "C" __global__ __aicore__ void matmul_hl_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    RunMatmul<false>(a, b, bias, c, workspace, tiling);
}
extern "C" __global__ __aicore__ void matmul_hl_iter_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                                                            GM_ADDR tiling)
{
    RunMatmul<true>(a, b, bias, c, workspace, tiling);
}
