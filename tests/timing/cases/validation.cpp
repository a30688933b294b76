// Validation kernels of the timing model (tests/timing/test_validation.py, docs/timing.md).
// `./validation CASE ARGS...` launches one kernel; the test profiles each run.
//   copy BYTES OFFSET      one GM -> UB DataCopy of BYTES from GM byte offset OFFSET
//   pipe DEPTH             16 tiles of load (MTE2) / 5 Adds (V) / store (MTE3), queue depth 1 or 2
//   ew vec|scalar N        z = x + y over N halves: one vector Add, or a GetValue/SetValue loop
//   mc compute|memory B    B blocks: 16 KiB and 200 vector ops each, or 1 MiB copied in and out each
//   mm M N K               blocked matmul on the cube, blockDim 24 (timing-only: no arithmetic)
//   mix N                  mix mode: the AIC runs N Mmads while both AIVs run N Exps
//   l2 CHUNK CHUNKS REPEAT one AIV reads each of CHUNKS consecutive CHUNK-byte pieces of GM
//                          REPEAT times in a row (32 KiB copies), the L2 model's reuse test
#include "kernel_operator.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace AscendC;

namespace {
int g_a = 0, g_b = 0, g_c = 0;
std::string g_mode;
}  // namespace

extern "C" __global__ __aicore__ void copy_kernel(GM_ADDR x)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 128 * 1024);
    GlobalTensor<half> xGm;
    xGm.SetGlobalBuffer((__gm__ half *)(x + g_b), g_a / 2);
    LocalTensor<half> t = buf.Get<half>();
    DataCopy(t, xGm, g_a / 2);
}

template <int DEPTH> void pipe_body(GM_ADDR x, GM_ADDR z)
{
    constexpr int32_t E = 8192, T = 16;
    TPipe pipe;
    TQue<TPosition::VECIN, DEPTH> qin;
    TQue<TPosition::VECOUT, DEPTH> qout;
    TBuf<TPosition::VECCALC> pad1, pad2, tmpBuf;
    // Bank-conflict free (docs/timing.md "UB banks"): the inputs in UB [0, 64K), the outputs
    // in [64K, 128K), the ping-pong temporary in [128K, 192K): no Adds reads and writes one bank.
    pipe.InitBuffer(qin, DEPTH, E * sizeof(half));
    pipe.InitBuffer(pad1, 64 * 1024 - DEPTH * E * sizeof(half));
    pipe.InitBuffer(qout, DEPTH, E * sizeof(half));
    pipe.InitBuffer(pad2, 64 * 1024 - DEPTH * E * sizeof(half));
    pipe.InitBuffer(tmpBuf, E * sizeof(half));
    LocalTensor<half> tmp = tmpBuf.Get<half>();
    GlobalTensor<half> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ half *)x, E * T);
    zGm.SetGlobalBuffer((__gm__ half *)z, E * T);
    for (int32_t t = 0; t < T; ++t) {
        LocalTensor<half> a = qin.template AllocTensor<half>();
        DataCopy(a, xGm[t * E], E);
        qin.EnQue(a);
        LocalTensor<half> b = qin.template DeQue<half>();
        LocalTensor<half> c = qout.template AllocTensor<half>();
        Adds(c, b, (half)1.0f, E);
        for (int32_t k = 1; k < 5; k += 2) {  // five: V about as busy as MTE2
            Adds(tmp, c, (half)1.0f, E);
            Adds(c, tmp, (half)1.0f, E);
        }
        qout.EnQue(c);
        qin.FreeTensor(b);
        LocalTensor<half> d = qout.template DeQue<half>();
        DataCopy(zGm[t * E], d, E);
        qout.FreeTensor(d);
    }
}
extern "C" __global__ __aicore__ void pipe_kernel(GM_ADDR x, GM_ADDR z)
{
    if (g_a == 2) pipe_body<2>(x, z);
    else pipe_body<1>(x, z);
}

extern "C" __global__ __aicore__ void ew_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    const int32_t n = g_a;
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bz;
    pipe.InitBuffer(bx, n * sizeof(half));
    pipe.InitBuffer(by, n * sizeof(half));
    pipe.InitBuffer(bz, n * sizeof(half));
    GlobalTensor<half> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ half *)x, n);
    yGm.SetGlobalBuffer((__gm__ half *)y, n);
    zGm.SetGlobalBuffer((__gm__ half *)z, n);
    LocalTensor<half> a = bx.Get<half>(), b = by.Get<half>(), c = bz.Get<half>();
    DataCopy(a, xGm, n);
    DataCopy(b, yGm, n);
    if (g_mode == "vec") {
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        Add(c, a, b, n);
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
    } else {
        SetFlag<HardEvent::MTE2_S>(0);
        WaitFlag<HardEvent::MTE2_S>(0);
        for (int32_t i = 0; i < n; ++i) {
            c.SetValue(i, (half)(static_cast<float>(a.GetValue(i)) + static_cast<float>(b.GetValue(i))));
        }
        SetFlag<HardEvent::S_MTE3>(0);
        WaitFlag<HardEvent::S_MTE3>(0);
    }
    DataCopy(zGm, c, n);
}

