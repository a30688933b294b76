// Ascend C kernel `attention`, emitted by ascx from examples/attention.ir for ascend910b2.
// Kind: mix (MIX_MODE, blockDim 22).
// Regenerate instead of editing: ascx emit examples/attention.ir --passes round_operand{pv.s=f16},tile
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

class KernelAttention {
    // the kernel's sizes and consts: class members, so no global name can clash with them
    static constexpr int32_t S = 256;
    static constexpr int32_t D = 64;
    static inline const float scale = 0.125f;

public:
    __aicore__ inline KernelAttention() {}
    __aicore__ inline void Init(GM_ADDR Q, GM_ADDR K, GM_ADDR V, GM_ADDR M, GM_ADDR O, GM_ADDR workspace)
    {
        workerIdx = static_cast<int32_t>(GetBlockIdx());
        QGm.SetGlobalBuffer((__gm__ half *)Q, 16384);
        KGm.SetGlobalBuffer((__gm__ half *)K, 16384);
        VGm.SetGlobalBuffer((__gm__ half *)V, 16384);
        MGm.SetGlobalBuffer((__gm__ half *)M, 65536);
        OGm.SetGlobalBuffer((__gm__ half *)O, 16384);
        sGm.SetGlobalBuffer((__gm__ float *)(workspace + 0), 65536);
        s_f16Gm.SetGlobalBuffer((__gm__ half *)(workspace + 262144), 65536);
        mxGm.SetGlobalBuffer((__gm__ float *)(workspace + 393216), 256);
        smGm.SetGlobalBuffer((__gm__ float *)(workspace + 394240), 256);
        accGm.SetGlobalBuffer((__gm__ float *)(workspace + 395264), 16384);
    }
    __aicore__ inline void Process()
    {
        // phase 0: `qk` on AIC
        if ASCEND_IS_AIC { ProcessQk(); }
        if ASCEND_IS_AIC { CrossCoreSetFlag<0x0, PIPE_FIX>(SYNC_AIC); CrossCoreWaitFlag(SYNC_AIC); }
        if ASCEND_IS_AIC { CrossCoreSetFlag<0x2, PIPE_FIX>(SYNC_C2V); }
        if ASCEND_IS_AIV { CrossCoreWaitFlag(SYNC_C2V); }
        // phase 1: `bias` on AIV
        if ASCEND_IS_AIV { ProcessBias(); }
        if ASCEND_IS_AIV { CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV); CrossCoreWaitFlag(SYNC_AIV); }
        // phase 2: `rmax` on AIV
        if ASCEND_IS_AIV { ProcessRmax(); }
        if ASCEND_IS_AIV { CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV); CrossCoreWaitFlag(SYNC_AIV); }
        // phase 3: `expo` on AIV
        if ASCEND_IS_AIV { ProcessExpo(); }
        if ASCEND_IS_AIV { CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV); CrossCoreWaitFlag(SYNC_AIV); }
        // phase 4: `round_s` on AIV
        if ASCEND_IS_AIV { ProcessRoundS(); }
        if ASCEND_IS_AIV { CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV); CrossCoreWaitFlag(SYNC_AIV); }
        if ASCEND_IS_AIV { CrossCoreSetFlag<0x2, PIPE_MTE3>(SYNC_V2C); }
        if ASCEND_IS_AIC { CrossCoreWaitFlag(SYNC_V2C); }
        // phase 5: `pv` on AIC
        if ASCEND_IS_AIC { ProcessPv(); }
        if ASCEND_IS_AIC { CrossCoreSetFlag<0x0, PIPE_FIX>(SYNC_AIC); CrossCoreWaitFlag(SYNC_AIC); }
        if ASCEND_IS_AIC { CrossCoreSetFlag<0x2, PIPE_FIX>(SYNC_C2V); }
        if ASCEND_IS_AIV { CrossCoreWaitFlag(SYNC_C2V); }
        // phase 6: `pv_epi` on AIV
        if ASCEND_IS_AIV { ProcessPvEpi(); }
    }

