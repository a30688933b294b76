// Unit cases of the APIs added for public samples (issue 26 item 3), batched in one program:
// `./units_more` runs them all on one AIV core and prints `name v0 v1 ...` lines;
// `./units_more assert_fail` stops on a kernel assert(cond, fmt, ...), `./units_more broadcast_bad`
// on a Broadcast whose shapes do not broadcast, `./units_more pool_full` on a TBufPool asked for
// more buffers than its bufIDSize, `./units_more alloc_full` on a LocalMemAllocator past the UB,
// `./units_more list_index` on a ListTensorDesc index past its list, `./units_more pad_unaligned`
// on a Pad whose padded width is not 32 B aligned,
// `static_misaligned` / `static_past_end` on a LocalTensor(pos, addr, tileSize) off 32 B or past the UB.
// Hazard detection stays on.
#include "kernel_operator.h"
#include "graph/tensor.h"  // ge::Shape for PadTilingFunc, as the public Pad samples' tiling files include it
#include "kernel_tiling/kernel_tiling.h"

#include <cstdio>
#include <string>
#include <type_traits>

// After kernel_tiling.h the host names the kernel tiling structs unqualified (the public Pad /
// UnPad samples' main.cpp: sizeof(PadTiling)), and `using namespace AscendC` keeps them unambiguous.
static_assert(std::is_same<::PadTiling, AscendC::tiling::PadTiling>::value, "PadTiling at global scope");
static_assert(std::is_same<::UnPadTiling, optiling::UnPadTiling>::value, "UnPadTiling at global scope");
using namespace AscendC;

static std::string g_case;
static uint64_t* g_list = nullptr;  // a ListTensorDesc layout built by main
static PadTiling g_pad1, g_pad2;     // host tilings (main): 16 x 15 half; 8 x 16 float with 14 columns of data
static UnPadTiling g_unpad;          // 8 x 16 half

namespace {
void print(const char* name, const float* v, int n)
{
    std::printf("%s", name);
    for (int i = 0; i < n; ++i) std::printf(" %.9g", static_cast<double>(v[i]));
    std::printf("\n");
}
}  // namespace