extern "C" __global__ __aicore__ void mc_kernel(GM_ADDR x, GM_ADDR z)
{
    constexpr int32_t E = 8192;  // 16 KiB of halves
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, E * sizeof(half));
    LocalTensor<half> t = buf.Get<half>();
    GlobalTensor<half> xGm, zGm;
    const bool compute = g_mode == "compute";
    const int32_t chunks = compute ? 1 : 64;  // memory: 64 x 16 KiB = 1 MiB per block
    xGm.SetGlobalBuffer((__gm__ half *)x + GetBlockIdx() * chunks * E, chunks * E);
    zGm.SetGlobalBuffer((__gm__ half *)z + GetBlockIdx() * chunks * E, chunks * E);
    for (int32_t k = 0; k < chunks; ++k) {
        if (k > 0) {
            WaitFlag<HardEvent::MTE3_MTE2>(0);
        }
        DataCopy(t, xGm[k * E], E);
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        for (int32_t r = 0; r < (compute ? 200 : 0); ++r) {
            Adds(t, t, (half)1.0f, E);
        }
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
        DataCopy(zGm[k * E], t, E);
        if (k + 1 < chunks) {
            SetFlag<HardEvent::MTE3_MTE2>(0);
        }
    }
}

// Blocked matmul, one (128 x 256) C tile at a time per AIC, K in steps of 128 through L1
// (double buffered) and L0A/L0B; C accumulates in L0C and leaves through Fixpipe.
extern "C" __global__ __aicore__ void mm_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    const int32_t M = g_a, N = g_b, K = g_c;
    constexpr int32_t BM = 128, BN = 256, BK = 128;
    TPipe pipe;
    TQue<TPosition::A1, 2> qa1;
    TQue<TPosition::B1, 2> qb1;
    TQue<TPosition::A2, 2> qa2;
    TQue<TPosition::B2, 2> qb2;
    TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa1, 2, BM * BK * 2);
    pipe.InitBuffer(qb1, 2, BK * BN * 2);
    pipe.InitBuffer(qa2, 2, BM * BK * 2);
    pipe.InitBuffer(qb2, 2, BK * BN * 2 / 2);
    pipe.InitBuffer(qc, 1, BM * BN * 4);
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half *)a, static_cast<uint64_t>(M) * K);
    bGm.SetGlobalBuffer((__gm__ half *)b, static_cast<uint64_t>(K) * N);
    cGm.SetGlobalBuffer((__gm__ float *)c, static_cast<uint64_t>(M) * N);
    const int32_t tiles = (M / BM) * (N / BN);
    for (int32_t tile = static_cast<int32_t>(GetBlockIdx()); tile < tiles; tile += static_cast<int32_t>(GetBlockNum())) {
        const int32_t i = tile / (N / BN), j = tile % (N / BN);
        LocalTensor<float> acc = qc.AllocTensor<float>();
        for (int32_t k = 0; k < K / BK; ++k) {
            LocalTensor<half> a1 = qa1.AllocTensor<half>();
            DataCopy(a1, aGm[static_cast<uint64_t>(i) * BM * K + k * BK], Nd2NzParams(1, BM, BK, 0, K, BM, 1, 0));
            qa1.EnQue(a1);
            LocalTensor<half> b1 = qb1.AllocTensor<half>();
            DataCopy(b1, bGm[static_cast<uint64_t>(k) * BK * N + j * BN], Nd2NzParams(1, BK, BN, 0, N, BK, 1, 0));
            qb1.EnQue(b1);
            a1 = qa1.DeQue<half>();
            b1 = qb1.DeQue<half>();
            for (int32_t h = 0; h < 2; ++h) {  // two N halves of 128 through L0B
                LocalTensor<half> a2 = qa2.AllocTensor<half>();
                for (int32_t kb = 0; kb < BK / 16; ++kb) {
                    LoadData(a2[kb * 256], a1[kb * BM * 16], LoadData2DParams(0, BM / 16, 1, 0, BK / 16 - 1, false, 0));
                }
                qa2.EnQue(a2);
                LocalTensor<half> b2 = qb2.AllocTensor<half>();
                for (int32_t kb = 0; kb < BK / 16; ++kb) {
                    LoadData(b2[kb * 8 * 256], b1[(h * 8) * BK * 16 + kb * 256], LoadData2DParams(0, 8, BK / 16, 0, 0, true, 0));
                }
                qb2.EnQue(b2);
                a2 = qa2.DeQue<half>();
                b2 = qb2.DeQue<half>();
                MmadParams p(BM, 128, BK, false, 0, false, false, false);
                p.cmatrixInitVal = (k == 0);
                Mmad(acc[h * 128 * BM], a2, b2, p);
                qa2.FreeTensor(a2);
                qb2.FreeTensor(b2);
            }
            qa1.FreeTensor(a1);
            qb1.FreeTensor(b1);
        }
        qc.EnQue(acc);
        acc = qc.DeQue<float>();
        FixpipeParamsV220 fp(BN, BM, BM, N, false);
        Fixpipe(cGm[static_cast<uint64_t>(i) * BM * N + j * BN], acc, fp);
        qc.FreeTensor(acc);
    }
}

