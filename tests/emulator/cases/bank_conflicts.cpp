// UB bank conflicts on the timing model (issue 26 item 6 / issue 25 item 2): hand-written
// kernels (our own code) with the STRUCTURE of the two public Ascend C best-practice samples
// about bank conflicts, plus the write-conflict examples of the public page "Avoiding Bank
// Conflicts in the Unified Buffer". One binary, a case per argument:
//
//   ./bank_conflicts add v1|v2     the bank-conflict sample (Add of 1 x 4096 float, one core,
//                                  queues from TPipe::InitBuffer): v1 puts x, y, z at 0, 0x4000,
//                                  0x8000 (x and y read the same bank groups, z is written to
//                                  x's banks); v2 sizes the buffers so that y lands at 0x4100
//                                  and z at 0x10000 (no conflict), as the sample describes.
//   ./bank_conflicts static v3|v4  the static-tensor Add sample (72 x 4096 float over 8 cores,
//                                  double-buffered tiles at fixed UB addresses with SetFlag /
//                                  WaitFlag): v3 lays x0 x1 y0 y1 z0 z1 linearly from 0
//                                  (LocalMemAllocator), v4 moves y by 256 B into another
//                                  section and z into a third (no conflict).
//   ./bank_conflicts stride N      Adds with dst block stride N (the page's write-conflict
//                                  table: N = 16 -> 8 beats a repeat, N = 8 -> 4) at dst 0x1FE00.
//
// Each case checks its own result (exit 1 on a mismatch) and prints "ok <case>".
#include "kernel_operator.h"
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

using namespace AscendC;

