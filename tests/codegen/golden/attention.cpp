// Ascend C kernel `attention`, emitted by ascx from examples/attention.ir for ascend910b2.
// Kind: vector (AIV_MODE, blockDim 16).
// Regenerate instead of editing: ascx emit examples/attention.ir --passes fuse,online_softmax{block=64},tile{attn.i=64},double_buffer
// The emulator checks emitted code as written: its own flags only (no compiler auto-sync) and
// GlobalTensor views as hard bounds (docs/emulator.md, "Auto-sync and GM bounds").
#define ASCX_EMU_NO_AUTO_SYNC 1
#define ASCX_EMU_STRICT_GM_VIEWS 1
#include "kernel_operator.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

using namespace AscendC;

namespace {
constexpr int32_t BUFFER_NUM = 2;  // two buffers per queue: double buffering
// Scalar helpers with the IR's semantics (docs/ir.md, "Meaning"): conversions round to
// nearest even and saturate integers; integer arithmetic wraps in its type (computed in
// 64-bit unsigned, never a signed overflow); integer division truncates and x / 0 == 0.
const float ascx_inf = std::numeric_limits<float>::infinity();
const float ascx_nan = std::numeric_limits<float>::quiet_NaN();
template <typename T, typename S> __aicore__ inline T ascx_cvt(S x)
{
    if constexpr (std::is_integral<T>::value && std::is_integral<S>::value) {
        const int64_t v = static_cast<int64_t>(x);
        const int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
        return static_cast<T>(v < lo ? lo : v > hi ? hi : v);
    } else if constexpr (std::is_integral<T>::value) {
        const double d = static_cast<double>(static_cast<float>(x));
        if (std::isnan(d)) {
            return 0;
        }
        const double r = std::nearbyint(d);
        const double lo = static_cast<double>(std::numeric_limits<T>::min());
        const double hi = static_cast<double>(std::numeric_limits<T>::max());
        return static_cast<T>(r < lo ? lo : r > hi ? hi : r);
    } else {
        return T(static_cast<float>(x));
    }
}
template <typename T> __aicore__ inline T ascx_wrap(uint64_t v)
{
    return static_cast<T>(static_cast<typename std::make_unsigned<T>::type>(v));
}
template <typename T> __aicore__ inline T ascx_iadd(T a, T b) { return ascx_wrap<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
template <typename T> __aicore__ inline T ascx_isub(T a, T b) { return ascx_wrap<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
template <typename T> __aicore__ inline T ascx_imul(T a, T b) { return ascx_wrap<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
template <typename T> __aicore__ inline T ascx_ineg(T a) { return ascx_wrap<T>(uint64_t{0} - static_cast<uint64_t>(a)); }
template <typename T> __aicore__ inline T ascx_idiv(T a, T b)
{
    return b == 0 ? T(0) : b == T(-1) ? ascx_ineg<T>(a) : T(a / b);
}
// index arithmetic (quasi-affine): floor division and the remainder in 0..b-1 for b > 0 (the
// checker makes every `%` divisor and every index divisor positive); b <= 0 divides as ascx_idiv
template <typename T> __aicore__ inline T ascx_qdiv(T a, T b)
{
    if (b <= 0) return ascx_idiv<T>(a, b);
    T q = a / b;
    return (a % b != 0 && a < 0) ? T(q - 1) : q;
}
template <typename T> __aicore__ inline T ascx_qmod(T a, T b)
{
    T r = a % b;
    return r < 0 ? T(r + b) : r;
}
template <typename T> __aicore__ inline T ascx_max(T a, T b)
{
    if constexpr (!std::is_integral<T>::value) {
        if (a != a) return a;  // NaN propagates, as in numpy
    }
    return a >= b ? a : b;  // of 0.0 and -0.0, the first (the interpreter's `maximum`)
}
template <typename T> __aicore__ inline T ascx_min(T a, T b)
{
    if constexpr (!std::is_integral<T>::value) {
        if (a != a) return a;
    }
    return a <= b ? a : b;
}
template <typename T> __aicore__ inline T ascx_abs(T a)
{
    if constexpr (std::is_integral<T>::value) {
        return a < 0 ? ascx_ineg<T>(a) : a;
    } else {
        return std::signbit(static_cast<float>(a)) ? T(-a) : a;  // abs(-0.0) is 0.0, as numpy
    }
}
// Bits [e0, e1) of a mask-form vector instruction's 128-bit mask (m[0]: elements 0..63,
// m[1]: 64..127): the ragged repeat of a range known at run time (a causal mask's boundary).
__aicore__ inline void ascx_range_mask(int32_t e0, int32_t e1, uint64_t* m)
{
    for (int32_t w = 0; w < 2; ++w) {
        const int32_t a = e0 - 64 * w < 0 ? 0 : (e0 - 64 * w > 64 ? 64 : e0 - 64 * w);
        const int32_t b = e1 - 64 * w < 0 ? 0 : (e1 - 64 * w > 64 ? 64 : e1 - 64 * w);
        const uint64_t hi = b >= 64 ? ~uint64_t{0} : ((uint64_t{1} << b) - 1);
        const uint64_t lo = a >= 64 ? ~uint64_t{0} : ((uint64_t{1} << a) - 1);
        m[w] = a < b ? (hi & ~lo) : 0;
    }
}

}  // namespace

class KernelAttention {
    // the kernel's sizes and consts: class members, so no global name can clash with them
    static constexpr int32_t S = 1024;
    static constexpr int32_t D = 64;
    static inline const float scale = 0.125f;

public:
    __aicore__ inline KernelAttention() {}
    __aicore__ inline void Init(GM_ADDR Q, GM_ADDR K, GM_ADDR V, GM_ADDR M, GM_ADDR O)
    {
        workerIdx = static_cast<int32_t>(GetBlockIdx());
        QGm.SetGlobalBuffer((__gm__ half *)Q, 65536);
        KGm.SetGlobalBuffer((__gm__ half *)K, 65536);
        VGm.SetGlobalBuffer((__gm__ half *)V, 65536);
        MGm.SetGlobalBuffer((__gm__ half *)M, 1048576);
        OGm.SetGlobalBuffer((__gm__ half *)O, 65536);
        pipe.InitBuffer(inQueue_K_ub, BUFFER_NUM, 8192);
        pipe.InitBuffer(inQueue_M_ub, BUFFER_NUM, 8192);
        pipe.InitBuffer(outQueue_O_ub, BUFFER_NUM, 8192);
        pipe.InitBuffer(inQueue_Q_ub, BUFFER_NUM, 8192);
        pipe.InitBuffer(inQueue_V_ub, BUFFER_NUM, 8192);
        pipe.InitBuffer(buf_acc_ub, 16384);
        pipe.InitBuffer(buf_al_ub, 256);
        pipe.InitBuffer(buf_mb_ub, 256);
        pipe.InitBuffer(buf_ms_ub, 256);
        pipe.InitBuffer(buf_mx_ub, 256);
        pipe.InitBuffer(buf_s_ub, 16384);
        pipe.InitBuffer(buf_sm_ub, 256);
        pipe.InitBuffer(tmpBuf0, 49152);
    }
    __aicore__ inline void Process()
    {
        acc_ubLocal = buf_acc_ub.Get<float>();
        al_ubLocal = buf_al_ub.Get<float>();
        mb_ubLocal = buf_mb_ub.Get<float>();
        ms_ubLocal = buf_ms_ub.Get<float>();
        mx_ubLocal = buf_mx_ub.Get<float>();
        s_ubLocal = buf_s_ub.Get<float>();
        sm_ubLocal = buf_sm_ub.Get<float>();
        tmp0 = tmpBuf0.Get<uint8_t>();
        // 16 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 16) {
            int32_t i0Begin = 0 + workerIdx * 1;
            int32_t i0End = i0Begin + 1;
            CopyIn(i0Begin);
            for (int32_t i0 = i0Begin; i0 < i0End; ++i0) {
                if (i0 + 1 < i0End) {
                    CopyIn(i0 + 1);
                }
                Compute(i0);
                CopyOut(i0);
            }
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t i0)
    {
        Q_ubLocal = inQueue_Q_ub.AllocTensor<half>();
        DataCopy(Q_ubLocal, QGm[i0 * 4096], 4096);
        inQueue_Q_ub.EnQue(Q_ubLocal);
    }
    __aicore__ inline void CopyIn2(int32_t i0, int32_t jb)
    {
        K_ubLocal = inQueue_K_ub.AllocTensor<half>();
        DataCopy(K_ubLocal, KGm[jb * 4096], 4096);
        inQueue_K_ub.EnQue(K_ubLocal);
        M_ubLocal = inQueue_M_ub.AllocTensor<half>();
        DataCopy(M_ubLocal, MGm[i0 * 65536 + jb * 64], DataCopyParams(64, 4, 60, 0));
        inQueue_M_ub.EnQue(M_ubLocal);
        V_ubLocal = inQueue_V_ub.AllocTensor<half>();
        DataCopy(V_ubLocal, VGm[jb * 4096], 4096);
        inQueue_V_ub.EnQue(V_ubLocal);
    }
    __aicore__ inline void Compute2()
    {
        K_ubLocal = inQueue_K_ub.DeQue<half>();
        M_ubLocal = inQueue_M_ub.DeQue<half>();
        V_ubLocal = inQueue_V_ub.DeQue<half>();
        for (int32_t i = 0; i < 64; ++i) {
            Duplicate(s_ubLocal[i * 64], 0.0f, 64);
            Cast(tmp0.ReinterpretCast<float>(), Q_ubLocal[i * 64], RoundMode::CAST_NONE, 64);
            Cast(tmp0.ReinterpretCast<float>()[64], K_ubLocal, RoundMode::CAST_NONE, 4096);
            Mul(tmp0.ReinterpretCast<float>()[64], tmp0.ReinterpretCast<float>()[64], tmp0.ReinterpretCast<float>(), 64, 64, BinaryRepeatParams(1, 1, 1, 8, 8, 0));
            WholeReduceSum(tmp0.ReinterpretCast<float>()[4160], tmp0.ReinterpretCast<float>()[64], 64, 64, 1, 1, 8);
            Add(s_ubLocal[i * 64], s_ubLocal[i * 64], tmp0.ReinterpretCast<float>()[4160], 64);
            Muls(tmp0.ReinterpretCast<float>(), s_ubLocal[i * 64], scale, 64);
            Cast(tmp0.ReinterpretCast<float>()[64], M_ubLocal[i * 64], RoundMode::CAST_NONE, 64);
            Add(s_ubLocal[i * 64], tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[64], 64);
            mb_ubLocal.SetValue(i, mx_ubLocal.GetValue(i));
            ReduceMax(tmp0.ReinterpretCast<float>(), s_ubLocal[i * 64], tmp0.ReinterpretCast<float>()[8], 64);
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            mb_ubLocal.SetValue(i, ascx_max<float>(mb_ubLocal.GetValue(i), tmp0.ReinterpretCast<float>().GetValue(0)));
            ms_ubLocal.SetValue(i, ((mb_ubLocal.GetValue(i) == (-ascx_inf)) ? 0.0f : mb_ubLocal.GetValue(i)));
            al_ubLocal.SetValue(i, std::exp((mx_ubLocal.GetValue(i) - ms_ubLocal.GetValue(i))));
            sm_ubLocal.SetValue(i, (sm_ubLocal.GetValue(i) * al_ubLocal.GetValue(i)));
            Muls(acc_ubLocal[i * 64], acc_ubLocal[i * 64], al_ubLocal.GetValue(i), 64);
            Adds(tmp0.ReinterpretCast<float>(), s_ubLocal[i * 64], float(-(ms_ubLocal.GetValue(i))), 64);
            Exp(s_ubLocal[i * 64], tmp0.ReinterpretCast<float>(), 64);
            ReduceSum(tmp0.ReinterpretCast<float>(), s_ubLocal[i * 64], tmp0.ReinterpretCast<float>()[8], 64);
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            sm_ubLocal.SetValue(i, (sm_ubLocal.GetValue(i) + tmp0.ReinterpretCast<float>().GetValue(0)));
            Cast(tmp0.ReinterpretCast<float>(), V_ubLocal, RoundMode::CAST_NONE, 4096);
            Brcb(tmp0.ReinterpretCast<float>()[4096], s_ubLocal[i * 64], 8, BrcbRepeatParams(1, 8));
            Mul(tmp0.ReinterpretCast<float>()[8192], tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[4096], 64, 64, BinaryRepeatParams(1, 1, 0, 8, 8, 1));
            Add(tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[8192], tmp0.ReinterpretCast<float>()[8192 + 2048], 2048);
            Add(tmp0.ReinterpretCast<float>()[8192], tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[1024], 1024);
            Add(tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[8192], tmp0.ReinterpretCast<float>()[8192 + 512], 512);
            Add(tmp0.ReinterpretCast<float>()[8192], tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[256], 256);
            Add(tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[8192], tmp0.ReinterpretCast<float>()[8192 + 128], 128);
            Add(tmp0.ReinterpretCast<float>()[8192], tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>()[64], 64);
            Add(acc_ubLocal[i * 64], acc_ubLocal[i * 64], tmp0.ReinterpretCast<float>()[8192], 64);
            mx_ubLocal.SetValue(i, mb_ubLocal.GetValue(i));
        }
        inQueue_K_ub.FreeTensor(K_ubLocal);
        inQueue_M_ub.FreeTensor(M_ubLocal);
        inQueue_V_ub.FreeTensor(V_ubLocal);
    }
    __aicore__ inline void Compute(int32_t i0)
    {
        Q_ubLocal = inQueue_Q_ub.DeQue<half>();
        O_ubLocal = outQueue_O_ub.AllocTensor<half>();
        SetFlag<HardEvent::S_V>(0);
        WaitFlag<HardEvent::S_V>(0);
        Duplicate(mx_ubLocal, (-ascx_inf), 64);
        Duplicate(sm_ubLocal, 0.0f, 64);
        Duplicate(acc_ubLocal, 0.0f, 4096);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        CopyIn2(i0, 0);
        for (int32_t jb = 0; jb < 16; ++jb) {
            if (jb + 1 < 16) {
                CopyIn2(i0, jb + 1);
            }
            Compute2();
        }
        SetFlag<HardEvent::S_V>(0);
        WaitFlag<HardEvent::S_V>(0);
        Brcb(tmp0.ReinterpretCast<float>()[4096], sm_ubLocal, 8, BrcbRepeatParams(1, 8));
        Div(tmp0.ReinterpretCast<float>(), acc_ubLocal, tmp0.ReinterpretCast<float>()[4096], 64, 64, BinaryRepeatParams(1, 1, 0, 8, 8, 1));
        Cast(O_ubLocal, tmp0.ReinterpretCast<float>(), RoundMode::CAST_RINT, 4096);
        outQueue_O_ub.EnQue(O_ubLocal);
        inQueue_Q_ub.FreeTensor(Q_ubLocal);
    }
    __aicore__ inline void CopyOut(int32_t i0)
    {
        O_ubLocal = outQueue_O_ub.DeQue<half>();
        DataCopy(OGm[i0 * 4096], O_ubLocal, 4096);
        outQueue_O_ub.FreeTensor(O_ubLocal);
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue_K_ub;
    LocalTensor<half> K_ubLocal;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue_M_ub;
    LocalTensor<half> M_ubLocal;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueue_O_ub;
    LocalTensor<half> O_ubLocal;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue_Q_ub;
    LocalTensor<half> Q_ubLocal;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue_V_ub;
    LocalTensor<half> V_ubLocal;
    TBuf<TPosition::VECCALC> buf_acc_ub;
    LocalTensor<float> acc_ubLocal;
    TBuf<TPosition::VECCALC> buf_al_ub;
    LocalTensor<float> al_ubLocal;
    TBuf<TPosition::VECCALC> buf_mb_ub;
    LocalTensor<float> mb_ubLocal;
    TBuf<TPosition::VECCALC> buf_ms_ub;
    LocalTensor<float> ms_ubLocal;
    TBuf<TPosition::VECCALC> buf_mx_ub;
    LocalTensor<float> mx_ubLocal;
    TBuf<TPosition::VECCALC> buf_s_ub;
    LocalTensor<float> s_ubLocal;
    TBuf<TPosition::VECCALC> buf_sm_ub;
    LocalTensor<float> sm_ubLocal;
    TBuf<TPosition::VECCALC> tmpBuf0;
    LocalTensor<uint8_t> tmp0;
    GlobalTensor<half> QGm;
    GlobalTensor<half> KGm;
    GlobalTensor<half> VGm;
    GlobalTensor<half> MGm;
    GlobalTensor<half> OGm;
    int32_t workerIdx = 0;
};

extern "C" __global__ __aicore__ void attention(GM_ADDR Q, GM_ADDR K, GM_ADDR V, GM_ADDR M, GM_ADDR O)
{
    KernelAttention op;
    op.Init(Q, K, V, M, O);
    op.Process();
}
