// Ascend C kernel `add`, emitted by ascx from examples/add.ir for ascend910b2.
// Kind: vector (AIV_MODE, blockDim 48).
// Regenerate instead of editing: ascx emit examples/add.ir --passes tile,double_buffer
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

class KernelAdd {
    // the kernel's sizes and consts: class members, so no global name can clash with them
    static constexpr int32_t M = 256;
    static constexpr int32_t N = 1024;

public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR A, GM_ADDR B, GM_ADDR C)
    {
        workerIdx = static_cast<int32_t>(GetBlockIdx());
        AGm.SetGlobalBuffer((__gm__ half *)A, 262144);
        BGm.SetGlobalBuffer((__gm__ half *)B, 262144);
        CGm.SetGlobalBuffer((__gm__ half *)C, 262144);
        pipe.InitBuffer(inQueue_A_ub, BUFFER_NUM, 6144);
        pipe.InitBuffer(ubPad0_0, 256);  // UB bank placement (ub_place.py): inQueue_B_ub at UB byte 12544
        pipe.InitBuffer(inQueue_B_ub, BUFFER_NUM, 6144);
        pipe.InitBuffer(ubPad0_1, 40704);  // UB bank placement (ub_place.py): outQueue_C_ub at UB byte 65536
        pipe.InitBuffer(outQueue_C_ub, BUFFER_NUM, 6144);
    }
    __aicore__ inline void Process()
    {
        // 48 workers (GetBlockIdx): worker w runs 2 iterations if w < 38, else 1, contiguous from 0
        if (workerIdx < 48) {
            int32_t i0Begin = 0 + workerIdx * 1 + ascx_min<int32_t>(workerIdx, 38);
            int32_t i0End = i0Begin + 1 + (workerIdx < 38 ? 1 : 0);
            for (int32_t i0 = i0Begin; i0 < i0End; ++i0) {
                CopyIn(i0);
                Compute(i0);
                CopyOut(i0);
            }
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t i0)
    {
        A_ubLocal = inQueue_A_ub.AllocTensor<half>();
        DataCopy(A_ubLocal, AGm[i0 * 3072], ((ascx_min<int32_t>(3, i0 * (-3) + 256) - (0))) * 1024);
        inQueue_A_ub.EnQue(A_ubLocal);
        B_ubLocal = inQueue_B_ub.AllocTensor<half>();
        DataCopy(B_ubLocal, BGm[i0 * 3072], ((ascx_min<int32_t>(3, i0 * (-3) + 256) - (0))) * 1024);
        inQueue_B_ub.EnQue(B_ubLocal);
    }
    __aicore__ inline void Compute(int32_t i0)
    {
        A_ubLocal = inQueue_A_ub.DeQue<half>();
        B_ubLocal = inQueue_B_ub.DeQue<half>();
        C_ubLocal = outQueue_C_ub.AllocTensor<half>();
        Add(C_ubLocal, A_ubLocal, B_ubLocal, (ascx_min<int32_t>(3, i0 * (-3) + 256)) * 1024);
        outQueue_C_ub.EnQue(C_ubLocal);
        inQueue_A_ub.FreeTensor(A_ubLocal);
        inQueue_B_ub.FreeTensor(B_ubLocal);
    }
    __aicore__ inline void CopyOut(int32_t i0)
    {
        C_ubLocal = outQueue_C_ub.DeQue<half>();
        DataCopy(CGm[i0 * 3072], C_ubLocal, ((ascx_min<int32_t>(3, i0 * (-3) + 256) - (0))) * 1024);
        outQueue_C_ub.FreeTensor(C_ubLocal);
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue_A_ub;
    LocalTensor<half> A_ubLocal;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueue_B_ub;
    LocalTensor<half> B_ubLocal;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueue_C_ub;
    LocalTensor<half> C_ubLocal;
    TBuf<TPosition::VECCALC> ubPad0_0;  // moves the next UB buffer (bank placement)
    TBuf<TPosition::VECCALC> ubPad0_1;  // moves the next UB buffer (bank placement)
    GlobalTensor<half> AGm;
    GlobalTensor<half> BGm;
    GlobalTensor<half> CGm;
    int32_t workerIdx = 0;
};

extern "C" __global__ __aicore__ void add(GM_ADDR A, GM_ADDR B, GM_ADDR C)
{
    KernelAdd op;
    op.Init(A, B, C);
    op.Process();
}
