// Auto-sync and GM-bound unit cases: `./units_sync <case>` runs one small AIV kernel.
// Hand-written code runs with the compiler's auto-sync (S after MTE2, MTE3 and V) unless
// ASCX_AUTO_SYNC=off / -DASCX_EMU_NO_AUTO_SYNC; GM views overrun inside their allocation warn,
// outside it fail. Each case prints `<case> <values...>` when it completes.
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace AscendC;

static std::string g_case;

extern "C" __global__ __aicore__ void sync_kernel(GM_ADDR gm, GM_ADDR out)
{
    const std::string &c = g_case;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> t = buf.Get<float>();
    GlobalTensor<float> g, o;
    g.SetGlobalBuffer((__gm__ float *)gm, 64);
    o.SetGlobalBuffer((__gm__ float *)out, 64);
    if (c == "s_after_mte2") {  // GetValue of a DataCopy's result, no MTE2_S flag
        DataCopy(t, g, 64);
        std::printf("%s %g %g\n", c.c_str(), (double)t.GetValue(0), (double)t.GetValue(63));
    } else if (c == "s_after_v") {  // GetValue of a vector result, no V_S flag
        Duplicate(t, 3.5f, 64);
        Adds(t, t, 1.0f, 64);
        std::printf("%s %g\n", c.c_str(), (double)t.GetValue(5));
    } else if (c == "s_write_after_mte3") {  // SetValue over bytes an MTE3 copy-out reads (WAR)
        Duplicate(t, 2.0f, 64);
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
        DataCopy(o, t, 64);
        t.SetValue(0, 9.0f);
        std::printf("%s %g\n", c.c_str(), (double)t.GetValue(0));
    } else if (c == "mte2_v_not_auto") {  // MTE2 -> V is not an auto-sync pair: still a hazard
        DataCopy(t, g, 64);
        Adds(t, t, 1.0f, 64);
        std::printf("%s done\n", c.c_str());
    } else if (c == "gm_view_overrun") {  // past the 64-element view, inside the 128-element allocation
        GlobalTensor<float> small;
        small.SetGlobalBuffer((__gm__ float *)gm, 16);
        DataCopy(t, small, 64);
        DataCopy(t, small, 64);  // same line reported once
        SetFlag<HardEvent::MTE2_S>(0);
        WaitFlag<HardEvent::MTE2_S>(0);
        std::printf("%s %g\n", c.c_str(), (double)t.GetValue(40));
    } else if (c == "gm_alloc_overrun") {  // past the allocation: an error, as on the device
        DataCopy(t, g[96], 64);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    g_case = argv[1];
    uint8_t *gm = GmAlloc(128 * sizeof(float));
    uint8_t *out = GmAlloc(64 * sizeof(float));
    float *x = reinterpret_cast<float *>(gm);
    for (int i = 0; i < 128; ++i) x[i] = static_cast<float>(i);
    SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(sync_kernel, 1, gm, out);
    GmFree(gm);
    GmFree(out);
    return 0;
}
