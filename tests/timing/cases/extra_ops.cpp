// Every instruction of ascx_emu/ops_extra.h and highlevel.h, once each, for the timing model's
// coverage test (tests/timing/test_extra_ops.py): each line marked `// op` must be priced on
// its pipe, and a timing-only run must give the same cycles as a full run.
//   ./extra_ops all     the ops, on UB buffers set by vector Duplicates (hazard-free)
//   ./extra_ops race    a GM -> UB copy read by CompareScalar with no MTE2 -> V flag
#include "kernel_operator.h"

#include <string>

using namespace AscendC;

namespace {
std::string g_mode;
}  // namespace

extern "C" __global__ __aicore__ void extra_kernel(GM_ADDR x)
{
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float *)x, 4096);
    if (g_mode == "race") {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b0, b1, b2;
        pipe.InitBuffer(b0, 4096);
        pipe.InitBuffer(b1, 4096);
        pipe.InitBuffer(b2, 4096);
        LocalTensor<float> s = b0.Get<float>(), o = b2.Get<float>();
        LocalTensor<uint8_t> m = b1.Get<uint8_t>();
        DataCopy(s, g, 128);
        CompareScalar(m, s, 32.0f, CMPMODE::GE, 64);  // race: no MTE2 -> V flag
        Select(o, m, s, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
        return;
    }
    Fill(g, 1024, 1.5f);  // op
    TPipe pipe;
    TBuf<TPosition::VECCALC> b0, b1, b2, b3;
    pipe.InitBuffer(b0, 16384);
    pipe.InitBuffer(b1, 16384);
    pipe.InitBuffer(b2, 16384);
    pipe.InitBuffer(b3, 16384);
    LocalTensor<float> f0 = b0.Get<float>(), f1 = b1.Get<float>(), f2 = b2.Get<float>(), f3 = b3.Get<float>();
    Duplicate(f1, 2.0f, 4096);
    Duplicate(f2, 3.0f, 4096);
    Duplicate(f3, 1.0f, 4096);
    ReduceMax(f0, f1, f2, 64, 8, 8, true);  // op
    ReduceMin(f0, f1, f2, 64, 8, 8, false);  // op
    ReduceSum(f0, f1, f2, 64, 8, 8);  // op
    BlockReduceSum(f0, f1, 8, 64, 1, 1, 8);  // op
    BlockReduceMax(f0, f1, 8, 64, 1, 1, 8);  // op
    BlockReduceMin(f0, f1, 8, 64, 1, 1, 8);  // op
    PairReduceSum(f0, f1, 8, 64, 1, 1, 8);  // op
    uint64_t cnt = 0;
    GatherMask(f0, f1, 1, false, 0, GatherMaskParams(1, 8, 8, 0), cnt);  // op
    LocalTensor<uint32_t> off = b3.Get<uint32_t>();
    Duplicate(off.ReinterpretCast<int32_t>(), 4, 512);
    Gather(f0, f1, off, 0, 512);  // op
    Gather(f0, f1, off, 0, 64, 8, 8);  // op
    Sort32(f0, f1, off, 8);  // op
    MrgSortSrcList<float> lists(f0, f0[64], f0[128], f0[192]);
    uint16_t lens[4] = {32, 32, 32, 32};
    MrgSort(f2, lists, MrgSort4Info(lens, false, 0b1111, 1));  // op
    Copy(f0, f1, 64, 8, CopyRepeatParams(1, 1, 8, 8));  // op
    Transpose(f0.ReinterpretCast<half>(), f1.ReinterpretCast<half>());  // op
    Axpy(f0, f1, 0.5f, 4096);  // op
    LocalTensor<int16_t> i0 = b0.Get<int16_t>(), i1 = b1.Get<int16_t>(), i2 = b2.Get<int16_t>();
    ShiftLeft(i0, i1, static_cast<int16_t>(2), 8192);  // op
    ShiftRight(i0, i1, static_cast<int16_t>(2), 8192);  // op
    And(i0, i1, i2, 8192);  // op
    Or(i0, i1, i2, 8192);  // op
    Not(i0, i1, 8192);  // op
    Duplicate(f1, 2.0f, 4096);
    Duplicate(f2, 3.0f, 4096);
    LocalTensor<uint8_t> m = b3.Get<uint8_t>();
    CompareScalar(m, f1, 32.0f, CMPMODE::GE, 4096);  // op
    Select(f0, m, f1, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 4096);  // op
    Compare(m, f1, f2, CMPMODE::LT, 64, 8, BinaryRepeatParams());  // op
    Select(f0, m, f1, f2, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64, 8, BinaryRepeatParams());  // op
    SoftMaxTiling st;
    SoftMaxShapeInfo si{16, 64, 16, 64};
    LocalTensor<float> sum = b2.Get<float>(), mx = b2.Get<float>()[1024];
    SoftMax(f0, sum, mx, f1, st, si);  // op
    SimpleSoftMax(f0, sum, mx, f1, st, si);  // op
    LayerNormTiling lt;
    lt.bLength = 1, lt.sLength = 16, lt.hLength = 64, lt.originalHLength = 64;
    LocalTensor<float> mean = b3.Get<float>(), var = b3.Get<float>()[64], gamma = b3.Get<float>()[128], beta = b3.Get<float>()[256];
    Duplicate(gamma, 1.0f, 64);
    Duplicate(beta, 0.0f, 64);
    LayerNorm(f0, mean, var, f1, gamma, beta, 1e-5f, lt);  // op
}

int main(int argc, char **argv)
{
    g_mode = argc > 1 ? argv[1] : "all";
    uint8_t *x = GmAlloc(4096 * sizeof(float));
    ICPU_RUN_KF(extra_kernel, 1, x);
    GmFree(x);
    return 0;
}