extern "C" __global__ __aicore__ void mix_kernel(GM_ADDR x)
{
    const int32_t n = g_a;
    TPipe pipe;
    (void)x;
    if ASCEND_IS_AIC {
        TQue<TPosition::A2, 1> qa;
        TQue<TPosition::B2, 1> qb;
        TQue<TPosition::CO1, 1> qc;
        pipe.InitBuffer(qa, 1, 128 * 128 * 2);
        pipe.InitBuffer(qb, 1, 128 * 128 * 2);
        pipe.InitBuffer(qc, 1, 128 * 128 * 4);
        LocalTensor<half> a = qa.AllocTensor<half>(), b = qb.AllocTensor<half>();
        LocalTensor<float> c = qc.AllocTensor<float>();
        for (int32_t r = 0; r < n; ++r) {
            MmadParams p(128, 128, 128, false, 0, false, false, false);
            Mmad(c, a, b, p);
        }
        qa.FreeTensor(a);
        qb.FreeTensor(b);
        qc.FreeTensor(c);
    }
    if ASCEND_IS_AIV {
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64 * 1024);
        LocalTensor<float> t = buf.Get<float>();
        for (int32_t r = 0; r < n; ++r) {
            Exp(t, t, 16384);
        }
    }
}

// Reads chunk c REPEAT times before chunk c + 1: reuse distance one chunk, footprint all of them.
extern "C" __global__ __aicore__ void l2_kernel(GM_ADDR x)
{
    const int32_t chunk = g_a, chunks = g_b, repeat = g_c;
    constexpr int32_t PIECE = 32 * 1024;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, PIECE);
    GlobalTensor<half> xGm;
    xGm.SetGlobalBuffer((__gm__ half *)x, static_cast<uint64_t>(chunk) * chunks / 2);
    LocalTensor<half> t = buf.Get<half>();
    for (int32_t c = 0; c < chunks; ++c)
        for (int32_t r = 0; r < repeat; ++r)
            for (int32_t off = 0; off < chunk; off += PIECE) {
                DataCopy(t, xGm[(static_cast<uint64_t>(c) * chunk + off) / 2], PIECE / 2);
                PipeBarrier<PIPE_ALL>();
            }
}

int main(int argc, char **argv)
{
    g_mode = argc > 1 ? argv[1] : "copy";
    const std::string what = g_mode;
    g_a = argc > 2 ? std::atoi(argv[2]) : 0;
    g_b = argc > 3 ? std::atoi(argv[3]) : 0;
    g_c = argc > 4 ? std::atoi(argv[4]) : 0;
    if (what == "copy") {
        uint8_t *x = GmAlloc(static_cast<size_t>(g_a + g_b));
        ICPU_RUN_KF(copy_kernel, 1, x);
        GmFree(x);
    } else if (what == "pipe") {
        uint8_t *x = GmAlloc(16 * 8192 * 2), *z = GmAlloc(16 * 8192 * 2);
        ICPU_RUN_KF(pipe_kernel, 1, x, z);
        GmFree(x);
        GmFree(z);
    } else if (what == "ew") {
        g_mode = argv[2];
        g_a = std::atoi(argv[3]);
        uint8_t *x = GmAlloc(g_a * 2), *y = GmAlloc(g_a * 2), *z = GmAlloc(g_a * 2);
        ICPU_RUN_KF(ew_kernel, 1, x, y, z);
        GmFree(x);
        GmFree(y);
        GmFree(z);
    } else if (what == "mc") {
        g_mode = argv[2];
        const int32_t blocks = std::atoi(argv[3]);
        const size_t per = g_mode == "compute" ? 16384 : 1048576;
        uint8_t *x = GmAlloc(per * blocks), *z = GmAlloc(per * blocks);
        ICPU_RUN_KF(mc_kernel, blocks, x, z);
        GmFree(x);
        GmFree(z);
    } else if (what == "mm") {
        uint8_t *a = GmAlloc(static_cast<size_t>(g_a) * g_c * 2), *b = GmAlloc(static_cast<size_t>(g_c) * g_b * 2);
        uint8_t *c = GmAlloc(static_cast<size_t>(g_a) * g_b * 4);
        SetKernelMode(KernelMode::AIC_MODE);
        ICPU_RUN_KF(mm_kernel, 24, a, b, c);
        GmFree(a);
        GmFree(b);
        GmFree(c);
    } else if (what == "l2") {
        uint8_t *x = GmAlloc(static_cast<size_t>(g_a) * g_b);
        ICPU_RUN_KF(l2_kernel, 1, x);
        GmFree(x);
    } else if (what == "mix") {
        uint8_t *x = GmAlloc(32);
        SetKernelMode(KernelMode::MIX_MODE);
        ICPU_RUN_KF(mix_kernel, 1, x);
        GmFree(x);
    }
    return 0;
}
