// A kernel that defines ASCENDC_CUBE_ONLY and asks for a mixed launch (as the public bare-mix
// sample): its Matmul runs on the AIC itself (no AIV client), IterateAll to C; the AIV cores
// of the launch have nothing to do.
#define ASCENDC_CUBE_ONLY
#include "matmul_hl.h"

extern "C" __global__ __aicore__ void matmul_hl_cube_only_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                                 GM_ADDR workspace, GM_ADDR tilingGm)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        TCubeTiling tiling;
        CopyTiling(&tiling, tilingGm);
        TPipe pipe;
        MatmulHl mm;
        REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling);
        mm.IterateAll(SetOperands(mm, tiling, GetBlockIdx(), a, b, bias, c));
        mm.End();
    }
}
