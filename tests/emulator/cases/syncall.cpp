// SyncAll cases: `./syncall <case>`. two_phase / two_phase_soft / mix print results; the
// others break a rule and must stop with exit 3 and a located message.
#include "kernel_operator.h"
#include <cstdio>
#include <string>

using namespace AscendC;

static std::string g_case;
constexpr int32_t BLOCKS = 8;
constexpr int32_t PER = 8;  // floats per block (32 B)

// Phase 1: block b writes (b + 1) * 10 to its slice of `a`. SyncAll. Phase 2: block b reads
// the slice of block (b + 1) % 8 and writes it to `out`. Without the barrier, blocks run in
// order would read a slice that is still zero.
extern "C" __global__ __aicore__ void two_phase(GM_ADDR a, GM_ADDR out, GM_ADDR ws) {
    const std::string& c = g_case;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf, wbuf;
    pipe.InitBuffer(buf, PER * sizeof(float));
    pipe.InitBuffer(wbuf, BLOCKS * 32);
    GlobalTensor<float> ga, go;
    GlobalTensor<int32_t> gw;
    ga.SetGlobalBuffer((__gm__ float*)a, BLOCKS * PER);
    go.SetGlobalBuffer((__gm__ float*)out, BLOCKS * PER);
    gw.SetGlobalBuffer((__gm__ int32_t*)ws, c == "small_ws" ? 4 : BLOCKS * 8);
    int64_t b = GetBlockIdx();
    LocalTensor<float> t = buf.Get<float>();
    Duplicate(t, static_cast<float>((b + 1) * 10), PER);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(ga[b * PER], t, PER);
    if (c == "missing" && b == 3) return;
    if (c == "two_phase_soft" || c == "small_ws") SyncAll(gw, wbuf.Get<int32_t>());
    else if (c == "used_cores") SyncAll(gw, wbuf.Get<int32_t>(), 4);
    else SyncAll();
    if (c == "twice" && b == 5) SyncAll();
    int64_t nb = (b + 1) % BLOCKS;
    DataCopy(t, ga[nb * PER], PER);
    SetFlag<HardEvent::MTE2_MTE3>(0);
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    DataCopy(go[b * PER], t, PER);
}

// Mix mode: every AIV core adds 1 to a per-core counter, SyncAll<true>, then reads all counters.
extern "C" __global__ __aicore__ void mix_kernel(GM_ADDR cnt, GM_ADDR out) {
    if ASCEND_IS_AIC {
        if (g_case == "mix_all") SyncAll<false>();
        return;
    }
    int64_t v = GetBlockIdx();
    auto* p = reinterpret_cast<int32_t*>(cnt);
    p[v * 8] = static_cast<int32_t>(v + 1);
    if (g_case == "mix_missing" && v == 2) return;
    if (g_case == "mix_all") SyncAll<false>();
    else SyncAll();
    int32_t s = 0;
    for (int i = 0; i < 2 * static_cast<int>(GetBlockNum()); ++i) s += p[i * 8];
    reinterpret_cast<int32_t*>(out)[v * 8] = s;
}

int main(int argc, char** argv) {
    g_case = argc > 1 ? argv[1] : "two_phase";
    if (g_case.rfind("mix", 0) == 0) {
        uint8_t* cnt = GmAlloc(4 * 8 * 8);
        uint8_t* out = GmAlloc(4 * 8 * 8);
        SetKernelMode(KernelMode::MIX_MODE);
        ICPU_RUN_KF(mix_kernel, 4, cnt, out);
        std::printf("mix");
        for (int i = 0; i < 8; ++i) std::printf(" %d", reinterpret_cast<int32_t*>(out)[i * 8]);
        std::printf("\n");
        GmFree(cnt);
        GmFree(out);
        return 0;
    }
    uint8_t* a = GmAlloc(BLOCKS * PER * 4);
    uint8_t* out = GmAlloc(BLOCKS * PER * 4);
    uint8_t* ws = GmAlloc(BLOCKS * 32);
    SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(two_phase, BLOCKS, a, out, ws);
    std::printf("%s", g_case.c_str());
    for (int i = 0; i < BLOCKS * PER; i += PER) std::printf(" %g", static_cast<double>(reinterpret_cast<float*>(out)[i]));
    std::printf("\n");
    GmFree(a);
    GmFree(out);
    GmFree(ws);
    return 0;
}
