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
        pipe.InitBuffer(inQueue_X_ub, BUFFER_NUM, 6144);
        pipe.InitBuffer(outQueue_Y_ub, BUFFER_NUM, 6144);
        pipe.InitBuffer(ubPad0_0, 41280);  // UB bank placement (ub_place.py): buf_e_ub at UB byte 65856
        pipe.InitBuffer(buf_e_ub, 4096);
        pipe.InitBuffer(ubPad0_1, 36928);  // UB bank placement (ub_place.py): tmpBuf0 at UB byte 106880
        pipe.InitBuffer(tmpBuf0, 36928);
    }
    __aicore__ inline void Process()
    {
        e_ubLocal = buf_e_ub.Get<float>();
        tmp0 = tmpBuf0.Get<uint8_t>();
        // 48 workers (GetBlockIdx): worker w runs 2 iterations if w < 38, else 1, contiguous from 0
        if (workerIdx < 48) {
            int32_t r0Begin = 0 + workerIdx * 1 + ascx_min<int32_t>(workerIdx, 38);
            int32_t r0End = r0Begin + 1 + (workerIdx < 38 ? 1 : 0);
            for (int32_t r0 = r0Begin; r0 < r0End; ++r0) {
                CopyIn(r0);
                Compute(r0);
                CopyOut(r0);
            }
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t r0)
    {
        X_ubLocal = inQueue_X_ub.AllocTensor<half>();
        DataCopy(X_ubLocal, XGm[r0 * 3072], ((ascx_min<int32_t>(3, r0 * (-3) + 256) - (0))) * 1024);
        inQueue_X_ub.EnQue(X_ubLocal);
    }
    __aicore__ inline void Compute(int32_t r0)
    {
        X_ubLocal = inQueue_X_ub.DeQue<half>();
        Y_ubLocal = outQueue_Y_ub.AllocTensor<half>();
        Max(tmp0.ReinterpretCast<half>()[12320], X_ubLocal, X_ubLocal[128], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 64, 64, 64));
        Max(tmp0.ReinterpretCast<half>()[12320], tmp0.ReinterpretCast<half>()[12320], X_ubLocal[256], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 64, 64, 64));
        Max(tmp0.ReinterpretCast<half>()[12320], tmp0.ReinterpretCast<half>()[12320], X_ubLocal[384], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 64, 64, 64));
        Max(tmp0.ReinterpretCast<half>()[12320], tmp0.ReinterpretCast<half>()[12320], X_ubLocal[512], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 64, 64, 64));
        Max(tmp0.ReinterpretCast<half>()[12320], tmp0.ReinterpretCast<half>()[12320], X_ubLocal[640], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 64, 64, 64));
        Max(tmp0.ReinterpretCast<half>()[12320], tmp0.ReinterpretCast<half>()[12320], X_ubLocal[768], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 64, 64, 64));
        Max(tmp0.ReinterpretCast<half>()[12320], tmp0.ReinterpretCast<half>()[12320], X_ubLocal[896], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 64, 64, 64));
        WholeReduceMax(tmp0.ReinterpretCast<half>()[6176], tmp0.ReinterpretCast<half>()[12320], 128, ascx_min<int32_t>(3, r0 * (-3) + 256), 1, 1, 64, ReduceOrder::ORDER_ONLY_VALUE);
        Cast(tmp0.ReinterpretCast<float>(), tmp0.ReinterpretCast<half>()[6176], RoundMode::CAST_NONE, ascx_min<int32_t>(3, r0 * (-3) + 256));
        Cast(tmp0.ReinterpretCast<float>()[3088], X_ubLocal, RoundMode::CAST_NONE, (ascx_min<int32_t>(3, r0 * (-3) + 256)) * 1024);
        Brcb(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>(), ((ascx_min<int32_t>(3, r0 * (-3) + 256)) + 7) / 8, BrcbRepeatParams(1, 8));
        Sub(tmp0.ReinterpretCast<float>()[3088], tmp0.ReinterpretCast<float>()[3088], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 64], tmp0.ReinterpretCast<float>()[3088 + 64], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 128], tmp0.ReinterpretCast<float>()[3088 + 128], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 192], tmp0.ReinterpretCast<float>()[3088 + 192], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 256], tmp0.ReinterpretCast<float>()[3088 + 256], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 320], tmp0.ReinterpretCast<float>()[3088 + 320], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 384], tmp0.ReinterpretCast<float>()[3088 + 384], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 448], tmp0.ReinterpretCast<float>()[3088 + 448], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 512], tmp0.ReinterpretCast<float>()[3088 + 512], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 576], tmp0.ReinterpretCast<float>()[3088 + 576], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 640], tmp0.ReinterpretCast<float>()[3088 + 640], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 704], tmp0.ReinterpretCast<float>()[3088 + 704], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 768], tmp0.ReinterpretCast<float>()[3088 + 768], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 832], tmp0.ReinterpretCast<float>()[3088 + 832], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 896], tmp0.ReinterpretCast<float>()[3088 + 896], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Sub(tmp0.ReinterpretCast<float>()[3088 + 960], tmp0.ReinterpretCast<float>()[3088 + 960], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Exp(tmp0.ReinterpretCast<float>()[16], tmp0.ReinterpretCast<float>()[3088], (ascx_min<int32_t>(3, r0 * (-3) + 256)) * 1024);
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16], tmp0.ReinterpretCast<float>()[16 + 64], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 128], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 192], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 256], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 320], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 384], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 448], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 512], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 576], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 640], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 704], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 768], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 832], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 896], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        Add(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16 + 960], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 1, 128, 128, 128));
        WholeReduceSum(tmp0.ReinterpretCast<float>()[8], tmp0.ReinterpretCast<float>()[6160], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), 1, 1, 128);
        Brcb(tmp0.ReinterpretCast<float>()[3088], tmp0.ReinterpretCast<float>()[8], ((ascx_min<int32_t>(3, r0 * (-3) + 256)) + 7) / 8, BrcbRepeatParams(1, 8));
        Div(tmp0.ReinterpretCast<float>()[6160], tmp0.ReinterpretCast<float>()[16], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 64], tmp0.ReinterpretCast<float>()[16 + 64], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 128], tmp0.ReinterpretCast<float>()[16 + 128], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 192], tmp0.ReinterpretCast<float>()[16 + 192], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 256], tmp0.ReinterpretCast<float>()[16 + 256], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 320], tmp0.ReinterpretCast<float>()[16 + 320], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 384], tmp0.ReinterpretCast<float>()[16 + 384], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 448], tmp0.ReinterpretCast<float>()[16 + 448], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 512], tmp0.ReinterpretCast<float>()[16 + 512], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 576], tmp0.ReinterpretCast<float>()[16 + 576], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 640], tmp0.ReinterpretCast<float>()[16 + 640], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 704], tmp0.ReinterpretCast<float>()[16 + 704], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 768], tmp0.ReinterpretCast<float>()[16 + 768], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 832], tmp0.ReinterpretCast<float>()[16 + 832], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 896], tmp0.ReinterpretCast<float>()[16 + 896], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Div(tmp0.ReinterpretCast<float>()[6160 + 960], tmp0.ReinterpretCast<float>()[16 + 960], tmp0.ReinterpretCast<float>()[3088], 64, ascx_min<int32_t>(3, r0 * (-3) + 256), BinaryRepeatParams(1, 1, 0, 128, 128, 1));
        Cast(Y_ubLocal, tmp0.ReinterpretCast<float>()[6160], RoundMode::CAST_RINT, (ascx_min<int32_t>(3, r0 * (-3) + 256)) * 1024);
        outQueue_Y_ub.EnQue(Y_ubLocal);
        inQueue_X_ub.FreeTensor(X_ubLocal);
    }
    __aicore__ inline void CopyOut(int32_t r0)
    {
        Y_ubLocal = outQueue_Y_ub.DeQue<half>();
        DataCopy(YGm[r0 * 3072], Y_ubLocal, ((ascx_min<int32_t>(3, r0 * (-3) + 256) - (0))) * 1024);
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
    TBuf<TPosition::VECCALC> ubPad0_0;  // moves the next UB buffer (bank placement)
    TBuf<TPosition::VECCALC> ubPad0_1;  // moves the next UB buffer (bank placement)
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
