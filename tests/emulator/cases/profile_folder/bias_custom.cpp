// z = y + 1 over 4 blocks of 1024 floats, in the public samples' TQue style.
#include "kernel_operator.h"

using namespace AscendC;

namespace {
constexpr int32_t TILE = 1024;
}

extern "C" __global__ __aicore__ void bias_custom(GM_ADDR y, GM_ADDR z)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    GlobalTensor<float> yGm, zGm;
    yGm.SetGlobalBuffer((__gm__ float *)y + GetBlockIdx() * TILE, TILE);
    zGm.SetGlobalBuffer((__gm__ float *)z + GetBlockIdx() * TILE, TILE);
    pipe.InitBuffer(inQ, 1, TILE * sizeof(float));
    pipe.InitBuffer(outQ, 1, TILE * sizeof(float));
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, yGm, TILE);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<float> out = outQ.AllocTensor<float>();
    Adds(out, in, 1.0f, TILE);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<float>();
    DataCopy(zGm, out, TILE);
    outQ.FreeTensor(out);
}
