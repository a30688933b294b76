// Hand-written kernels with one missing synchronisation each, and their fixed versions
// (tests/timing/test_hazards.py). `./hazards CASE` runs one case; markers `// @name` let the
// test find the source lines the hazard report must name.
#include "kernel_operator.h"

#include <cstring>
#include <string>

using namespace AscendC;

namespace {
constexpr int32_t N = 1024;  // halves per tile (2 KiB)
std::string g_case;
bool on(const char* c) { return g_case == c; }
bool fixed() { return g_case.rfind("fixed_", 0) == 0; }
}  // namespace

// Explicit flags: x <- GM (MTE2), y = x + 1 (V), GM <- y (MTE3), twice with buffer reuse.
extern "C" __global__ __aicore__ void flags_kernel(GM_ADDR xg, GM_ADDR yg)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> xb, yb;
    pipe.InitBuffer(xb, N * sizeof(half));
    pipe.InitBuffer(yb, N * sizeof(half));
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half *)xg, 2 * N);
    yGm.SetGlobalBuffer((__gm__ half *)yg, 2 * N);
    LocalTensor<half> x = xb.Get<half>(), y = yb.Get<half>();
    const bool keep_mte2_v = !on("mte2_v"), keep_v_mte3 = !on("v_mte3"), keep_v_mte2 = !on("v_mte2");
    for (int32_t t = 0; t < 2; ++t) {
        if (t > 0 && keep_v_mte2) {
            WaitFlag<HardEvent::V_MTE2>(0);
        }
        DataCopy(x, xGm[t * N], N);  // @copy_in
        if (keep_mte2_v) {
            SetFlag<HardEvent::MTE2_V>(0);
            WaitFlag<HardEvent::MTE2_V>(0);
        }
        if (t > 0) {
            WaitFlag<HardEvent::MTE3_V>(0);
        }
        Adds(y, x, (half)1.0f, N);  // @compute
        if (t == 0 && keep_v_mte2) {
            SetFlag<HardEvent::V_MTE2>(0);
        }
        if (keep_v_mte3) {
            SetFlag<HardEvent::V_MTE3>(0);
            WaitFlag<HardEvent::V_MTE3>(0);
        }
        DataCopy(yGm[t * N], y, N);  // @copy_out
        if (t == 0) {
            SetFlag<HardEvent::MTE3_V>(0);
        }
    }
}

// Queues: a copy-through kernel whose VECIN buffer is read by MTE3. With TQue<VECIN> the
// DeQue waits on V and FreeTensor frees from V, i.e. the buffer is released before its
// real consumer (MTE3) read it; TQueBind<VECIN, VECOUT> names MTE3 as the consumer.
template <typename Q> void copy_through(GM_ADDR xg, GM_ADDR yg)
{
    TPipe pipe;
    Q que;
    pipe.InitBuffer(que, 1, N * sizeof(half));
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half *)xg, 2 * N);
    yGm.SetGlobalBuffer((__gm__ half *)yg, 2 * N);
    for (int32_t t = 0; t < 2; ++t) {
        LocalTensor<half> x = que.template AllocTensor<half>();
        DataCopy(x, xGm[t * N], N);  // @q_copy_in
        que.EnQue(x);
        LocalTensor<half> z = que.template DeQue<half>();
        DataCopy(yGm[t * N], z, N);  // @q_copy_out
        que.FreeTensor(z);
    }
}
extern "C" __global__ __aicore__ void queue_kernel(GM_ADDR xg, GM_ADDR yg)
{
    if (fixed()) {
        copy_through<TQueBind<TPosition::VECIN, TPosition::VECOUT, 1>>(xg, yg);
    } else {
        copy_through<TQue<TPosition::VECIN, 1>>(xg, yg);
    }
}

