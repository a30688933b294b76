// Two-level reduction of 1024 floats: BlockReduceSum turns each 32 B block (8 floats) into one
// value (16 repeats -> 128 partial sums), PairReduceSum halves that (2 repeats -> 64), and
// BlockReduceMax gives the max of each block of the input. Outputs: 64 pair sums, 128 maxima.
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void block_reduce_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> part;
    pipe.InitBuffer(inQ, 1, 1024 * sizeof(float));
    pipe.InitBuffer(outQ, 1, 192 * sizeof(float));
    pipe.InitBuffer(part, 128 * sizeof(float));
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 1024);
    yGm.SetGlobalBuffer((__gm__ float*)y, 192);
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, xGm, 1024);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<float> p = part.Get<float>();
    LocalTensor<float> out = outQ.AllocTensor<float>();
    BlockReduceSum(p, in, 16, 64, 1, 1, 8);
    PairReduceSum(out, p, 2, 64, 1, 1, 8);
    BlockReduceMax(out[64], in, 16, 64, 1, 1, 8);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<float>();
    DataCopy(yGm, out, 192);
    outQ.FreeTensor(out);
}
