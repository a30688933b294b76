// Failure-mode kernels: `./negative <case>` runs one kernel that breaks a hardware rule.
// Every case must stop with exit status 3 and an "ascx-emu: error:" message, except
// `slow_barrier`, which must finish ("no error").
#include "kernel_operator.h"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

using namespace AscendC;

static std::string g_case;
static uint8_t* g_gm = nullptr;

extern "C" __global__ __aicore__ void neg_kernel(GM_ADDR gm) {
    const std::string& c = g_case;
    TPipe pipe;
    GlobalTensor<half> g;
    g.SetGlobalBuffer((__gm__ half*)gm, 256);
    if (c == "ub_overalloc") {
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 200 * 1024);
    } else if (c == "l0a_overalloc") {
        TQue<TPosition::A2, 1> q;
        pipe.InitBuffer(q, 2, 40 * 1024);
    } else if (c == "misaligned") {
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<half> t = b.Get<half>();
        Add(t[3], t[16], t[32], 16);
    } else if (c == "datacopy_len") {
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<half> t = q.AllocTensor<half>();
        DataCopy(t, g, 10);
    } else if (c == "repeat_255") {
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 1024);
        LocalTensor<float> t = b.Get<float>();
        int32_t rep = 300;
        Adds(t, t, 1.0f, 64, rep, UnaryRepeatParams());
    } else if (c == "que_buffers") {
        TQue<TPosition::VECIN, 1> q1, q2, q3;
        pipe.InitBuffer(q1, 3, 256);
        pipe.InitBuffer(q2, 3, 256);
        pipe.InitBuffer(q3, 3, 256);
    } else if (c == "deque_empty") {
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<half> t = q.DeQue<half>();
        (void)t;
    } else if (c == "alloc_in_use") {
        TQue<TPosition::VECOUT, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<half> a = q.AllocTensor<half>();
        LocalTensor<half> b = q.AllocTensor<half>();
        (void)a; (void)b;
    } else if (c == "flag_twice") {
        SetFlag<HardEvent::MTE2_V>(0);
        SetFlag<HardEvent::MTE2_V>(0);
    } else if (c == "wait_no_set") {
        WaitFlag<HardEvent::V_MTE3>(1);
    } else if (c == "unbalanced") {
        SetFlag<HardEvent::MTE3_MTE2>(2);
    } else if (c == "local_oob") {
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 256);
        LocalTensor<float> t = b.Get<float>();
        Adds(t, t, 1.0f, 100);
    } else if (c == "getvalue_oob") {
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 64);
        LocalTensor<float> t = b.Get<float>();
        (void)t.GetValue(16);
    } else if (c == "gm_oob") {
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<half> t = q.AllocTensor<half>();
        DataCopy(t, g[240], 32);
    } else if (c == "use_after_free") {
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<half> t = q.AllocTensor<half>();
        q.FreeTensor(t);
        LocalTensor<half> u = t;
        Adds(u, u, half(1.0f), 16);
    } else if (c == "cube_on_aiv") {
        TQue<TPosition::A1, 1> q;
        pipe.InitBuffer(q, 1, 512);
    } else if (c == "fixpipe_quant") {
        TQue<TPosition::CO1, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> t = q.AllocTensor<float>();
        FixpipeParamsV220 p;
        p.nSize = 16; p.mSize = 16; p.srcStride = 16; p.dstStride = 16;
        Fixpipe(g, t, p);
    } else if (c == "deadlock") {
        if ASCEND_IS_AIV {
            CrossCoreWaitFlag(5);
        }
    } else if (c == "barrier_waves" || c == "slow_barrier") {
        // an all-AIV barrier over 3 blocks; in `slow_barrier` one AIV works for 0.3 s first
        // while the others wait (run with a shorter ASCX_EMU_DEADLOCK_TIMEOUT: not a hang)
        if ASCEND_IS_AIV {
            if (c == "slow_barrier" && GetBlockIdx() == 0) {
                auto t0 = std::chrono::steady_clock::now();
                while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(300)) PipeBarrier<PIPE_V>();
            }
            CrossCoreSetFlag<0x0, PIPE_MTE3>(1);
            CrossCoreWaitFlag(1);
        }
    } else {
        std::fprintf(stderr, "unknown case %s\n", c.c_str());
    }
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    g_case = argv[1];
    g_gm = GmAlloc(512);
    KernelMode m = KernelMode::AIV_MODE;
    if (g_case == "l0a_overalloc" || g_case == "fixpipe_quant") m = KernelMode::AIC_MODE;
    uint32_t blocks = 1;
    if (g_case == "deadlock") m = KernelMode::MIX_MODE;
    if (g_case == "barrier_waves" || g_case == "slow_barrier") m = KernelMode::MIX_MODE, blocks = 3;
    SetKernelMode(m);
    ICPU_RUN_KF(neg_kernel, blocks, g_gm);
    GmFree(g_gm);
    std::printf("no error\n");
    return 0;
}
