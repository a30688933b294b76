// LayerNorm of x [2, 8, 32] (float) over the last axis with the LayerNorm high-level API:
// outputs y, the row means and the row variances.
#include "kernel_operator.h"

struct LayernormCustomTilingData {
    AscendC::LayerNormTiling layernormTilingData;
    float epsilon;
};

extern "C" __global__ __aicore__ void layernorm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR mean, GM_ADDR var,
                                                       GM_ADDR tilingGm) {
    LayernormCustomTilingData t;
    auto src = reinterpret_cast<__gm__ uint8_t*>(tilingGm);
    for (size_t i = 0; i < sizeof(t); i++) reinterpret_cast<uint8_t*>(&t)[i] = src[i];
    const uint32_t n = t.layernormTilingData.bLength * t.layernormTilingData.sLength * t.layernormTilingData.hLength;
    const uint32_t rows = t.layernormTilingData.bLength * t.layernormTilingData.sLength, h = t.layernormTilingData.hLength;
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> xQ, gQ, bQ;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> yQ, mQ, vQ;
    pipe.InitBuffer(xQ, 1, n * sizeof(float));
    pipe.InitBuffer(gQ, 1, h * sizeof(float));
    pipe.InitBuffer(bQ, 1, h * sizeof(float));
    pipe.InitBuffer(yQ, 1, n * sizeof(float));
    pipe.InitBuffer(mQ, 1, rows * sizeof(float));
    pipe.InitBuffer(vQ, 1, rows * sizeof(float));
    AscendC::GlobalTensor<float> xGm, gGm, bGm, yGm, mGm, vGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, n);
    gGm.SetGlobalBuffer((__gm__ float*)gamma, h);
    bGm.SetGlobalBuffer((__gm__ float*)beta, h);
    yGm.SetGlobalBuffer((__gm__ float*)y, n);
    mGm.SetGlobalBuffer((__gm__ float*)mean, rows);
    vGm.SetGlobalBuffer((__gm__ float*)var, rows);
    auto xl = xQ.AllocTensor<float>();
    auto gl = gQ.AllocTensor<float>();
    auto bl = bQ.AllocTensor<float>();
    AscendC::DataCopy(xl, xGm, n);
    AscendC::DataCopy(gl, gGm, h);
    AscendC::DataCopy(bl, bGm, h);
    xQ.EnQue(xl);
    gQ.EnQue(gl);
    bQ.EnQue(bl);
    xl = xQ.DeQue<float>();
    gl = gQ.DeQue<float>();
    bl = bQ.DeQue<float>();
    auto yl = yQ.AllocTensor<float>();
    auto ml = mQ.AllocTensor<float>();
    auto vl = vQ.AllocTensor<float>();
    AscendC::LayerNorm<float, false>(yl, ml, vl, xl, gl, bl, t.epsilon, t.layernormTilingData);
    yQ.EnQue(yl);
    mQ.EnQue(ml);
    vQ.EnQue(vl);
    xQ.FreeTensor(xl);
    gQ.FreeTensor(gl);
    bQ.FreeTensor(bl);
    yl = yQ.DeQue<float>();
    ml = mQ.DeQue<float>();
    vl = vQ.DeQue<float>();
    AscendC::DataCopy(yGm, yl, n);
    AscendC::DataCopyPad(mGm, ml, AscendC::DataCopyExtParams(1, rows * sizeof(float), 0, 0, 0));
    AscendC::DataCopyPad(vGm, vl, AscendC::DataCopyExtParams(1, rows * sizeof(float), 0, 0, 0));
    yQ.FreeTensor(yl);
    mQ.FreeTensor(ml);
    vQ.FreeTensor(vl);
}
