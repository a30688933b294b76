// Unit checks of the APIs in ascx_emu/ops_extra.h. Without arguments every section prints
// "name v0 v1 ..." lines (tests/emulator/test_semantics_extra.py holds the hand-computed
// expectations); `./units_extra <case>` runs one kernel that breaks a documented rule.
#include "kernel_operator.h"
#include <cstdio>
#include <functional>
#include <string>

using namespace AscendC;

static std::function<void()> g_body;
static uint8_t* g_gm = nullptr;
extern "C" __global__ __aicore__ void unit_kernel() { g_body(); }
static void run(std::function<void()> body) {
    g_body = std::move(body);
    SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(unit_kernel, 1);
}
template <typename T> static void dump(const char* name, const LocalTensor<T>& t, int n) {
    std::printf("%s", name);
    for (int i = 0; i < n; ++i) {
        if constexpr (std::is_integral<T>::value) std::printf(" %lld", static_cast<long long>(t.GetValue(i)));
        else std::printf(" %.9g", static_cast<double>(ascx_emu::to_d(t.GetValue(i))));
    }
    std::printf("\n");
}
template <typename T> static void fill(const LocalTensor<T>& t, int n, std::function<double(int)> f) {
    for (int i = 0; i < n; ++i) t.SetValue(i, static_cast<T>(f(i)));
}

