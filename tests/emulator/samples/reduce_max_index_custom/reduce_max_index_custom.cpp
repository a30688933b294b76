// Arg-max of each of 4 rows of 256 halves with the mask/repeat form of ReduceMax (calIndex):
// 2 repeats of 128, continuous mask 128. Output per row: (max value, index) as two halves,
// the index bits stored in the second half (as the API returns it).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void reduce_max_index_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> work;
    pipe.InitBuffer(inQ, 1, 4 * 256 * sizeof(half));
    pipe.InitBuffer(outQ, 1, 4 * 16 * sizeof(half));
    pipe.InitBuffer(work, 1024);
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, 4 * 256);
    yGm.SetGlobalBuffer((__gm__ half*)y, 4 * 16);
    LocalTensor<half> in = inQ.AllocTensor<half>();
    DataCopy(in, xGm, 4 * 256);
    inQ.EnQue(in);
    in = inQ.DeQue<half>();
    LocalTensor<half> out = outQ.AllocTensor<half>();
    Duplicate(out, half(0.0f), 4 * 16);
    for (int r = 0; r < 4; ++r) ReduceMax(out[r * 16], in[r * 256], work.Get<half>(), 128, 2, 8, true);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<half>();
    DataCopy(yGm, out, 4 * 16);
    outQ.FreeTensor(out);
}