extern "C" __global__ __aicore__ void units_more(GM_ADDR in, GM_ADDR out, GM_ADDR zeroed)
{
    if (g_case == "assert_fail") {
        int n = 3;
        assert(n == 4, "n is %d, expected %d", n, 4);
        return;
    }
    TPipe pipe;
    TPipe* pp = GetTPipePtr();
    // event ids: Fetch gives a free id without taking it; Alloc takes it; Release frees it
    TEventID f0 = pp->FetchEventID<HardEvent::V_MTE3>();
    TEventID f1 = pp->FetchEventID(HardEvent::V_MTE3);
    TEventID a0 = pp->AllocEventID<HardEvent::V_MTE3>();
    TEventID a1 = pp->AllocEventID<HardEvent::V_MTE3>();
    pp->ReleaseEventID<HardEvent::V_MTE3>(a0);
    TEventID f2 = pp->FetchEventID<HardEvent::V_MTE3>();
    float ids[5] = {float(f0), float(f1), float(a0), float(a1), float(f2)};
    print("event_ids", ids, 5);
    pp->ReleaseEventID<HardEvent::V_MTE3>(a1);

    // InitOutput (before InitBuffer, as InitGlobalMemory): 64 floats of `zeroed` set to 1.5
    GlobalTensor<float> zg;
    zg.SetGlobalBuffer((__gm__ float*)zeroed, 64);
    InitOutput(zg, 64, 1.5f);

    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> x = buf.Get<float>();
    LocalTensor<float> y = x[256];
    GlobalTensor<float> ig, og;
    ig.SetGlobalBuffer((__gm__ float*)in, 256);
    og.SetGlobalBuffer((__gm__ float*)out, 256);
    ig.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
    DataCopy(x, ig, 64);
    // the intrinsic forms order MTE2 -> V and V -> MTE3 (an event id of type event_t)
    event_t e = static_cast<event_t>(pp->FetchEventID(HardEvent::MTE2_V));
    set_flag(PIPE_MTE2, PIPE_V, e);
    wait_flag(PIPE_MTE2, PIPE_V, e);
    Gelu(y, x, 64);
    FasterGelu(y[64], x, 64);
    FasterGeluV2(y[128], x, 64);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
    DataCopy(og, y, 192);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    // LocalTensor operators: a[i] views, (i) references, SetAddrWithOffset, whole-tensor a + b
    LocalTensor<float> a = x[512], b = x[576];
    a.SetBufferLen(64);
    b.SetBufferLen(64);
    for (uint32_t i = 0; i < 64; ++i) {
        a(i) = static_cast<float>(i);           // operator() as a left value
        b.SetValue(i, 2.0f + static_cast<float>(i % 4));
    }
    LocalTensor<float> s;
    s.SetAddrWithOffset(x, 640);  // x's element 640
    s.SetBufferLen(64);
    s = a + b;
    LocalTensor<float> m = x[704];
    m.SetBufferLen(64);
    PipeBarrier<PIPE_V>();
    m = s * b;
    PipeBarrier<PIPE_V>();
    LocalTensor<float> q = x[768];
    q.SetBufferLen(64);
    q = m / b;
    PipeBarrier<PIPE_V>();
    LocalTensor<float> d = x[832];
    d.SetBufferLen(64);
    d = q - a;
    LocalTensor<uint16_t> u = x[896].ReinterpretCast<uint16_t>(), w = x[928].ReinterpretCast<uint16_t>(),
                          ao = x[960].ReinterpretCast<uint16_t>(), oo = x[992].ReinterpretCast<uint16_t>();
    for (uint32_t i = 0; i < 64; ++i) {
        u(i) = static_cast<uint16_t>(0x0F0F + i);
        w(i) = static_cast<uint16_t>(0x00FF);
    }
    ao.SetBufferLen(64);
    oo.SetBufferLen(64);
    ao = u & w;
    oo = u | w;
    SetFlag<HardEvent::V_S>(EVENT_ID1);
    WaitFlag<HardEvent::V_S>(EVENT_ID1);
    float ops[6 * 64];
    for (uint32_t i = 0; i < 64; ++i) {
        ops[i] = s(i);                          // operator() as a right value
        ops[64 + i] = m.GetValue(i);
        ops[128 + i] = q(i);
        ops[192 + i] = d(i);
        ops[256 + i] = static_cast<float>(ao(i));
        ops[320 + i] = static_cast<float>(oo(i));
    }
    print("tensor_ops", ops, 6 * 64);
    float sizes[2] = {static_cast<float>(s.GetSize()), static_cast<float>(s.GetPhyAddr() - x.GetPhyAddr())};
    print("tensor_sizes", sizes, 2);
    // Broadcast: [3, 1] -> [3, 5] (axis 1, k not 32 B aligned), [1, 8] -> [4, 8] (axis 0), [1] -> [10]
    TBuf<TPosition::VECCALC> bbuf;
    pipe.InitBuffer(bbuf, 2048);
    LocalTensor<float> bsrc = bbuf.Get<float>(), bdst = bsrc[64];
    for (uint32_t i = 0; i < 9; ++i) bsrc(i) = 1.0f + static_cast<float>(i);
    const uint32_t d31[2] = {3, 5}, s31[2] = {3, 1}, d18[2] = {4, 8}, s18[2] = {1, 8}, d1[1] = {10}, s1[1] = {1};
    Broadcast<float, 2, 1>(bdst, bsrc, d31, s31);
    Broadcast<float, 2, 0>(bdst[64], bsrc, d18, s18);
    BroadCast<float, 1, 0>(bdst[128], bsrc[8], d1, s1);  // the 8.0 spelling
    if (g_case == "broadcast_bad") {
        const uint32_t bad[2] = {2, 1};
        Broadcast<float, 2, 1>(bdst, bsrc, d31, bad);
    }
    SetFlag<HardEvent::V_S>(EVENT_ID2);
    WaitFlag<HardEvent::V_S>(EVENT_ID2);
    float bc[15 + 32 + 10];
    for (uint32_t i = 0; i < 15; ++i) bc[i] = bdst(i);
    for (uint32_t i = 0; i < 32; ++i) bc[15 + i] = bdst(64 + i);
    for (uint32_t i = 0; i < 10; ++i) bc[47 + i] = bdst(128 + i);
    print("broadcast", bc, 57);
    // TBufPool: pool A (1 KB) and pool B over the same bytes; a TBuf and a queue from A, a
    // sub-pool of A, a TBuf from B; offsets printed relative to pool A's first buffer
    TBufPool<TPosition::VECCALC> poolA;
    TBufPool<TPosition::VECCALC, 2> poolB;
    pipe.InitBufPool(poolA, 1024);
    pipe.InitBufPool(poolB, 512, poolA);
    TBuf<TPosition::VECCALC> pa0, pb0, ps0;
    TQue<TPosition::VECOUT, 1> pq;
    TBufPool<TPosition::VECCALC, 1> sub;
    poolA.InitBuffer(pa0, 100);  // rounded to 128 B
    poolA.InitBuffer(pq, 2, 256);
    poolA.InitBufPool(sub, 128);
    sub.InitBuffer(ps0, 64);
    poolB.InitBuffer(pb0, 64);
    const uint64_t base = pa0.Get<float>().GetPhyAddr();
    LocalTensor<float> q0 = pq.AllocTensor<float>(), q1 = pq.AllocTensor<float>();
    float pool_offs[5] = {static_cast<float>(q0.GetPhyAddr() - base), static_cast<float>(q1.GetPhyAddr() - base),
                          static_cast<float>(ps0.Get<float>().GetPhyAddr() - base), static_cast<float>(pb0.Get<float>().GetPhyAddr() - base),
                          static_cast<float>(pipe.Used(0) - base)};
    print("pool_offsets", pool_offs, 5);
    pq.FreeTensor(q0);
    pq.FreeTensor(q1);
    poolA.Reset();
    if (g_case == "pool_full") {
        TBuf<TPosition::VECCALC> big;
        sub.InitBuffer(big, 32);  // the sub-pool holds one buffer (bufIDSize 1)
    }
    uint32_t dims[2] = {8, 8};
    DumpTensor(x, 7, 4, ShapeInfo(2, dims));
    DumpAccChkPoint(x, 9, 2, 3);  // elements 2..4 of x
    LocalTensor<float> shaped = x;
    const uint32_t dims3[3] = {2, 3, 4};
    shaped.SetShapeInfo(ShapeInfo(3, dims3));
    const ShapeInfo got = shaped.GetShapeInfo();
    float shape_out[5] = {static_cast<float>(got.shapeDim), static_cast<float>(got.shape[0]), static_cast<float>(got.shape[1]),
                          static_cast<float>(got.shape[2]), static_cast<float>(x.GetShapeInfo().shapeDim)};
    print("shape_info", shape_out, 5);
    float c0 = static_cast<float>(tik2::DEFAULT_C0_SIZE);  // the 2023 namespace name is an alias
    print("c0", &c0, 1);

    // Pad / UnPad with the host tilings: 16 x 15 half + one column of 7 -> 16 x 16; the two
    // redundant columns of an 8 x 16 float refilled with -1; UnPad drops 2 columns of 8 x 16 half
    {
        TBuf<TPosition::VECCALC> pbuf;
        pipe.InitBuffer(pbuf, 4096);
        LocalTensor<half> ph = pbuf.Get<half>();          // [0, 1024) B: 16 x 15 half in, then 16 x 16 out at 512 B
        LocalTensor<float> pf = pbuf.GetWithOffset<float>(128, 1024);  // 8 x 16 float, in place
        LocalTensor<half> uh = pbuf.GetWithOffset<half>(128, 1536);    // 8 x 16 half in, 8 x 14 out at 2048 B
        for (int i = 0; i < 16 * 15; ++i) ph.SetValue(i, static_cast<half>(static_cast<float>(i % 15)));
        for (int i = 0; i < 8 * 16; ++i) pf.SetValue(i, static_cast<float>(i));
        for (int i = 0; i < 8 * 16; ++i) uh.SetValue(i, static_cast<half>(static_cast<float>(i % 16)));
        LocalTensor<half> phOut = pbuf.GetWithOffset<half>(256, 512);
        LocalTensor<half> uhOut = pbuf.GetWithOffset<half>(112, 2048);
        PadParams p1;
        p1.rightPad = 1;
        p1.padValue = 7;
        Pad(phOut, ph, p1, g_pad1);
        PadParams p2;
        p2.rightPad = 2;
        p2.padValue = -1;
        Pad(pf, pf, p2, g_pad2);
        UnPadParams u;
        u.rightPad = 2;
        UnPad(uhOut, uh, u, g_unpad);
        SetFlag<HardEvent::V_S>(EVENT_ID2);
        WaitFlag<HardEvent::V_S>(EVENT_ID2);
        float pr[16 * 3 + 16 * 2 + 14 * 2];
        int n = 0;
        for (int r = 0; r < 3; ++r)
            for (int j = 0; j < 16; ++j) pr[n++] = static_cast<float>(phOut.GetValue(r * 16 + j));
        for (int r = 0; r < 2; ++r)
            for (int j = 0; j < 16; ++j) pr[n++] = pf.GetValue(r * 16 + j);
        for (int r = 0; r < 2; ++r)
            for (int j = 0; j < 14; ++j) pr[n++] = static_cast<float>(uhOut.GetValue(r * 14 + j));
        print("pad_unpad", pr, n);
        if (g_case == "pad_unaligned") {
            PadParams bad;
            bad.rightPad = 2;  // 15 + 2 = 17 halves: not 32 B
            Pad(phOut, ph, bad, g_pad1);
        }
    }

    // ListTensorDesc / TensorDesc over the layout main built (two tensors, 2-d and 3-d)
    ListTensorDesc list(reinterpret_cast<__gm__ void*>(g_list), 10 * 8, 2);
    uint64_t shape_buf[4] = {7, 7, 7, 7};  // GetDesc writes the dim shape words only
    TensorDesc<float> desc;
    desc.SetShapeAddr(shape_buf);
    list.GetDesc(desc, 1);
    GlobalTensor<float> second = desc.GetDataObj();
    float lt[10] = {static_cast<float>(list.GetSize()), static_cast<float>(desc.GetDim()), static_cast<float>(desc.GetIndex()),
                    static_cast<float>(desc.GetShape(0)), static_cast<float>(desc.GetShape(1)), static_cast<float>(desc.GetShape(2)),
                    static_cast<float>(second.GetSize()), second.GetValue(5), list.GetDataPtr<float>(0)[3],
                    desc.GetDataPtr() == list.GetDataPtr<float>(1) ? 1.0f : 0.0f};
    print("list_tensor_desc", lt, 10);
    float sb[4] = {static_cast<float>(shape_buf[0]), static_cast<float>(shape_buf[1]), static_cast<float>(shape_buf[2]),
                   static_cast<float>(shape_buf[3])};
    print("list_shape_buf", sb, 4);
    if (g_case == "list_index") list.GetDataPtr<float>(2);

    // LocalMemAllocator (last: it lays tensors from UB byte 0, over the TPipe buffers above)
    PipeBarrier<PIPE_ALL>();
    LocalMemAllocator<> alloc;
    LocalTensor<float> t0 = alloc.Alloc<float, 10>();                      // 40 B -> 64 B at 0
    LocalTensor<half> t1 = alloc.Alloc<TPosition::VECIN, half, 16>();      // 32 B at 64
    LocalTensor<float> t2 = alloc.Alloc<float>(8);                          // 32 B at 96
    for (uint32_t i = 0; i < 8; ++i) t0(i) = 0.5f * static_cast<float>(i);
    Adds(t2, t0, 1.0f, 8);
    SetFlag<HardEvent::V_S>(EVENT_ID3);
    WaitFlag<HardEvent::V_S>(EVENT_ID3);
    float am[13] = {static_cast<float>(t0.GetPhyAddr()), static_cast<float>(t1.GetPhyAddr()), static_cast<float>(t2.GetPhyAddr()),
                    static_cast<float>(alloc.GetCurAddr()), static_cast<float>(t0.GetSize())};
    for (uint32_t i = 0; i < 8; ++i) am[5 + i] = t2(i);
    print("local_mem_allocator", am, 13);
    if (g_case == "alloc_full") alloc.Alloc<float>(1u << 20);

    // LocalTensor(pos, addr, tileSize): static tensors at chosen UB bytes (past the allocator's)
    LocalTensor<float> sx(TPosition::VECCALC, 256, 8);
    LocalTensor<float> sz(TPosition::VECCALC, 512, 8);
    for (uint32_t i = 0; i < 8; ++i) sx(i) = static_cast<float>(i) - 2.0f;
    Muls(sz, sx, 3.0f, 8);
    SetFlag<HardEvent::V_S>(EVENT_ID4);
    WaitFlag<HardEvent::V_S>(EVENT_ID4);
    float st[10] = {static_cast<float>(sz.GetPhyAddr()), static_cast<float>(sz.GetSize())};
    for (uint32_t i = 0; i < 8; ++i) st[2 + i] = sz(i);
    print("static_tensor", st, 10);
    // InitSocState: after SetAtomicAdd, the reset makes the second copy to GM overwrite
    SetFlag<HardEvent::V_MTE3>(EVENT_ID5);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID5);
    DataCopy(og[192], sz, 8);
    SetAtomicAdd<float>();
    InitSocState();
    DataCopy(og[192], sz, 8);
    if (g_case == "static_misaligned") LocalTensor<float> bad(TPosition::VECCALC, 100, 8);
    if (g_case == "static_past_end") LocalTensor<float> bad(TPosition::VECCALC, 0, 1u << 20);
}

