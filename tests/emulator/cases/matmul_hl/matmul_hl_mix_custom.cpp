// A mixed kernel launched without SetKernelMode, as the public matmul + vector samples are:
// the build reads the Matmul API and a vector queue in it and launches 1 AIC + 2 AIV per
// block. Each AIV core is one matmul client (GetBlockIdx() < usedCoreNum): an asynchronous
// Iterate<false>() and one GetTensorC<false>() per [baseM, baseN] block (in iterateOrder 0,
// along M first) into a VECIN queue, copied to its place in C by DataCopy. The queue is
// reserved before REGIST_MATMUL_OBJ, where the AIC's kernel returns.
#include "matmul_hl.h"

extern "C" __global__ __aicore__ void matmul_hl_mix_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                                                           GM_ADDR tilingGm)
{
    TCubeTiling tiling;
    CopyTiling(&tiling, tilingGm);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> cQue;
    pipe.InitBuffer(cQue, 1, tiling.baseM * tiling.baseN * sizeof(float));
    MatmulHl mm;
    REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling);
    const int32_t idx = GetBlockIdx();
    if (idx >= tiling.usedCoreNum) return;
    GlobalTensor<float> cBlock = SetOperands(mm, tiling, idx, a, b, bias, c);
    const int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    const int32_t sm = tiling.M - (idx % mBlocks) * tiling.singleCoreM, sn = tiling.N - (idx / mBlocks) * tiling.singleCoreN;
    const int32_t rows = sm < tiling.singleCoreM ? sm : tiling.singleCoreM, cols = sn < tiling.singleCoreN ? sn : tiling.singleCoreN;
    const int32_t mb = (rows + tiling.baseM - 1) / tiling.baseM, nb = (cols + tiling.baseN - 1) / tiling.baseN;
    mm.template Iterate<false>();
    for (int32_t i = 0; i < mb * nb; ++i) {
        const int32_t mi = i % mb, ni = i / mb;
        const int32_t r = rows - mi * tiling.baseM < tiling.baseM ? rows - mi * tiling.baseM : tiling.baseM;
        const int32_t w = cols - ni * tiling.baseN < tiling.baseN ? cols - ni * tiling.baseN : tiling.baseN;
        LocalTensor<float> blk = cQue.AllocTensor<float>();
        mm.template GetTensorC<false>(blk, false, true);
        cQue.EnQue(blk);
        blk = cQue.DeQue<float>();
        DataCopyParams p{static_cast<uint16_t>(r), static_cast<uint16_t>(w * sizeof(float) / 32),
                         static_cast<uint16_t>((tiling.baseN - w) * sizeof(float) / 32),
                         static_cast<uint16_t>((tiling.N - w) * sizeof(float) / 32)};
        DataCopy(cBlock[mi * tiling.baseM * tiling.N + ni * tiling.baseN], blk, p);
        cQue.FreeTensor(blk);
    }
    mm.End();
}
