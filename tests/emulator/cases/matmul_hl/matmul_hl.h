// Shared by the high-level Matmul kernels of this case: the tiling copy and one core's operands
// (its [singleCoreM, singleCoreN] part of C, tails via SetTail), in the public samples' style.
#pragma once
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace matmul;  // alone, as the public samples write it: AscendC's names come with it

__aicore__ inline void CopyTiling(TCubeTiling *tiling, GM_ADDR tilingGM)
{
    uint32_t *dst = reinterpret_cast<uint32_t *>(tiling);
    const __gm__ uint32_t *src = reinterpret_cast<__gm__ uint32_t *>(tilingGM);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); ++i) dst[i] = src[i];
}

using MatmulHl = Matmul<MatmulType<TPosition::GM, ::CubeFormat::ND, half, false, LayoutMode::NONE, false>,  // global CubeFormat; layout, IBShare
                        MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, float>,
                        MatmulType<TPosition::GM, CubeFormat::ND, float>>;

// Sets A, B, bias and the tail of core `idx`; returns the GM view of its block of C.
__aicore__ inline GlobalTensor<float> SetOperands(MatmulHl &mm, const TCubeTiling &tiling, int32_t idx, GM_ADDR a, GM_ADDR b,
                                                  GM_ADDR bias, GM_ADDR c)
{
    const int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    const int32_t mIdx = idx % mBlocks, nIdx = idx / mBlocks;
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
    return cGm[mIdx * tiling.singleCoreM * tiling.N + nIdx * tiling.singleCoreN];
}
