// Integer bit manipulation on int16: y = ((x >> 2) & 0x0FF0) | ~(x << 3). 2 blocks of 512.
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void bitwise_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> a, b, m;
    pipe.InitBuffer(inQ, 1, 512 * sizeof(int16_t));
    pipe.InitBuffer(outQ, 1, 512 * sizeof(int16_t));
    pipe.InitBuffer(a, 512 * sizeof(int16_t));
    pipe.InitBuffer(b, 512 * sizeof(int16_t));
    pipe.InitBuffer(m, 512 * sizeof(int16_t));
    GlobalTensor<int16_t> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ int16_t*)x + GetBlockIdx() * 512, 512);
    yGm.SetGlobalBuffer((__gm__ int16_t*)y + GetBlockIdx() * 512, 512);
    LocalTensor<int16_t> in = inQ.AllocTensor<int16_t>();
    DataCopy(in, xGm, 512);
    inQ.EnQue(in);
    in = inQ.DeQue<int16_t>();
    LocalTensor<int16_t> ta = a.Get<int16_t>(), tb = b.Get<int16_t>(), tm = m.Get<int16_t>();
    ShiftRight(ta, in, static_cast<int16_t>(2), 512);
    Duplicate(tm, static_cast<int16_t>(0x0FF0), 512);
    And(ta, ta, tm, 512);
    ShiftLeft(tb, in, static_cast<int16_t>(3), 512);
    Not(tb, tb, 512);
    LocalTensor<int16_t> out = outQ.AllocTensor<int16_t>();
    Or(out, ta, tb, 512);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<int16_t>();
    DataCopy(yGm, out, 512);
    outQ.FreeTensor(out);
}