int main(int argc, char** argv)
{
    g_case = argc > 1 ? argv[1] : "";
    uint8_t* in = GmAlloc(256 * sizeof(float));
    uint8_t* out = GmAlloc(256 * sizeof(float));
    uint8_t* zeroed = GmAlloc(64 * sizeof(float));
    float* xi = reinterpret_cast<float*>(in);
    for (int i = 0; i < 64; ++i) xi[i] = -4.0f + 0.125f * static_cast<float>(i);
    // the ListTensorDesc layout: pointer list at byte 64 (8 words before it); tensor 0 [2, 4], tensor 1 [2, 3, 4]
    float* t0 = reinterpret_cast<float*>(GmAlloc(8 * sizeof(float)));
    float* t1 = reinterpret_cast<float*>(GmAlloc(24 * sizeof(float)));
    for (int i = 0; i < 8; ++i) t0[i] = 100.0f + static_cast<float>(i);
    for (int i = 0; i < 24; ++i) t1[i] = 200.0f + static_cast<float>(i);
    uint32_t pmax = 0, pmin = 0;
    GetPadMaxMinTmpSize(ge::Shape({16, 15}), sizeof(half), pmax, pmin);
    PadTilingFunc(ge::Shape({16, 15}), ge::Shape({16, 15}), pmin, sizeof(half), g_pad1);
    PadTilingFunc(ge::Shape({8, 16}), ge::Shape({8, 14}), pmin, sizeof(float), g_pad2);
    UnPadTilingFunc(ge::Shape(ge::Shape({8, 16}).GetDims()), pmin, sizeof(half), g_unpad);  // GetDims, as the UnPad sample
    g_list = reinterpret_cast<uint64_t*>(GmAlloc(12 * sizeof(uint64_t)));
    const uint64_t words[12] = {64, 2, 2, 4, (1ull << 32) | 3, 2, 3, 4, reinterpret_cast<uintptr_t>(t0), reinterpret_cast<uintptr_t>(t1), 0, 0};
    for (int i = 0; i < 12; ++i) g_list[i] = words[i];
    ICPU_RUN_KF(units_more, 1, in, out, zeroed);
    print("x", xi, 64);
    print("gelu", reinterpret_cast<float*>(out), 64);
    print("faster_gelu", reinterpret_cast<float*>(out) + 64, 64);
    print("faster_gelu_v2", reinterpret_cast<float*>(out) + 128, 64);
    print("init_soc_state", reinterpret_cast<float*>(out) + 192, 8);
    print("init_output", reinterpret_cast<float*>(zeroed), 64);
    GmFree(in);
    GmFree(out);
    GmFree(zeroed);
    GmFree(t0);
    GmFree(t1);
    GmFree(g_list);
    return 0;
}