// WholeReduceMax (ORDER_ONLY_VALUE, destination repeat stride 1) of 16 rows writes 16 halves
// (32 B) of r; MTE3 stores r without a V -> MTE3 flag: the first 32 B is a RAW, the next 32 B
// (never written by V) is not (the detector sees the bytes the reduction writes, no more).
extern "C" __global__ __aicore__ void reduce_kernel(GM_ADDR xg, GM_ADDR yg)
{
    (void)xg;
    TPipe pipe;
    TBuf<TPosition::VECCALC> sb, rb;
    pipe.InitBuffer(sb, 16 * 128 * sizeof(half));
    pipe.InitBuffer(rb, 64);
    LocalTensor<half> s = sb.Get<half>(), r = rb.Get<half>();
    GlobalTensor<half> yGm;
    yGm.SetGlobalBuffer((__gm__ half *)yg, 2 * N);
    Duplicate(s, (half)1.0f, 16 * 128);
    WholeReduceMax(r, s, 128, 16, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);  // @whole_reduce
    DataCopy(yGm, r[on("whole_reduce_raw") ? 0 : 16], 16);  // @wr_copy_out
}

// Mmad's bias form (AIC): the bias goes GM -> L1 (MTE2) -> bias table (MTE1) and the Mmad (M)
// reads it; without the MTE1 -> M flag the Mmad races with the bias-table copy.
extern "C" __global__ __aicore__ void bias_kernel(GM_ADDR xg, GM_ADDR yg)
{
    (void)yg;
    TPipe pipe;
    TBuf<TPosition::C1> l1b;
    TBuf<TPosition::C2> btb;
    TBuf<TPosition::A2> ab;
    TBuf<TPosition::B2> bb;
    TBuf<TPosition::CO1> cb;
    pipe.InitBuffer(l1b, 64);
    pipe.InitBuffer(btb, 64);
    pipe.InitBuffer(ab, 512);
    pipe.InitBuffer(bb, 512);
    pipe.InitBuffer(cb, 1024);
    GlobalTensor<float> bGm;
    bGm.SetGlobalBuffer((__gm__ float *)xg, 16);
    LocalTensor<float> l1 = l1b.Get<float>(), bt = btb.Get<float>(), c = cb.Get<float>();
    LocalTensor<half> a = ab.Get<half>(), b = bb.Get<half>();
    DataCopy(l1, bGm, 16);
    SetFlag<HardEvent::MTE2_MTE1>(0);
    WaitFlag<HardEvent::MTE2_MTE1>(0);
    DataCopy(bt, l1, DataCopyParams(1, 1, 0, 0));  // @bt_copy
    if (!on("mte1_m_bias")) {
        SetFlag<HardEvent::MTE1_M>(0);
        WaitFlag<HardEvent::MTE1_M>(0);
    }
    Mmad(c, a, b, bt, MmadParams(16, 16, 16, true, 0, false, false, false));  // @bias_mmad
}

int main(int argc, char **argv)
{
    g_case = argc > 1 ? argv[1] : "fixed_flags";
    uint8_t *x = GmAlloc(2 * N * sizeof(half));
    uint8_t *y = GmAlloc(2 * N * sizeof(half));
    SetKernelMode(KernelMode::AIV_MODE);
    if (on("mte1_m_bias") || on("fixed_bias")) {
        SetKernelMode(KernelMode::AIC_MODE);
        ICPU_RUN_KF(bias_kernel, 1, x, y);
    } else if (on("queue_free") || on("fixed_queue")) {
        ICPU_RUN_KF(queue_kernel, 1, x, y);
    } else if (on("whole_reduce_raw") || on("fixed_whole_reduce")) {
        ICPU_RUN_KF(reduce_kernel, 1, x, y);
    } else {
        ICPU_RUN_KF(flags_kernel, 1, x, y);
    }
    half *yh = reinterpret_cast<half *>(y);
    std::printf("y0 %f\n", static_cast<double>(static_cast<float>(yh[0])));
    GmFree(x);
    GmFree(y);
    return 0;
}
