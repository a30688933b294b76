// De-interleave complex pairs: x holds 512 floats (re, im, re, im, ...); GatherMask with the
// built-in patterns 1 (even) and 2 (odd) writes the 256 real parts then the 256 imaginary parts.
// 2 blocks of 256 floats each.
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void gather_mask_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(inQ, 1, 256 * sizeof(float));
    pipe.InitBuffer(outQ, 1, 256 * sizeof(float));
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * 256, 256);
    yGm.SetGlobalBuffer((__gm__ float*)y, 512);
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, xGm, 256);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<float> out = outQ.AllocTensor<float>();
    uint64_t kept = 0;
    GatherMask(out, in, 1, false, 0, {1, 4, 8, 0}, kept);          // 4 repeats of 64: 128 reals
    GatherMask(out[kept], in, 2, false, 0, {1, 4, 8, 0}, kept);    // 128 imaginary parts
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<float>();
    DataCopy(yGm[GetBlockIdx() * 128], out, 128);
    DataCopy(yGm[256 + GetBlockIdx() * 128], out[128], 128);
    outQ.FreeTensor(out);
}