namespace {

// ---------------------------------------------------------------- sample 1: queues
constexpr int32_t ADD_LEN = 4096;  // 1 x 4096 float, one tile

template <int VARIANT> class KernelAddQueues {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
        xGm.SetGlobalBuffer((__gm__ float*)x, ADD_LEN);
        yGm.SetGlobalBuffer((__gm__ float*)y, ADD_LEN);
        zGm.SetGlobalBuffer((__gm__ float*)z, ADD_LEN);
        if (VARIANT == 1) {  // x 0, y 0x4000, z 0x8000
            pipe.InitBuffer(inQueueX, 1, ADD_LEN * sizeof(float));
            pipe.InitBuffer(inQueueY, 1, ADD_LEN * sizeof(float));
            pipe.InitBuffer(outQueueZ, 1, ADD_LEN * sizeof(float));
        } else {  // the buffer sizes move y to 0x4100 and z to 0x10000
            pipe.InitBuffer(inQueueX, 1, 0x4100);
            pipe.InitBuffer(inQueueY, 1, 0x10000 - 0x4100);
            pipe.InitBuffer(outQueueZ, 1, ADD_LEN * sizeof(float));
        }
    }
    __aicore__ inline void Process() {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        DataCopy(xLocal, xGm, ADD_LEN);
        DataCopy(yLocal, yGm, ADD_LEN);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
        xLocal = inQueueX.DeQue<float>();
        yLocal = inQueueY.DeQue<float>();
        LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
        Add(zLocal, xLocal, yLocal, ADD_LEN);
        outQueueZ.EnQue<float>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
        zLocal = outQueueZ.DeQue<float>();
        DataCopy(zGm, zLocal, ADD_LEN);
        outQueueZ.FreeTensor(zLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, 1> outQueueZ;
    GlobalTensor<float> xGm, yGm, zGm;
};

extern "C" __global__ __aicore__ void add_v1(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    KernelAddQueues<1> op;
    op.Init(x, y, z);
    op.Process();
}
extern "C" __global__ __aicore__ void add_v2(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    KernelAddQueues<2> op;
    op.Init(x, y, z);
    op.Process();
}

// ---------------------------------------------------------------- sample 2: static tensors
constexpr int32_t ST_TOTAL = 72 * 4096;
constexpr int32_t ST_CORES = 8;
constexpr int32_t ST_BLOCK = ST_TOTAL / ST_CORES;  // 36864 floats a core
constexpr int32_t ST_TILE = 4096;                  // 16 KB tiles, double-buffered
constexpr int32_t ST_TILES = ST_BLOCK / ST_TILE;   // 9

template <int VARIANT> __aicore__ inline void static_add(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    GlobalTensor<float> xGm, yGm, zGm;
    const int32_t off = ST_BLOCK * static_cast<int32_t>(GetBlockIdx());
    xGm.SetGlobalBuffer((__gm__ float*)x + off, ST_BLOCK);
    yGm.SetGlobalBuffer((__gm__ float*)y + off, ST_BLOCK);
    zGm.SetGlobalBuffer((__gm__ float*)z + off, ST_BLOCK);
    LocalTensor<float> xs[2], ys[2], zs[2];
    LocalMemAllocator<> alloc;
    if (VARIANT == 3) {  // linear: x0 0, x1 16K, y0 32K, y1 48K, z0 64K, z1 80K
        for (auto* t : {&xs[0], &xs[1], &ys[0], &ys[1], &zs[0], &zs[1]}) *t = alloc.Alloc<float, ST_TILE>();
    } else {  // x in [0, 64K), y 256 B into [64K, 128K), z in [128K, 192K)
        xs[0] = alloc.Alloc<float, ST_TILE>();
        xs[1] = alloc.Alloc<float, ST_TILE>();
        (void)alloc.Alloc<float>((0x10100 - 0x8000) / sizeof(float));
        ys[0] = alloc.Alloc<float, ST_TILE>();
        ys[1] = alloc.Alloc<float, ST_TILE>();
        (void)alloc.Alloc<float>((0x20000 - 0x18100) / sizeof(float));
        zs[0] = alloc.Alloc<float, ST_TILE>();
        zs[1] = alloc.Alloc<float, ST_TILE>();
    }
    // Events: MTE2 -> V (tile loaded), V -> MTE3 (result ready), MTE3 -> V (z free),
    // V -> MTE2 (x, y free), one id per buffer.
    for (int32_t i = 0; i < ST_TILES; ++i) {
        const int b = i & 1;
        if (i >= 2) WaitFlag<HardEvent::V_MTE2>(b);
        DataCopy(xs[b], xGm[i * ST_TILE], ST_TILE);
        DataCopy(ys[b], yGm[i * ST_TILE], ST_TILE);
        SetFlag<HardEvent::MTE2_V>(b);
        WaitFlag<HardEvent::MTE2_V>(b);
        if (i >= 2) WaitFlag<HardEvent::MTE3_V>(b);
        Add(zs[b], xs[b], ys[b], ST_TILE);
        SetFlag<HardEvent::V_MTE2>(b);
        SetFlag<HardEvent::V_MTE3>(b);
        WaitFlag<HardEvent::V_MTE3>(b);
        DataCopy(zGm[i * ST_TILE], zs[b], ST_TILE);
        SetFlag<HardEvent::MTE3_V>(b);
    }
    for (int32_t i = ST_TILES < 2 ? 0 : ST_TILES - 2; i < ST_TILES; ++i) {  // drain the pending flags
        WaitFlag<HardEvent::V_MTE2>(i & 1);
        WaitFlag<HardEvent::MTE3_V>(i & 1);
    }
}
extern "C" __global__ __aicore__ void static_v3(GM_ADDR x, GM_ADDR y, GM_ADDR z) { static_add<3>(x, y, z); }
extern "C" __global__ __aicore__ void static_v4(GM_ADDR x, GM_ADDR y, GM_ADDR z) { static_add<4>(x, y, z); }

// ---------------------------------------------------------------- the page's write conflicts
// dst at 0x1FE00 with block stride N: 8 repeats of Adds(dst, src, 1), src contiguous at 0.
int32_t g_stride = 16;
extern "C" __global__ __aicore__ void stride_adds(GM_ADDR out) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 192 * 1024 - 8 * 1024);  // the top 8 KB stay free, as an API temp reserve
    LocalTensor<float> all = buf.Get<float>();
    LocalTensor<float> src = all;
    LocalTensor<float> dst = all[0x1FE00 / sizeof(float)];
    Duplicate(src, 2.0f, 64 * 8);
    PipeBarrier<PIPE_V>();
    UnaryRepeatParams p;
    p.dstBlkStride = static_cast<uint16_t>(g_stride);
    p.srcBlkStride = 1;
    p.dstRepStride = 1;
    p.srcRepStride = 8;
    Adds(dst, src, 1.0f, 64, 8, p);
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
    GlobalTensor<float> o;
    o.SetGlobalBuffer((__gm__ float*)out, 8);
    for (int32_t r = 0; r < 8; ++r) o.SetValue(r, dst.GetValue(r * 8));  // repeat r's first element
}