static void units() {
    std::printf("std_maxmin %d %d %g\n", Std::max(3, 7), Std::min(3, 7), static_cast<double>(Std::max(2.5f, -1.0f)));
    run([] {  // Fill on GM, before any InitBuffer
        GlobalTensor<float> g;
        g.SetGlobalBuffer((__gm__ float*)g_gm, 16);
        Fill(g, 10, 3.5f);
        std::printf("fill_gm");
        for (int i = 0; i < 16; ++i) std::printf(" %g", static_cast<double>(g.GetValue(i)));
        std::printf("\n");
    });
    run([] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> b0, b1, b2, b3;
        pipe.InitBuffer(b0, 4096);
        pipe.InitBuffer(b1, 4096);
        pipe.InitBuffer(b2, 4096);
        pipe.InitBuffer(b3, 4096);
        {  // reductions, mask/repeat forms (float: 64 elements per repeat)
            auto d = b0.Get<float>(), s = b1.Get<float>(), w = b2.Get<float>();
            fill(s, 256, [](int i) { return static_cast<double>((i * 37) % 128) - 64.0; });
            ReduceMax(d, s, w, 32, 2, 8, true);
            std::printf("reduce_max_rep %g %u\n", static_cast<double>(d.GetValue(0)), d.ReinterpretCast<uint32_t>().GetValue(1));
            uint64_t bits[2] = {0xF0F0F0F0F0F0F0F0ull, 0};
            ReduceMin(d, s, w, bits, 2, 16, true);
            std::printf("reduce_min_rep %g %u\n", static_cast<double>(d.GetValue(0)), d.ReinterpretCast<uint32_t>().GetValue(1));
            ReduceSum(d, s, w, 16, 3, 8);
            dump("reduce_sum_rep", d, 1);
        }
        {  // BlockReduce / PairReduceSum
            auto d = b0.Get<half>(), s = b1.Get<half>();
            fill(s, 128, [](int i) { return static_cast<double>(i % 17); });
            fill(d, 16, [](int) { return -1.0; });
            BlockReduceSum(d, s, 1, 128, 1, 1, 8);
            dump("block_sum_half", d, 9);
            auto df = b0.Get<float>(), sf = b1.Get<float>();
            fill(sf, 128, [](int i) { return static_cast<double>((i * 5) % 67); });
            fill(df, 24, [](int) { return -1.0; });
            BlockReduceMax(df, sf, 2, 60, 1, 1, 8);
            dump("block_max_float", df, 16);
            fill(df, 40, [](int) { return -1.0; });
            PairReduceSum(df, sf, 1, 64, 1, 1, 8);
            dump("pair_sum_float", df, 33);
        }
        {  // GatherMask
            auto d = b0.Get<float>(), s = b1.Get<float>();
            auto pat = b2.Get<uint32_t>();
            fill(s, 128, [](int i) { return static_cast<double>(i); });
            uint64_t cnt = 0;
            GatherMask(d, s, 1, false, 0, GatherMaskParams(1, 1, 8, 0), cnt);
            std::printf("gm_even %llu", (unsigned long long)cnt);
            for (int i = 0; i < 4; ++i) std::printf(" %g", static_cast<double>(d.GetValue(i)));
            std::printf(" %g\n", static_cast<double>(d.GetValue(31)));
            GatherMask(d, s, 4, false, 0, GatherMaskParams(1, 2, 8, 0), cnt);
            std::printf("gm_second_of_4 %llu %g %g %g\n", (unsigned long long)cnt, static_cast<double>(d.GetValue(0)),
                        static_cast<double>(d.GetValue(1)), static_cast<double>(d.GetValue(31)));
            pat.SetValue(0, 0x80000001u);
            pat.SetValue(1, 0x3u);
            GatherMask(d, s, pat, false, 0, GatherMaskParams(1, 1, 8, 0), cnt);
            std::printf("gm_custom %llu", (unsigned long long)cnt);
            for (int i = 0; i < 4; ++i) std::printf(" %g", static_cast<double>(d.GetValue(i)));
            std::printf("\n");
            GatherMask(d, s, 7, true, 10, GatherMaskParams(1, 5, 8, 0), cnt);
            std::printf("gm_counter %llu %g %g\n", (unsigned long long)cnt, static_cast<double>(d.GetValue(0)), static_cast<double>(d.GetValue(9)));
        }
        {  // Gather: byte offsets plus a byte base address
            auto d = b0.Get<half>(), s = b1.Get<half>();
            auto off = b2.Get<uint32_t>();
            fill(s, 64, [](int i) { return 2.0 * i; });
            const uint32_t o[4] = {6, 0, 2, 30};
            for (int i = 0; i < 4; ++i) off.SetValue(i, o[i]);
            Gather(d, s, off, 2, 4);
            dump("gather", d, 4);
        }
        {  // Sort32 + MrgSort
            auto sc = b1.Get<float>();
            auto ix = b2.Get<uint32_t>();
            auto srt = b0.Get<float>();
            fill(sc, 64, [](int i) { return static_cast<double>((i * 7) % 16); });
            for (int i = 0; i < 64; ++i) ix.SetValue(i, static_cast<uint32_t>(i));
            Sort32(srt, sc, ix, 2);
            std::printf("sort32");
            for (int i = 0; i < 6; ++i) std::printf(" %g:%u", static_cast<double>(srt.GetValue(2 * i)), srt.ReinterpretCast<uint32_t>().GetValue(2 * i + 1));
            std::printf("\n");
            auto merged = b3.Get<float>();
            MrgSortSrcList<float> lists(srt, srt[64], srt, srt);
            uint16_t lens[4] = {32, 32, 0, 0};
            MrgSort(merged, lists, MrgSort4Info(lens, false, 0b0011, 1));
            std::printf("mrgsort");
            for (int i = 0; i < 64; ++i) std::printf(" %g", static_cast<double>(merged.GetValue(2 * i)));
            std::printf(" idx %u %u %u\n", merged.ReinterpretCast<uint32_t>().GetValue(1), merged.ReinterpretCast<uint32_t>().GetValue(3),
                        merged.ReinterpretCast<uint32_t>().GetValue(5));
            auto hs = b1.Get<half>();
            fill(hs, 32, [](int i) { return static_cast<double>(i % 5); });
            Sort32(srt.ReinterpretCast<half>(), hs, ix, 1);
            auto raw = srt.ReinterpretCast<uint16_t>();
            std::printf("sort32_half_layout %u %u %u %u\n", raw.GetValue(0), raw.GetValue(1), raw.GetValue(2), raw.GetValue(3));
        }
        {  // vector Copy: half, mask 64, 2 repeats, src repeat stride 16 blocks
            auto d = b0.Get<half>(), s = b1.Get<half>();
            fill(s, 512, [](int i) { return static_cast<double>(i); });
            fill(d, 256, [](int) { return -1.0; });
            Copy(d, s, 64, 2, CopyRepeatParams(1, 1, 8, 16));
            std::printf("copy %g %g %g %g %g\n", static_cast<double>(d.GetValue(0)), static_cast<double>(d.GetValue(63)), static_cast<double>(d.GetValue(64)),
                        static_cast<double>(d.GetValue(128)), static_cast<double>(d.GetValue(191)));
        }
        {  // Transpose 16 x 16
            auto d = b0.Get<half>(), s = b1.Get<half>();
            fill(s, 256, [](int i) { return static_cast<double>(i); });
            Transpose(d, s);
            std::printf("transpose %g %g %g %g\n", static_cast<double>(d.GetValue(1)), static_cast<double>(d.GetValue(16)),
                        static_cast<double>(d.GetValue(17 * 3)), static_cast<double>(d.GetValue(255)));
        }
        {  // Axpy
            auto d = b0.Get<float>(), s = b1.Get<float>();
            fill(d, 8, [](int) { return 1.0; });
            fill(s, 8, [](int i) { return static_cast<double>(i); });
            Axpy(d, s, 0.5f, 8);
            dump("axpy", d, 8);
            auto hs = b2.Get<half>();
            fill(hs, 8, [](int i) { return static_cast<double>(i) + 0.25; });
            Axpy(d, hs, half(2.0f), 8);
            dump("axpy_mixed", d, 8);
        }
        {  // shifts and bitwise ops
            auto d = b0.Get<int16_t>(), s = b1.Get<int16_t>(), t = b2.Get<int16_t>();
            const int16_t v[4] = {-8, 5, 1, -1};
            for (int i = 0; i < 4; ++i) s.SetValue(i, v[i]);
            for (int i = 4; i < 16; ++i) s.SetValue(i, 0);
            ShiftRight(d, s, static_cast<int16_t>(1), 16);
            dump("shr_i16", d, 4);
            ShiftLeft(d, s, static_cast<int16_t>(3), 16);
            dump("shl_i16", d, 4);
            auto du = b0.Get<uint16_t>(), su = b1.Get<uint16_t>();
            ShiftRight(du, su, static_cast<uint16_t>(12), 16);
            dump("shr_u16", du, 4);
            const int16_t w[4] = {0x0F0F, 0x00FF, -1, 0};
            for (int i = 0; i < 4; ++i) t.SetValue(i, w[i]);
            And(d, s, t, 16);
            dump("and_i16", d, 4);
            Or(d, s, t, 16);
            dump("or_i16", d, 4);
            Not(d, t, 16);
            dump("not_i16", d, 4);
        }
        {  // integer vector arithmetic: int32 / int16 wrap (two's complement)
            auto d = b0.Get<int32_t>(), s = b1.Get<int32_t>(), t = b2.Get<int32_t>();
            const int32_t v[4] = {2147483647, -2147483647 - 1, 46341, -7};
            const int32_t w[4] = {1, -1, 46341, 3};
            for (int i = 0; i < 8; ++i) { s.SetValue(i, i < 4 ? v[i] : 0); t.SetValue(i, i < 4 ? w[i] : 0); }
            Add(d, s, t, 8);
            dump("add_i32", d, 4);
            Sub(d, s, t, 8);
            dump("sub_i32", d, 4);
            Mul(d, s, t, 8);
            dump("mul_i32", d, 4);
            Max(d, s, t, 8);
            dump("max_i32", d, 4);
            Muls(d, s, static_cast<int32_t>(-1), 8);
            dump("muls_i32", d, 4);
            Adds(d, s, static_cast<int32_t>(10), 8);
            dump("adds_i32", d, 4);
            Mins(d, s, static_cast<int32_t>(0), 8);
            dump("mins_i32", d, 4);
            auto h = b0.Get<int16_t>(), hs = b1.Get<int16_t>();
            const int16_t hv[4] = {32767, -32768, 300, -3};
            for (int i = 0; i < 16; ++i) hs.SetValue(i, i < 4 ? hv[i] : 0);
            Mul(h, hs, hs, 16);
            dump("mul_i16", h, 4);
        }
        {  // CompareScalar, repeat Compare, Select modes
            auto s = b1.Get<float>(), s2 = b3.Get<float>(), o = b2.Get<float>();
            auto m = b0.Get<uint8_t>();
            fill(s, 128, [](int i) { return static_cast<double>(i); });
            CompareScalar(m, s, 32.0f, CMPMODE::GE, 64);
            dump("cmps_ge", m, 8);
            Select(o, m, s, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
            std::printf("sel_scalar %g %g %g\n", static_cast<double>(o.GetValue(0)), static_cast<double>(o.GetValue(31)), static_cast<double>(o.GetValue(32)));
            fill(s2, 128, [](int i) { return static_cast<double>(127 - i); });
            Compare(m, s, s2, CMPMODE::LT, 64, 2, BinaryRepeatParams());
            dump("cmp_rep_lt", m, 16);
            fill(o, 128, [](int) { return 0.0; });
            Select(o, m, s, s2, SELMODE::VSEL_CMPMASK_SPR, 64, 2, BinaryRepeatParams());
            std::printf("sel_spr %g %g %g %g\n", static_cast<double>(o.GetValue(0)), static_cast<double>(o.GetValue(63)),
                        static_cast<double>(o.GetValue(64)), static_cast<double>(o.GetValue(127)));
        }
    });
}

