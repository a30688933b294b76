// Ascend C kernel `softmax`, emitted by ascx from examples/softmax.ir for ascend910b2.
// Kind: vector (AIV_MODE, blockDim 48).
// Regenerate instead of editing: ascx emit examples/softmax.ir --passes fuse,tile,double_buffer
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

class KernelSoftmax {
    // the kernel's sizes and consts: class members, so no global name can clash with them
    static constexpr int32_t R = 256;
    static constexpr int32_t C = 1024;

public:
    __aicore__ inline KernelSoftmax() {}
    __aicore__ inline void Init(GM_ADDR X, GM_ADDR Y)
    {
        workerIdx = static_cast<int32_t>(GetBlockIdx());
        XGm.SetGlobalBuffer((__gm__ half *)X, 262144);
        YGm.SetGlobalBuffer((__gm__ half *)Y, 262144);
        pipe.InitBuffer(inQueue_X_ub, BUFFER_NUM, 4096);
        pipe.InitBuffer(outQueue_Y_ub, BUFFER_NUM, 4096);
        pipe.InitBuffer(buf_e_ub, 4096);
        pipe.InitBuffer(tmpBuf0, 8192);
    }
    __aicore__ inline void Process()
    {
        e_ubLocal = buf_e_ub.Get<float>();
        tmp0 = tmpBuf0.Get<uint8_t>();
        // 48 workers (GetBlockIdx): worker w runs 3 iterations if w < 32, else 2, contiguous from 0
        if (workerIdx < 48) {
            int32_t r0Begin = 0 + workerIdx * 2 + ascx_min<int32_t>(workerIdx, 32);
            int32_t r0End = r0Begin + 2 + (workerIdx < 32 ? 1 : 0);
            CopyIn(r0Begin);
            for (int32_t r0 = r0Begin; r0 < r0End; ++r0) {
                if (r0 + 1 < r0End) {
                    CopyIn(r0 + 1);
                }
                Compute();
                CopyOut(r0);
            }
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t r0)
    {
        X_ubLocal = inQueue_X_ub.AllocTensor<half>();
        DataCopy(X_ubLocal, XGm[r0 * 2048], 2048);
        inQueue_X_ub.EnQue(X_ubLocal);
    }
    __aicore__ inline void Compute()
    {
        X_ubLocal = inQueue_X_ub.DeQue<half>();
        Y_ubLocal = outQueue_Y_ub.AllocTensor<half>();
        for (int32_t r = 0; r < 2; ++r) {
            mx = (-ascx_inf);
            ReduceMax(tmp0.ReinterpretCast<half>(), X_ubLocal[r * 1024], tmp0.ReinterpretCast<half>()[16], 1024);
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            mx = ascx_max<float>(mx, ascx_cvt<float>(tmp0.ReinterpretCast<half>().GetValue(0)));
            sm = 0.0f;
            Cast(tmp0.ReinterpretCast<float>(), X_ubLocal[r * 1024], RoundMode::CAST_NONE, 1024);
            Adds(tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<float>(), float(-(mx)), 1024);
            Exp(e_ubLocal, tmp0.ReinterpretCast<float>(), 1024);
            ReduceSum(tmp0.ReinterpretCast<float>(), e_ubLocal, tmp0.ReinterpretCast<float>()[8], 1024);
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            sm = (sm + tmp0.ReinterpretCast<float>().GetValue(0));
            Duplicate(tmp0.ReinterpretCast<float>()[1024], sm, 8, 1, 1, 8);
            Div(tmp0.ReinterpretCast<float>(), e_ubLocal, tmp0.ReinterpretCast<float>()[1024], 64, 16, BinaryRepeatParams(1, 1, 0, 8, 8, 0));
            Cast(Y_ubLocal[r * 1024], tmp0.ReinterpretCast<float>(), RoundMode::CAST_RINT, 1024);
        }
        outQueue_Y_ub.EnQue(Y_ubLocal);
        inQueue_X_ub.FreeTensor(X_ubLocal);
    }
    __aicore__ inline void CopyOut(int32_t r0)
    {
        Y_ubLocal = outQueue_Y_ub.DeQue<half>();
        DataCopy(YGm[r0 * 2048], Y_ubLocal, 2048);
        outQueue_Y_ub.FreeTensor(Y_ubLocal);
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue_X_ub;
    LocalTensor<half> X_ubLocal;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueue_Y_ub;
    LocalTensor<half> Y_ubLocal;
    TBuf<TPosition::VECCALC> buf_e_ub;
    LocalTensor<float> e_ubLocal;
    TBuf<TPosition::VECCALC> tmpBuf0;
    LocalTensor<uint8_t> tmp0;
    GlobalTensor<half> XGm;
    GlobalTensor<half> YGm;
    float mx{};
    float sm{};
    int32_t workerIdx = 0;
};

extern "C" __global__ __aicore__ void softmax(GM_ADDR X, GM_ADDR Y)
{
    KernelSoftmax op;
    op.Init(X, Y);
    op.Process();
}