int check_add(const float* x, const float* y, const float* z, int32_t n, const char* name) {
    for (int32_t i = 0; i < n; ++i)
        if (z[i] != x[i] + y[i]) {
            std::printf("mismatch %s at %d: %g != %g\n", name, i, z[i], x[i] + y[i]);
            return 1;
        }
    std::printf("ok %s\n", name);
    return 0;
}

int run_elementwise(const char* kind, const char* variant) {
    const bool is_add = std::strcmp(kind, "add") == 0;
    const int32_t n = is_add ? ADD_LEN : ST_TOTAL;
    float* x = reinterpret_cast<float*>(AscendC::GmAlloc(n * sizeof(float)));
    float* y = reinterpret_cast<float*>(AscendC::GmAlloc(n * sizeof(float)));
    float* z = reinterpret_cast<float*>(AscendC::GmAlloc(n * sizeof(float)));
    for (int32_t i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 101) * 0.5f;
        y[i] = static_cast<float>(i % 7) - 3.0f;
    }
    auto* xb = reinterpret_cast<uint8_t*>(x);
    auto* yb = reinterpret_cast<uint8_t*>(y);
    auto* zb = reinterpret_cast<uint8_t*>(z);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    std::string v = variant;
    if (is_add && v == "v1") ICPU_RUN_KF(add_v1, 1, xb, yb, zb);
    else if (is_add && v == "v2") ICPU_RUN_KF(add_v2, 1, xb, yb, zb);
    else if (!is_add && v == "v3") ICPU_RUN_KF(static_v3, ST_CORES, xb, yb, zb);
    else if (!is_add && v == "v4") ICPU_RUN_KF(static_v4, ST_CORES, xb, yb, zb);
    else {
        std::printf("unknown variant %s %s\n", kind, variant);
        return 2;
    }
    int rc = ascx_emu::tm::timing_only() ? 0 : check_add(x, y, z, n, (std::string(kind) + " " + v).c_str());
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
    return rc;
}

int run_stride(int32_t stride) {
    g_stride = stride;
    float* out = reinterpret_cast<float*>(AscendC::GmAlloc(8 * sizeof(float)));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(stride_adds, 1, reinterpret_cast<uint8_t*>(out));
    int rc = 0;
    if (!ascx_emu::tm::timing_only())
        for (int32_t r = 0; r < 8; ++r)
            if (out[r] != 3.0f) rc = 1;
    std::printf(rc ? "mismatch stride %d\n" : "ok stride %d\n", stride);
    AscendC::GmFree(out);
    return rc;
}

}  // namespace

int32_t main(int32_t argc, char* argv[]) {
    if (argc == 3 && std::strcmp(argv[1], "stride") == 0) return run_stride(std::atoi(argv[2]));
    if (argc == 3) return run_elementwise(argv[1], argv[2]);
    std::printf("usage: %s add v1|v2 | static v3|v4 | stride N\n", argv[0]);
    return 2;
}
