// Clipped leaky step: y = x if x >= 0.25 else -1 (CompareScalar GE + Select with a scalar),
// then z = max(y, x * 0.5) on the repeat form of Compare/Select with tensors. float, 4 blocks.
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t PER_BLOCK = 256;

extern "C" __global__ __aicore__ void compare_select_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> maskBuf, tmpBuf, halfBuf;
    pipe.InitBuffer(inQ, 1, PER_BLOCK * sizeof(float));
    pipe.InitBuffer(outQ, 1, PER_BLOCK * sizeof(float));
    pipe.InitBuffer(maskBuf, PER_BLOCK / 8);
    pipe.InitBuffer(tmpBuf, PER_BLOCK * sizeof(float));
    pipe.InitBuffer(halfBuf, PER_BLOCK * sizeof(float));
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * PER_BLOCK, PER_BLOCK);
    yGm.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * PER_BLOCK, PER_BLOCK);
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, xGm, PER_BLOCK);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
    LocalTensor<float> step = tmpBuf.Get<float>(), halfX = halfBuf.Get<float>();
    CompareScalar(mask, in, 0.25f, CMPMODE::GE, PER_BLOCK);
    Select(step, mask, in, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, PER_BLOCK);
    Muls(halfX, in, 0.5f, PER_BLOCK);
    Compare(mask, step, halfX, CMPMODE::GT, 64, PER_BLOCK / 64, BinaryRepeatParams());
    LocalTensor<float> out = outQ.AllocTensor<float>();
    Select(out, mask, step, halfX, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64, PER_BLOCK / 64, BinaryRepeatParams());
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<float>();
    DataCopy(yGm, out, PER_BLOCK);
    outQ.FreeTensor(out);
}
