// Ascend C kernel `mm_bias_relu`, emitted by ascx from examples/mm_bias_relu.ir for ascend910b2.
// Kind: mix (MIX_MODE, blockDim 22).
// Regenerate instead of editing: ascx emit examples/mm_bias_relu.ir --passes tile
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
// cross-core flag ids: AIV barrier, AIC barrier, cube -> vector, vector -> cube
constexpr uint16_t SYNC_AIV = 1;
constexpr uint16_t SYNC_AIC = 2;
constexpr uint16_t SYNC_C2V = 3;
constexpr uint16_t SYNC_V2C = 4;
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

class KernelMmBiasRelu {
    // the kernel's sizes and consts: class members, so no global name can clash with them
    static constexpr int32_t M = 128;
    static constexpr int32_t N = 64;
    static constexpr int32_t K = 192;

public:
    __aicore__ inline KernelMmBiasRelu() {}
    __aicore__ inline void Init(GM_ADDR A, GM_ADDR B, GM_ADDR bias, GM_ADDR C, GM_ADDR workspace)
    {
        workerIdx = static_cast<int32_t>(GetBlockIdx());
        AGm.SetGlobalBuffer((__gm__ half *)A, 24576);
        BGm.SetGlobalBuffer((__gm__ half *)B, 12288);
        biasGm.SetGlobalBuffer((__gm__ half *)bias, 64);
        CGm.SetGlobalBuffer((__gm__ half *)C, 8192);
        accGm.SetGlobalBuffer((__gm__ float *)(workspace + 0), 8192);
    }
    __aicore__ inline void Process()
    {
        // phase 0: `mm` on AIC
        if ASCEND_IS_AIC { ProcessMm(); }
        if ASCEND_IS_AIC { CrossCoreSetFlag<0x0, PIPE_FIX>(SYNC_AIC); CrossCoreWaitFlag(SYNC_AIC); }
        if ASCEND_IS_AIC { CrossCoreSetFlag<0x2, PIPE_FIX>(SYNC_C2V); }
        if ASCEND_IS_AIV { CrossCoreWaitFlag(SYNC_C2V); }
        // phase 1: `epi` on AIV
        if ASCEND_IS_AIV { ProcessEpi(); }
    }

private:
    __aicore__ inline void CopyInMm(int32_t i0)
    {
        A_l1Local = que_A_l1.AllocTensor<half>();
        DataCopy(A_l1Local, AGm[i0 * 12288], Nd2NzParams(1, 64, 192, 0, 192, 64, 1, 0));
        que_A_l1.EnQue(A_l1Local);
        A_l1Local = que_A_l1.DeQue<half>();
        A_l0aLocal = que_A_l0a.AllocTensor<half>();
        for (int32_t ascx_kb = 0; ascx_kb < 12; ++ascx_kb) {
            LoadData(A_l0aLocal[ascx_kb * 256], A_l1Local[ascx_kb * 1024], LoadData2DParams(0, 4, 1, 0, 11, false, 0));
        }
        que_A_l0a.EnQue(A_l0aLocal);
        B_l1Local = que_B_l1.AllocTensor<half>();
        DataCopy(B_l1Local, BGm, Nd2NzParams(1, 192, 64, 0, 64, 192, 1, 0));
        que_B_l1.EnQue(B_l1Local);
        B_l1Local = que_B_l1.DeQue<half>();
        B_l0bLocal = que_B_l0b.AllocTensor<half>();
        for (int32_t ascx_kb = 0; ascx_kb < 12; ++ascx_kb) {
            LoadData(B_l0bLocal[ascx_kb * 1024], B_l1Local[ascx_kb * 256], LoadData2DParams(0, 4, 12, 0, 0, true, 0));
        }
        que_B_l0b.EnQue(B_l0bLocal);
        que_A_l1.FreeTensor(A_l1Local);
        que_B_l1.FreeTensor(B_l1Local);
    }
    __aicore__ inline void ComputeMm()
    {
        A_l0aLocal = que_A_l0a.DeQue<half>();
        B_l0bLocal = que_B_l0b.DeQue<half>();
        acc_l0cLocal = que_acc_l0c.AllocTensor<float>();
        MmadParams mmadParams(64, 64, 192, false, 0, false, false, false);
        mmadParams.cmatrixInitVal = true;
        Mmad(acc_l0cLocal, A_l0aLocal, B_l0bLocal, mmadParams);
        que_acc_l0c.EnQue(acc_l0cLocal);
        que_A_l0a.FreeTensor(A_l0aLocal);
        que_B_l0b.FreeTensor(B_l0bLocal);
    }
    __aicore__ inline void CopyOutMm(int32_t i0)
    {
        acc_l0cLocal = que_acc_l0c.DeQue<float>();
        FixpipeParamsV220 fixParams(64, 64, 64, 64, false);
        Fixpipe(accGm[i0 * 4096], acc_l0cLocal, fixParams);
        que_acc_l0c.FreeTensor(acc_l0cLocal);
    }
    __aicore__ inline void ProcessMm()
    {
        pipe.InitBuffer(que_A_l1, 1, 24576);
        pipe.InitBuffer(que_A_l0a, 1, 24576);
        pipe.InitBuffer(que_B_l1, 1, 24576);
        pipe.InitBuffer(que_B_l0b, 1, 24576);
        pipe.InitBuffer(que_acc_l0c, 1, 16384);
        // 2 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 2) {
            int32_t i0Begin = 0 + workerIdx * 1;
            int32_t i0End = i0Begin + 1;
            for (int32_t i0 = i0Begin; i0 < i0End; ++i0) {
                CopyInMm(i0);
                ComputeMm();
                CopyOutMm(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }
    __aicore__ inline void CopyInEpi(int32_t i0)
    {
        acc_ubLocal = inQueue_acc_ub.AllocTensor<float>();
        DataCopy(acc_ubLocal, accGm[i0 * 192], ((ascx_min<int32_t>(3, i0 * (-3) + 128) - (0))) * 64);
        inQueue_acc_ub.EnQue(acc_ubLocal);
    }
    __aicore__ inline void ComputeEpi(int32_t i0)
    {
        acc_ubLocal = inQueue_acc_ub.DeQue<float>();
        C_ubLocal = outQueue_C_ub.AllocTensor<half>();
        Cast(tmp1.ReinterpretCast<float>(), bias_ubLocal, RoundMode::CAST_NONE, 64);
        Add(tmp1.ReinterpretCast<float>()[192], acc_ubLocal, tmp1.ReinterpretCast<float>(), 64, ascx_min<int32_t>(3, i0 * (-3) + 128), BinaryRepeatParams(1, 1, 1, 8, 8, 0));
        Maxs(tmp1.ReinterpretCast<float>()[192], tmp1.ReinterpretCast<float>()[192], 0.0f, (ascx_min<int32_t>(3, i0 * (-3) + 128)) * 64);
        Cast(C_ubLocal, tmp1.ReinterpretCast<float>()[192], RoundMode::CAST_RINT, (ascx_min<int32_t>(3, i0 * (-3) + 128)) * 64);
        outQueue_C_ub.EnQue(C_ubLocal);
        inQueue_acc_ub.FreeTensor(acc_ubLocal);
    }
    __aicore__ inline void CopyOutEpi(int32_t i0)
    {
        C_ubLocal = outQueue_C_ub.DeQue<half>();
        DataCopy(CGm[i0 * 192], C_ubLocal, ((ascx_min<int32_t>(3, i0 * (-3) + 128) - (0))) * 64);
        outQueue_C_ub.FreeTensor(C_ubLocal);
    }
    __aicore__ inline void ProcessEpi()
    {
        pipe.InitBuffer(outQueue_C_ub, 1, 384);
        pipe.InitBuffer(inQueue_acc_ub, 1, 768);
        pipe.InitBuffer(buf_bias_ub, 128);
        pipe.InitBuffer(ubPad1_0, 64384);  // UB bank placement (ub_place.py): tmpBuf1 at UB byte 65664
        pipe.InitBuffer(tmpBuf1, 1536);
        bias_ubLocal = buf_bias_ub.Get<half>();
        tmp1 = tmpBuf1.Get<uint8_t>();
        PipeBarrier<PIPE_ALL>();
        DataCopy(bias_ubLocal, biasGm, 64);
        PipeBarrier<PIPE_ALL>();
        // 43 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 43) {
            int32_t i0Begin2 = 0 + workerIdx * 1;
            int32_t i0End2 = i0Begin2 + 1;
            for (int32_t i0 = i0Begin2; i0 < i0End2; ++i0) {
                CopyInEpi(i0);
                ComputeEpi(i0);
                CopyOutEpi(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }

private:
    TPipe pipe;
    TQue<TPosition::A1, 1> que_A_l1;
    LocalTensor<half> A_l1Local;
    TQue<TPosition::A2, 1> que_A_l0a;
    LocalTensor<half> A_l0aLocal;
    TQue<TPosition::B1, 1> que_B_l1;
    LocalTensor<half> B_l1Local;
    TQue<TPosition::B2, 1> que_B_l0b;
    LocalTensor<half> B_l0bLocal;
    TQue<TPosition::CO1, 1> que_acc_l0c;
    LocalTensor<float> acc_l0cLocal;
    TQue<TPosition::VECOUT, 1> outQueue_C_ub;
    LocalTensor<half> C_ubLocal;
    TQue<TPosition::VECIN, 1> inQueue_acc_ub;
    LocalTensor<float> acc_ubLocal;
    TBuf<TPosition::VECIN> buf_bias_ub;
    LocalTensor<half> bias_ubLocal;
    TBuf<TPosition::VECCALC> tmpBuf1;
    LocalTensor<uint8_t> tmp1;
    TBuf<TPosition::VECCALC> ubPad1_0;  // moves the next UB buffer (bank placement)
    GlobalTensor<half> AGm;
    GlobalTensor<half> BGm;
    GlobalTensor<half> biasGm;
    GlobalTensor<half> CGm;
    GlobalTensor<float> accGm;
    int32_t workerIdx = 0;
};

extern "C" __global__ __aicore__ void mm_bias_relu(GM_ADDR A, GM_ADDR B, GM_ADDR bias, GM_ADDR C, GM_ADDR workspace)
{
    KernelMmBiasRelu op;
    op.Init(A, B, bias, C, workspace);
    op.Process();
}