static void negative(const std::string& c) {
    run([c] {
        TPipe pipe;
        if (c == "fill_after_initbuffer") {
            TBuf<TPosition::VECCALC> b;
            pipe.InitBuffer(b, 256);
            GlobalTensor<float> g;
            g.SetGlobalBuffer((__gm__ float*)g_gm, 16);
            Fill(g, 16, 0.0f);
            return;
        }
        TBuf<TPosition::VECCALC> b0, b1, b2;
        pipe.InitBuffer(b0, 1024);
        pipe.InitBuffer(b1, 1024);
        pipe.InitBuffer(b2, 1024);
        auto f0 = b0.Get<float>(), f1 = b1.Get<float>(), f2 = b2.Get<float>();
        uint64_t cnt = 0;
        if (c == "gather_misaligned") {
            auto off = b2.Get<uint32_t>();
            off.SetValue(0, 2);
            Gather(f0, f1, off, 0, 1);
        } else if (c == "gathermask_pattern") {
            GatherMask(f0, f1, 9, false, 0, GatherMaskParams(1, 1, 8, 0), cnt);
        } else if (c == "shift_range") {
            auto i0 = b0.Get<int32_t>(), i1 = b1.Get<int32_t>();
            ShiftLeft(i0, i1, 40, 8);
        } else if (c == "mrgsort_validbit") {
            MrgSortSrcList<float> l(f1, f2, f1, f2);
            uint16_t lens[4] = {4, 4, 0, 0};
            MrgSort(f0, l, MrgSort4Info(lens, false, 0b0101, 1));
        } else if (c == "transpose_inplace") {
            auto h = b0.Get<half>();
            Transpose(h, h);
        } else if (c == "reduce_repeat") {
            ReduceMax(f0, f1, f2, 64, 300, 8);
        } else if (c == "reduce_oob") {
            ReduceSum(f0, f1, f2, 64, 5, 8);
        } else if (c == "select_mode") {
            Select(f0, b2.Get<uint8_t>(), f1, 1.0f, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
        } else if (c == "initconst_ub") {
            InitConstValue(f0, InitConstValueParams<float>(1, 1, 0, 0.0f));
        } else if (c == "sort_repeat") {
            Sort32(f0, f1, b2.Get<uint32_t>(), 256);
        }
        std::printf("no error\n");
    });
}

int main(int argc, char** argv) {
    g_gm = GmAlloc(64 * sizeof(float));
    if (argc > 1) negative(argv[1]);
    else units();
    GmFree(g_gm);
    return 0;
}