private:
    __aicore__ inline void CopyInQk(int32_t i0)
    {
        K_l1Local = que_K_l1.AllocTensor<half>();
        DataCopy(K_l1Local, KGm, Nd2NzParams(1, 256, 64, 0, 64, 256, 1, 0));
        que_K_l1.EnQue(K_l1Local);
        K_l1Local = que_K_l1.DeQue<half>();
        K_l0bLocal = que_K_l0b.AllocTensor<half>();
        LoadData(K_l0bLocal, K_l1Local, LoadData2DParams(0, 64, 1, 0, 0, false, 0));
        que_K_l0b.EnQue(K_l0bLocal);
        Q_l1Local = que_Q_l1.AllocTensor<half>();
        DataCopy(Q_l1Local, QGm[i0 * 4096], Nd2NzParams(1, 64, 64, 0, 64, 64, 1, 0));
        que_Q_l1.EnQue(Q_l1Local);
        Q_l1Local = que_Q_l1.DeQue<half>();
        Q_l0aLocal = que_Q_l0a.AllocTensor<half>();
        for (int32_t ascx_kb = 0; ascx_kb < 4; ++ascx_kb) {
            LoadData(Q_l0aLocal[ascx_kb * 256], Q_l1Local[ascx_kb * 1024], LoadData2DParams(0, 4, 1, 0, 3, false, 0));
        }
        que_Q_l0a.EnQue(Q_l0aLocal);
        que_K_l1.FreeTensor(K_l1Local);
        que_Q_l1.FreeTensor(Q_l1Local);
    }
    __aicore__ inline void ComputeQk()
    {
        K_l0bLocal = que_K_l0b.DeQue<half>();
        Q_l0aLocal = que_Q_l0a.DeQue<half>();
        s_l0cLocal = que_s_l0c.AllocTensor<float>();
        MmadParams mmadParams(64, 256, 64, false, 0, false, false, false);
        mmadParams.cmatrixInitVal = true;
        Mmad(s_l0cLocal, Q_l0aLocal, K_l0bLocal, mmadParams);
        que_s_l0c.EnQue(s_l0cLocal);
        que_K_l0b.FreeTensor(K_l0bLocal);
        que_Q_l0a.FreeTensor(Q_l0aLocal);
    }
    __aicore__ inline void CopyOutQk(int32_t i0)
    {
        s_l0cLocal = que_s_l0c.DeQue<float>();
        FixpipeParamsV220 fixParams(256, 64, 64, 256, false);
        Fixpipe(sGm[i0 * 16384], s_l0cLocal, fixParams);
        que_s_l0c.FreeTensor(s_l0cLocal);
    }
    __aicore__ inline void ProcessQk()
    {
        pipe.InitBuffer(que_K_l1, 1, 32768);
        pipe.InitBuffer(que_K_l0b, 1, 32768);
        pipe.InitBuffer(que_Q_l1, 1, 8192);
        pipe.InitBuffer(que_Q_l0a, 1, 8192);
        pipe.InitBuffer(que_s_l0c, 1, 65536);
        // 4 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 4) {
            int32_t i0Begin = 0 + workerIdx * 1;
            int32_t i0End = i0Begin + 1;
            for (int32_t i0 = i0Begin; i0 < i0End; ++i0) {
                CopyInQk(i0);
                ComputeQk();
                CopyOutQk(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }
    __aicore__ inline void CopyInBias(int32_t i0)
    {
        M_ubLocal = inQueue_M_ub.AllocTensor<half>();
        DataCopy(M_ubLocal, MGm[i0 * 1536], ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        inQueue_M_ub.EnQue(M_ubLocal);
        s_ubLocal = inQueue_s_ub.AllocTensor<float>();
        DataCopy(s_ubLocal, sGm[i0 * 1536], ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        inQueue_s_ub.EnQue(s_ubLocal);
    }
    __aicore__ inline void ComputeBias(int32_t i0)
    {
        M_ubLocal = inQueue_M_ub.DeQue<half>();
        s_ubLocal = inQueue_s_ub.DeQue<float>();
        Muls(tmp1.ReinterpretCast<float>(), s_ubLocal, scale, (ascx_min<int32_t>(6, i0 * (-6) + 256)) * 256);
        Cast(tmp1.ReinterpretCast<float>()[1536], M_ubLocal, RoundMode::CAST_NONE, (ascx_min<int32_t>(6, i0 * (-6) + 256)) * 256);
        Add(s_ubLocal, tmp1.ReinterpretCast<float>(), tmp1.ReinterpretCast<float>()[1536], (ascx_min<int32_t>(6, i0 * (-6) + 256)) * 256);
        inQueue_M_ub.FreeTensor(M_ubLocal);
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
    }
    __aicore__ inline void CopyOutBias(int32_t i0)
    {
        DataCopy(sGm[i0 * 1536], s_ubLocal, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        SetFlag<HardEvent::MTE3_V>(0);
        WaitFlag<HardEvent::MTE3_V>(0);
        inQueue_s_ub.FreeTensor(s_ubLocal);
    }
    __aicore__ inline void ProcessBias()
    {
        pipe.InitBuffer(inQueue_M_ub, 1, 3072);
        pipe.InitBuffer(inQueue_s_ub, 1, 6144);
        pipe.InitBuffer(ubPad1_0, 56320);  // UB bank placement (ub_place.py): tmpBuf1 at UB byte 65536
        pipe.InitBuffer(tmpBuf1, 12288);
        tmp1 = tmpBuf1.Get<uint8_t>();
        // 43 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 43) {
            int32_t i0Begin2 = 0 + workerIdx * 1;
            int32_t i0End2 = i0Begin2 + 1;
            for (int32_t i0 = i0Begin2; i0 < i0End2; ++i0) {
                CopyInBias(i0);
                ComputeBias(i0);
                CopyOutBias(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }
    __aicore__ inline void CopyInRmax(int32_t i0)
    {
        s_ub_1Local = inQueue_s_ub_1.AllocTensor<float>();
        DataCopy(s_ub_1Local, sGm[i0 * 1536], ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        inQueue_s_ub_1.EnQue(s_ub_1Local);
    }
    __aicore__ inline void ComputeRmax(int32_t i0)
    {
        s_ub_1Local = inQueue_s_ub_1.DeQue<float>();
        mx_ubLocal = outQueue_mx_ub.AllocTensor<float>();
        Max(tmp2.ReinterpretCast<float>(), s_ub_1Local, s_ub_1Local[64], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 1, 32, 32, 32));
        Max(tmp2.ReinterpretCast<float>(), tmp2.ReinterpretCast<float>(), s_ub_1Local[128], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 1, 32, 32, 32));
        Max(tmp2.ReinterpretCast<float>(), tmp2.ReinterpretCast<float>(), s_ub_1Local[192], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 1, 32, 32, 32));
        WholeReduceMax(mx_ubLocal, tmp2.ReinterpretCast<float>(), 64, ascx_min<int32_t>(6, i0 * (-6) + 256), 1, 1, 32, ReduceOrder::ORDER_ONLY_VALUE);
        outQueue_mx_ub.EnQue(mx_ubLocal);
        inQueue_s_ub_1.FreeTensor(s_ub_1Local);
    }
    __aicore__ inline void CopyOutRmax(int32_t i0)
    {
        mx_ubLocal = outQueue_mx_ub.DeQue<float>();
        DataCopyPad(mxGm[i0 * 6], mx_ubLocal, DataCopyExtParams(1, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 4, 0, 0, 0));
        outQueue_mx_ub.FreeTensor(mx_ubLocal);
    }
    __aicore__ inline void ProcessRmax()
    {
        pipe.InitBuffer(outQueue_mx_ub, 1, 32);
        pipe.InitBuffer(inQueue_s_ub_1, 1, 6144);
        pipe.InitBuffer(ubPad2_0, 59360);  // UB bank placement (ub_place.py): tmpBuf2 at UB byte 65536
        pipe.InitBuffer(tmpBuf2, 6144);
        tmp2 = tmpBuf2.Get<uint8_t>();
        // 43 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 43) {
            int32_t i0Begin3 = 0 + workerIdx * 1;
            int32_t i0End3 = i0Begin3 + 1;
            for (int32_t i0 = i0Begin3; i0 < i0End3; ++i0) {
                CopyInRmax(i0);
                ComputeRmax(i0);
                CopyOutRmax(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }
    __aicore__ inline void CopyInExpo(int32_t i0)
    {
        mx_ub_1Local = inQueue_mx_ub_1.AllocTensor<float>();
        DataCopyPad(mx_ub_1Local, mxGm[i0 * 6], DataCopyExtParams(1, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 4, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
        inQueue_mx_ub_1.EnQue(mx_ub_1Local);
        s_ub_2Local = inQueue_s_ub_2.AllocTensor<float>();
        DataCopy(s_ub_2Local, sGm[i0 * 1536], ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        inQueue_s_ub_2.EnQue(s_ub_2Local);
    }
    __aicore__ inline void ComputeExpo(int32_t i0)
    {
        mx_ub_1Local = inQueue_mx_ub_1.DeQue<float>();
        s_ub_2Local = inQueue_s_ub_2.DeQue<float>();
        sm_ubLocal = outQueue_sm_ub.AllocTensor<float>();
        Brcb(tmp3.ReinterpretCast<float>()[1536], mx_ub_1Local, ((ascx_min<int32_t>(6, i0 * (-6) + 256)) + 7) / 8, BrcbRepeatParams(1, 8));
        Sub(tmp3.ReinterpretCast<float>(), s_ub_2Local, tmp3.ReinterpretCast<float>()[1536], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 0, 32, 32, 1));
        Sub(tmp3.ReinterpretCast<float>()[64], s_ub_2Local[64], tmp3.ReinterpretCast<float>()[1536], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 0, 32, 32, 1));
        Sub(tmp3.ReinterpretCast<float>()[128], s_ub_2Local[128], tmp3.ReinterpretCast<float>()[1536], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 0, 32, 32, 1));
        Sub(tmp3.ReinterpretCast<float>()[192], s_ub_2Local[192], tmp3.ReinterpretCast<float>()[1536], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 0, 32, 32, 1));
        Exp(s_ub_2Local, tmp3.ReinterpretCast<float>(), (ascx_min<int32_t>(6, i0 * (-6) + 256)) * 256);
        Add(tmp3.ReinterpretCast<float>()[1536], s_ub_2Local, s_ub_2Local[64], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 1, 32, 32, 32));
        Add(tmp3.ReinterpretCast<float>()[1536], tmp3.ReinterpretCast<float>()[1536], s_ub_2Local[128], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 1, 32, 32, 32));
        Add(tmp3.ReinterpretCast<float>()[1536], tmp3.ReinterpretCast<float>()[1536], s_ub_2Local[192], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 1, 32, 32, 32));
        WholeReduceSum(sm_ubLocal, tmp3.ReinterpretCast<float>()[1536], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), 1, 1, 32);
        outQueue_sm_ub.EnQue(sm_ubLocal);
        inQueue_mx_ub_1.FreeTensor(mx_ub_1Local);
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
    }
    __aicore__ inline void CopyOutExpo(int32_t i0)
    {
        DataCopy(sGm[i0 * 1536], s_ub_2Local, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        sm_ubLocal = outQueue_sm_ub.DeQue<float>();
        DataCopyPad(smGm[i0 * 6], sm_ubLocal, DataCopyExtParams(1, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 4, 0, 0, 0));
        SetFlag<HardEvent::MTE3_V>(0);
        WaitFlag<HardEvent::MTE3_V>(0);
        inQueue_s_ub_2.FreeTensor(s_ub_2Local);
        outQueue_sm_ub.FreeTensor(sm_ubLocal);
    }
    __aicore__ inline void ProcessExpo()
    {
        pipe.InitBuffer(inQueue_mx_ub_1, 1, 32);
        pipe.InitBuffer(inQueue_s_ub_2, 1, 6144);
        pipe.InitBuffer(outQueue_sm_ub, 1, 32);
        pipe.InitBuffer(ubPad3_0, 59360);  // UB bank placement (ub_place.py): tmpBuf3 at UB byte 65568
        pipe.InitBuffer(tmpBuf3, 12288);
        tmp3 = tmpBuf3.Get<uint8_t>();
        // 43 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 43) {
            int32_t i0Begin4 = 0 + workerIdx * 1;
            int32_t i0End4 = i0Begin4 + 1;
            for (int32_t i0 = i0Begin4; i0 < i0End4; ++i0) {
                CopyInExpo(i0);
                ComputeExpo(i0);
                CopyOutExpo(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }
    __aicore__ inline void CopyInRoundS(int32_t i0)
    {
        s_ub_3Local = inQueue_s_ub_3.AllocTensor<float>();
        DataCopy(s_ub_3Local, sGm[i0 * 1536], ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        inQueue_s_ub_3.EnQue(s_ub_3Local);
    }
    __aicore__ inline void ComputeRoundS(int32_t i0)
    {
        s_ub_3Local = inQueue_s_ub_3.DeQue<float>();
        s_f16_ubLocal = outQueue_s_f16_ub.AllocTensor<half>();
        Cast(s_f16_ubLocal, s_ub_3Local, RoundMode::CAST_RINT, (ascx_min<int32_t>(6, i0 * (-6) + 256)) * 256);
        outQueue_s_f16_ub.EnQue(s_f16_ubLocal);
        inQueue_s_ub_3.FreeTensor(s_ub_3Local);
    }
    __aicore__ inline void CopyOutRoundS(int32_t i0)
    {
        s_f16_ubLocal = outQueue_s_f16_ub.DeQue<half>();
        DataCopy(s_f16Gm[i0 * 1536], s_f16_ubLocal, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 256);
        outQueue_s_f16_ub.FreeTensor(s_f16_ubLocal);
    }
    __aicore__ inline void ProcessRoundS()
    {
        pipe.InitBuffer(inQueue_s_ub_3, 1, 6144);
        pipe.InitBuffer(ubPad4_0, 59392);  // UB bank placement (ub_place.py): outQueue_s_f16_ub at UB byte 65536
        pipe.InitBuffer(outQueue_s_f16_ub, 1, 3072);
        // 43 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 43) {
            int32_t i0Begin5 = 0 + workerIdx * 1;
            int32_t i0End5 = i0Begin5 + 1;
            for (int32_t i0 = i0Begin5; i0 < i0End5; ++i0) {
                CopyInRoundS(i0);
                ComputeRoundS(i0);
                CopyOutRoundS(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }
    __aicore__ inline void CopyInPv(int32_t i0)
    {
        V_l1Local = que_V_l1.AllocTensor<half>();
        DataCopy(V_l1Local, VGm, Nd2NzParams(1, 256, 64, 0, 64, 256, 1, 0));
        que_V_l1.EnQue(V_l1Local);
        V_l1Local = que_V_l1.DeQue<half>();
        V_l0bLocal = que_V_l0b.AllocTensor<half>();
        for (int32_t ascx_kb = 0; ascx_kb < 16; ++ascx_kb) {
            LoadData(V_l0bLocal[ascx_kb * 1024], V_l1Local[ascx_kb * 256], LoadData2DParams(0, 4, 16, 0, 0, true, 0));
        }
        que_V_l0b.EnQue(V_l0bLocal);
        s_f16_l1Local = que_s_f16_l1.AllocTensor<half>();
        DataCopy(s_f16_l1Local, s_f16Gm[i0 * 16384], Nd2NzParams(1, 64, 256, 0, 256, 64, 1, 0));
        que_s_f16_l1.EnQue(s_f16_l1Local);
        s_f16_l1Local = que_s_f16_l1.DeQue<half>();
        s_f16_l0aLocal = que_s_f16_l0a.AllocTensor<half>();
        for (int32_t ascx_kb = 0; ascx_kb < 16; ++ascx_kb) {
            LoadData(s_f16_l0aLocal[ascx_kb * 256], s_f16_l1Local[ascx_kb * 1024], LoadData2DParams(0, 4, 1, 0, 15, false, 0));
        }
        que_s_f16_l0a.EnQue(s_f16_l0aLocal);
        que_V_l1.FreeTensor(V_l1Local);
        que_s_f16_l1.FreeTensor(s_f16_l1Local);
    }
    __aicore__ inline void ComputePv()
    {
        V_l0bLocal = que_V_l0b.DeQue<half>();
        s_f16_l0aLocal = que_s_f16_l0a.DeQue<half>();
        acc_l0cLocal = que_acc_l0c.AllocTensor<float>();
        MmadParams mmadParams2(64, 64, 256, false, 0, false, false, false);
        mmadParams2.cmatrixInitVal = true;
        Mmad(acc_l0cLocal, s_f16_l0aLocal, V_l0bLocal, mmadParams2);
        que_acc_l0c.EnQue(acc_l0cLocal);
        que_V_l0b.FreeTensor(V_l0bLocal);
        que_s_f16_l0a.FreeTensor(s_f16_l0aLocal);
    }
    __aicore__ inline void CopyOutPv(int32_t i0)
    {
        acc_l0cLocal = que_acc_l0c.DeQue<float>();
        FixpipeParamsV220 fixParams2(64, 64, 64, 64, false);
        Fixpipe(accGm[i0 * 4096], acc_l0cLocal, fixParams2);
        que_acc_l0c.FreeTensor(acc_l0cLocal);
    }
    __aicore__ inline void ProcessPv()
    {
        pipe.InitBuffer(que_V_l1, 1, 32768);
        pipe.InitBuffer(que_V_l0b, 1, 32768);
        pipe.InitBuffer(que_acc_l0c, 1, 16384);
        pipe.InitBuffer(que_s_f16_l1, 1, 32768);
        pipe.InitBuffer(que_s_f16_l0a, 1, 32768);
        // 4 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 4) {
            int32_t i0Begin6 = 0 + workerIdx * 1;
            int32_t i0End6 = i0Begin6 + 1;
            for (int32_t i0 = i0Begin6; i0 < i0End6; ++i0) {
                CopyInPv(i0);
                ComputePv();
                CopyOutPv(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }
    __aicore__ inline void CopyInPvEpi(int32_t i0)
    {
        acc_ubLocal = inQueue_acc_ub.AllocTensor<float>();
        DataCopy(acc_ubLocal, accGm[i0 * 384], ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 64);
        inQueue_acc_ub.EnQue(acc_ubLocal);
        sm_ub_1Local = inQueue_sm_ub_1.AllocTensor<float>();
        DataCopyPad(sm_ub_1Local, smGm[i0 * 6], DataCopyExtParams(1, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 4, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
        inQueue_sm_ub_1.EnQue(sm_ub_1Local);
    }
    __aicore__ inline void ComputePvEpi(int32_t i0)
    {
        acc_ubLocal = inQueue_acc_ub.DeQue<float>();
        sm_ub_1Local = inQueue_sm_ub_1.DeQue<float>();
        O_ubLocal = outQueue_O_ub.AllocTensor<half>();
        Brcb(tmp6.ReinterpretCast<float>()[384], sm_ub_1Local, ((ascx_min<int32_t>(6, i0 * (-6) + 256)) + 7) / 8, BrcbRepeatParams(1, 8));
        Div(tmp6.ReinterpretCast<float>(), acc_ubLocal, tmp6.ReinterpretCast<float>()[384], 64, ascx_min<int32_t>(6, i0 * (-6) + 256), BinaryRepeatParams(1, 1, 0, 8, 8, 1));
        Cast(O_ubLocal, tmp6.ReinterpretCast<float>(), RoundMode::CAST_RINT, (ascx_min<int32_t>(6, i0 * (-6) + 256)) * 64);
        outQueue_O_ub.EnQue(O_ubLocal);
        inQueue_acc_ub.FreeTensor(acc_ubLocal);
        inQueue_sm_ub_1.FreeTensor(sm_ub_1Local);
    }
    __aicore__ inline void CopyOutPvEpi(int32_t i0)
    {
        O_ubLocal = outQueue_O_ub.DeQue<half>();
        DataCopy(OGm[i0 * 384], O_ubLocal, ((ascx_min<int32_t>(6, i0 * (-6) + 256) - (0))) * 64);
        outQueue_O_ub.FreeTensor(O_ubLocal);
    }
    __aicore__ inline void ProcessPvEpi()
    {
        pipe.InitBuffer(outQueue_O_ub, 1, 768);
        pipe.InitBuffer(inQueue_acc_ub, 1, 1536);
        pipe.InitBuffer(inQueue_sm_ub_1, 1, 32);
        pipe.InitBuffer(ubPad6_0, 63456);  // UB bank placement (ub_place.py): tmpBuf6 at UB byte 65792
        pipe.InitBuffer(tmpBuf6, 3072);
        tmp6 = tmpBuf6.Get<uint8_t>();
        // 43 workers (GetBlockIdx): worker w runs iterations [0 + w * 1, 0 + (w + 1) * 1)
        if (workerIdx < 43) {
            int32_t i0Begin7 = 0 + workerIdx * 1;
            int32_t i0End7 = i0Begin7 + 1;
            for (int32_t i0 = i0Begin7; i0 < i0End7; ++i0) {
                CopyInPvEpi(i0);
                ComputePvEpi(i0);
                CopyOutPvEpi(i0);
            }
        }
        PipeBarrier<PIPE_ALL>();
        pipe.Reset();
    }

private:
    TPipe pipe;
    TQue<TPosition::B1, 1> que_K_l1;
    LocalTensor<half> K_l1Local;
    TQue<TPosition::B2, 1> que_K_l0b;
    LocalTensor<half> K_l0bLocal;
    TQue<TPosition::A1, 1> que_Q_l1;
    LocalTensor<half> Q_l1Local;
    TQue<TPosition::A2, 1> que_Q_l0a;
    LocalTensor<half> Q_l0aLocal;
    TQue<TPosition::CO1, 1> que_s_l0c;
    LocalTensor<float> s_l0cLocal;
    TQue<TPosition::VECIN, 1> inQueue_M_ub;
    LocalTensor<half> M_ubLocal;
    TQue<TPosition::VECIN, 1> inQueue_s_ub;
    LocalTensor<float> s_ubLocal;
    TQue<TPosition::VECOUT, 1> outQueue_mx_ub;
    LocalTensor<float> mx_ubLocal;
    TQue<TPosition::VECIN, 1> inQueue_s_ub_1;
    LocalTensor<float> s_ub_1Local;
    TQue<TPosition::VECIN, 1> inQueue_mx_ub_1;
    LocalTensor<float> mx_ub_1Local;
    TQue<TPosition::VECIN, 1> inQueue_s_ub_2;
    LocalTensor<float> s_ub_2Local;
    TQue<TPosition::VECOUT, 1> outQueue_sm_ub;
    LocalTensor<float> sm_ubLocal;
    TQue<TPosition::VECIN, 1> inQueue_s_ub_3;
    LocalTensor<float> s_ub_3Local;
    TQue<TPosition::VECOUT, 1> outQueue_s_f16_ub;
    LocalTensor<half> s_f16_ubLocal;
    TQue<TPosition::B1, 1> que_V_l1;
    LocalTensor<half> V_l1Local;
    TQue<TPosition::B2, 1> que_V_l0b;
    LocalTensor<half> V_l0bLocal;
    TQue<TPosition::CO1, 1> que_acc_l0c;
    LocalTensor<float> acc_l0cLocal;
    TQue<TPosition::A1, 1> que_s_f16_l1;
    LocalTensor<half> s_f16_l1Local;
    TQue<TPosition::A2, 1> que_s_f16_l0a;
    LocalTensor<half> s_f16_l0aLocal;
    TQue<TPosition::VECOUT, 1> outQueue_O_ub;
    LocalTensor<half> O_ubLocal;
    TQue<TPosition::VECIN, 1> inQueue_acc_ub;
    LocalTensor<float> acc_ubLocal;
    TQue<TPosition::VECIN, 1> inQueue_sm_ub_1;
    LocalTensor<float> sm_ub_1Local;
    TBuf<TPosition::VECCALC> tmpBuf1;
    LocalTensor<uint8_t> tmp1;
    TBuf<TPosition::VECCALC> tmpBuf2;
    LocalTensor<uint8_t> tmp2;
    TBuf<TPosition::VECCALC> tmpBuf3;
    LocalTensor<uint8_t> tmp3;
    TBuf<TPosition::VECCALC> tmpBuf6;
    LocalTensor<uint8_t> tmp6;
    TBuf<TPosition::VECCALC> ubPad1_0;  // moves the next UB buffer (bank placement)
    TBuf<TPosition::VECCALC> ubPad2_0;  // moves the next UB buffer (bank placement)
    TBuf<TPosition::VECCALC> ubPad3_0;  // moves the next UB buffer (bank placement)
    TBuf<TPosition::VECCALC> ubPad4_0;  // moves the next UB buffer (bank placement)
    TBuf<TPosition::VECCALC> ubPad6_0;  // moves the next UB buffer (bank placement)
    GlobalTensor<half> QGm;
    GlobalTensor<half> KGm;
    GlobalTensor<half> VGm;
    GlobalTensor<half> MGm;
    GlobalTensor<half> OGm;
    GlobalTensor<float> sGm;
    GlobalTensor<half> s_f16Gm;
    GlobalTensor<float> mxGm;
    GlobalTensor<float> smGm;
    GlobalTensor<float> accGm;
    int32_t workerIdx = 0;
};

extern "C" __global__ __aicore__ void attention(GM_ADDR Q, GM_ADDR K, GM_ADDR V, GM_ADDR M, GM_ADDR O, GM_ADDR workspace)
{
    KernelAttention op;
    op.Init(Q, K, V, M, O, workspace);
    op.Process();
}
