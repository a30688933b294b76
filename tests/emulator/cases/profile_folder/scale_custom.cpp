// y = 2 * x over 4 blocks of 1024 floats (one tile each), in the public samples' TQue style.
// `unusedLength` is an unused parameter on purpose: public samples warn like this under
// -Wextra, and `ascx profile` must show the warning without failing on it.
#include "kernel_operator.h"

using namespace AscendC;

namespace {
constexpr int32_t TILE = 1024;
}

extern "C" __global__ __aicore__ void scale_custom(GM_ADDR x, GM_ADDR y, uint32_t unusedLength)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float *)x + GetBlockIdx() * TILE, TILE);
    yGm.SetGlobalBuffer((__gm__ float *)y + GetBlockIdx() * TILE, TILE);
    pipe.InitBuffer(inQ, 1, TILE * sizeof(float));
    pipe.InitBuffer(outQ, 1, TILE * sizeof(float));
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, xGm, TILE);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<float> out = outQ.AllocTensor<float>();
    Muls(out, in, 2.0f, TILE);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<float>();
    DataCopy(yGm, out, TILE);
    outQ.FreeTensor(out);
}
