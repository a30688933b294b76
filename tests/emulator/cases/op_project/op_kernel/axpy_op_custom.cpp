// Kernel of AxpyOpCustom: z = x + alpha * y over blockDim blocks, two tiles per block, in the
// public op-project style (GET_TILING_DATA, TILING_KEY_IS, DTYPE_X, workspace and tiling last).
#include "kernel_operator.h"

using namespace AscendC;

class KernelAxpy {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total, uint32_t tile, float alpha)
    {
        const uint32_t per_block = total / GetBlockNum();
        tile_ = tile;
        alpha_ = alpha;
        xGm.SetGlobalBuffer((__gm__ DTYPE_X *)x + GetBlockIdx() * per_block, per_block);
        yGm.SetGlobalBuffer((__gm__ DTYPE_Y *)y + GetBlockIdx() * per_block, per_block);
        zGm.SetGlobalBuffer((__gm__ DTYPE_Z *)z + GetBlockIdx() * per_block, per_block);
        pipe.InitBuffer(inX, 1, tile * sizeof(DTYPE_X));
        pipe.InitBuffer(inY, 1, tile * sizeof(DTYPE_Y));
        pipe.InitBuffer(outZ, 1, tile * sizeof(DTYPE_Z));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t t = 0; t < 2; ++t) {
            LocalTensor<DTYPE_X> x = inX.AllocTensor<DTYPE_X>();
            LocalTensor<DTYPE_Y> y = inY.AllocTensor<DTYPE_Y>();
            DataCopy(x, xGm[t * tile_], tile_);
            DataCopy(y, yGm[t * tile_], tile_);
            inX.EnQue(x);
            inY.EnQue(y);
            x = inX.DeQue<DTYPE_X>();
            y = inY.DeQue<DTYPE_Y>();
            LocalTensor<DTYPE_Z> z = outZ.AllocTensor<DTYPE_Z>();
            Muls(z, y, static_cast<DTYPE_Z>(alpha_), tile_);
            Add(z, z, x, tile_);
            outZ.EnQue(z);
            inX.FreeTensor(x);
            inY.FreeTensor(y);
            z = outZ.DeQue<DTYPE_Z>();
            DataCopy(zGm[t * tile_], z, tile_);
            outZ.FreeTensor(z);
        }
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inX, inY;
    TQue<QuePosition::VECOUT, 1> outZ;
    GlobalTensor<DTYPE_X> xGm;
    GlobalTensor<DTYPE_Y> yGm;
    GlobalTensor<DTYPE_Z> zGm;
    uint32_t tile_ = 0;
    float alpha_ = 0;
};

extern "C" __global__ __aicore__ void axpy_op_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    static_assert(ORIG_DTYPE_X == DT_FLOAT16, "DTYPE_X comes from the OpDef");
    SetSysWorkspace(workspace);
    GM_ADDR usr = GetUserWorkspace(workspace);
    if (usr == nullptr) return;
    if (TILING_KEY_IS(1)) {
        GET_TILING_DATA(tilingData, tiling);
        if (tilingData.pad[0] != 7 || tilingData.pad[1] != 9) return;
        KernelAxpy op;
        op.Init(x, y, z, tilingData.totalLength, tilingData.tileLength, tilingData.alpha);
        op.Process();
    } else if (TILING_KEY_IS(2)) {  // the class registered for key 2: block 0 writes z[0] = fill
        GET_TILING_DATA_WITH_STRUCT(AxpyOpKey2TilingData, key2, tiling);
        GlobalTensor<DTYPE_Z> zGm;
        zGm.SetGlobalBuffer((__gm__ DTYPE_Z *)z, 16);
        if (GetBlockIdx() == 0) zGm.SetValue(0, static_cast<DTYPE_Z>(key2.fill));
    }
}
