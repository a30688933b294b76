// Transposes each 16 x 16 half tile of x (4 tiles, one per block) with Transpose.
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void transpose_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(inQ, 1, 256 * sizeof(half));
    pipe.InitBuffer(outQ, 1, 256 * sizeof(half));
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + GetBlockIdx() * 256, 256);
    yGm.SetGlobalBuffer((__gm__ half*)y + GetBlockIdx() * 256, 256);
    LocalTensor<half> in = inQ.AllocTensor<half>();
    DataCopy(in, xGm, 256);
    inQ.EnQue(in);
    in = inQ.DeQue<half>();
    LocalTensor<half> out = outQ.AllocTensor<half>();
    Transpose(out, in);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<half>();
    DataCopy(yGm, out, 256);
    outQ.FreeTensor(out);
}
