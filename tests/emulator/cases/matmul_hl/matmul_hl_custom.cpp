// High-level Matmul kernels in the style of the public matmul samples: C = A * B + bias with
// A [M, K] half, B [K, N] half, bias [N] float, C [M, N] float; each block takes its
// [singleCoreM, singleCoreN] part of C (offsets from the tiling, tails via SetTail).
// matmul_hl_custom: IterateAll; matmul_hl_iter_custom: Iterate + GetTensorC.
#include "matmul_hl.h"

template <bool ITERATE>
__aicore__ inline void RunMatmul(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace, GM_ADDR tilingGm)
{
    TCubeTiling tiling;
    CopyTiling(&tiling, tilingGm);
    MatmulHl mm;
    TPipe pipe;
    REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling);
    GlobalTensor<float> cBlock = SetOperands(mm, tiling, GetBlockIdx(), a, b, bias, c);
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
