// ascx emulator: stand-in for the high-level Matmul header (`lib/matmul_intf.h`): `MatmulType`,
// `matmul::Matmul` (Init, SetTensorA/B, SetBias, SetOrgShape, SetSingleShape, SetTail, IterateAll,
// Iterate + GetTensorC, End) and `REGIST_MATMUL_OBJ`, written from the public API reference.
// Clean-room (Apache-2.0).
//
// Semantics: C[m][n] = sum_k A[m][k] * B[k][n] (+ bias[n]) over the single-core shape
// (TCubeTiling singleCoreM/N/K, or SetSingleShape / SetTail), A, B and C in ND layout with the
// original shapes' row strides (Ka, N; transposed A is [K][M] with row stride M, transposed B
// [N][K] with row stride Kb), accumulated in float (int32 for int8) and rounded once to C's
// type. `Iterate` steps over [baseM, baseN] blocks of C in the tiling's iterateOrder (0: along
// M first, 1: along N first); `GetTensorC` writes the current block to its place in a GM C (or
// packed [baseM, baseN] into a local tensor).
//
// Timing: each [baseM, baseN] block is priced as the cube instructions it stands for: MTE2 loads
// of its A and B panels into L1, MTE1 loads into L0A / L0B, Mmad over its 16 x 16 x C0
// fractals, a Fixpipe of the block to GM, chained by sync edges (MTE2 -> MTE1 -> M -> FIX), on
// the calling core. The panels are reloaded per block (no stepM / stepN reuse in L1: an upper
// bound on MTE2). In a MIX launch the AIC side of the object is the server that the AIV calls
// drive on the device: here the AIV core computes, and the AIC's kernel returns at
// REGIST_MATMUL_OBJ as the device's does (with ASCENDC_CUBE_ONLY the AIC computes itself).
#pragma once
// A unit that defines ASCENDC_CUBE_ONLY gets its own copy of the classes (an inline namespace
// of its own name), so the units of one program may differ in it without breaking the ODR.
#ifdef ASCENDC_CUBE_ONLY
#define ASCX_EMU_MM_ABI cube_only
#else
#define ASCX_EMU_MM_ABI mixed
#endif
#include <cstring>
#include <type_traits>
#include <vector>

#include "../kernel_operator.h"
#include "../kernel_tiling/kernel_tiling.h"

namespace AscendC {
enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
// MatmulType's fifth parameter (the batch layout; only NONE, plain matrices, is emulated) and
// sixth (IBShare: an operand shared by the two AIV clients of a block; no effect here).
enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
template <TPosition POS, CubeFormat FMT, typename T, bool ISTRANS = false, auto... MORE> struct MatmulType {
    static constexpr TPosition pos = POS;
    static constexpr CubeFormat format = FMT;
    static constexpr bool isTrans = ISTRANS;
    using type = T;
    using T_ = T;
};
struct MatmulConfig {
    bool doNorm = true;
    bool doMultiDataLoad = false;
};
inline constexpr MatmulConfig CFG_NORM = {true, false};
inline constexpr MatmulConfig CFG_MDL = {false, true};
inline constexpr MatmulConfig CFG_IBSHARE_NORM = {true, false};
constexpr MatmulConfig GetNormalConfig(bool = false, bool = false, bool = false, int = 0, bool = false) { return CFG_NORM; }
constexpr MatmulConfig GetMDLConfig(bool = false, bool = false, int = 0, bool = false, bool = false, bool = false, bool = false) {
    return CFG_MDL;
}
}  // namespace AscendC

namespace ascx_emu {
namespace mm {
inline namespace ASCX_EMU_MM_ABI {
// True on the AIC of a MIX launch, where a Matmul object is the server the AIV cores call;
// a kernel defining ASCENDC_CUBE_ONLY runs its matmul on the AIC itself.
inline bool aic_serves() {
#ifdef ASCENDC_CUBE_ONLY
    return false;
#else
    const CoreState* c = cur_core();
    return c && c->mix && c->kind == CoreKind::AIC;
#endif
}
template <typename T> inline double val(const T& v) { return static_cast<double>(static_cast<float>(v)); }
inline double val(int8_t v) { return v; }
inline double val(int32_t v) { return v; }
// A host-visible view of one operand: GM or local, with a bounds check per row.
template <typename T> struct Operand {
    const T* p = nullptr;
    const AscendC::GlobalTensor<T>* gm = nullptr;  // for the bounds check
    AscendC::GlobalTensor<T> g;
    bool set = false, local = false;
    size_t local_len = 0;
};
}  // namespace ASCX_EMU_MM_ABI
}  // namespace mm
}  // namespace ascx_emu

namespace matmul {
using AscendC::MatmulType;
using AscendC::CubeFormat;
inline namespace ASCX_EMU_MM_ABI {

template <class A, class B, class C, class BIAS = C, const AscendC::MatmulConfig& MM_CFG = AscendC::CFG_NORM, class... MORE>
class Matmul {
    using TA = typename A::type;
    using TB = typename B::type;
    using TC = typename C::type;
    using TBias = typename BIAS::type;
    using Acc = typename std::conditional<std::is_same<TA, int8_t>::value, int32_t, float>::type;

public:
    void Init(const TCubeTiling* tiling, AscendC::TPipe* pipe = nullptr, ASCX_LOC) {
        (void)pipe;
        if (tiling == nullptr) ascx_emu::fail("Matmul::Init", loc, "the tiling is nullptr");
        t_ = *tiling;
        inited_ = true;
        orgM_ = t_.M, orgN_ = t_.N, orgKa_ = t_.Ka, orgKb_ = t_.Kb;
        m_ = t_.singleCoreM, n_ = t_.singleCoreN, k_ = t_.singleCoreK;
        if (t_.baseM <= 0 || t_.baseN <= 0 || m_ <= 0 || n_ <= 0 || k_ <= 0)
            ascx_emu::fail("Matmul::Init", loc, "the tiling has empty shapes (singleCore %d x %d x %d, base %d x %d): "
                           "was it filled by matmul_tiling::...::GetTiling?", m_, n_, k_, t_.baseM, t_.baseN);
        bias_on_ = t_.isBias != 0;
        server_ = ascx_emu::mm::aic_serves();
    }
    void SetOrgShape(int orgM, int orgN, int orgK) { orgM_ = orgM, orgN_ = orgN, orgKa_ = orgK, orgKb_ = orgK; }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
        (void)orgKc;
        orgM_ = orgM, orgN_ = orgN, orgKa_ = orgKa, orgKb_ = orgKb;
    }
    void SetSingleShape(int singleM, int singleN, int singleK) { m_ = singleM, n_ = singleN, k_ = singleK; }
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
        if (tailM > 0) m_ = tailM;
        if (tailN > 0) n_ = tailN;
        if (tailK > 0) k_ = tailK;
    }
    void SetTensorA(const AscendC::GlobalTensor<TA>& gm, bool isTransposeA = false) { set_gm(a_, gm), transA_ = isTransposeA || A::isTrans; }
    void SetTensorB(const AscendC::GlobalTensor<TB>& gm, bool isTransposeB = false) { set_gm(b_, gm), transB_ = isTransposeB || B::isTrans; }
    void SetTensorA(const AscendC::LocalTensor<TA>& t, bool isTransposeA = false) { set_local(a_, t), transA_ = isTransposeA || A::isTrans; }
    void SetTensorB(const AscendC::LocalTensor<TB>& t, bool isTransposeB = false) { set_local(b_, t), transB_ = isTransposeB || B::isTrans; }
    void SetBias(const AscendC::GlobalTensor<TBias>& gm) { set_gm(bias_, gm), bias_on_ = true; }
    void SetBias(const AscendC::LocalTensor<TBias>& t) { set_local(bias_, t), bias_on_ = true; }
    void DisableBias() { bias_on_ = false; }
    void ClearBias() { bias_on_ = false; }
    template <typename... X> void SetWorkspace(X&&...) {}
    template <typename... X> void SetLocalWorkspace(X&&...) {}
    template <typename... X> void SetHF32(X&&...) {}
    template <typename... X> void SetQuantScalar(X&&...) {}
    void End() { iter_ = -1, async_ = false; }

    template <bool sync = true>
    void IterateAll(const AscendC::GlobalTensor<TC>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false, bool waitIterateAll = false,
                    bool fakeMsg = false, ASCX_LOC) {
        (void)enSequentialWrite, (void)waitIterateAll, (void)fakeMsg;
        if (server_) return;
        start("Matmul::IterateAll", loc);
        for (iter_ = 0; iter_ < blocks(); ++iter_) {
            compute_block("Matmul::IterateAll", loc);
            write_gm(gm, enAtomic != 0, false, "Matmul::IterateAll", loc);
        }
        iter_ = -1;
    }
    template <bool sync = true> bool Iterate(bool enPartialSum = false, ASCX_LOC) {
        (void)enPartialSum;
        if (server_) return false;
        if (iter_ < 0) start("Matmul::Iterate", loc), async_ = !sync;
        if (++iter_ >= blocks()) {
            iter_ = -1;
            return false;
        }
        compute_block("Matmul::Iterate", loc);
        fetched_ = false;
        return true;
    }
    template <bool sync = true>
    void GetTensorC(const AscendC::GlobalTensor<TC>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false, ASCX_LOC) {
        if (server_) return;
        if (iter_ < 0) ascx_emu::fail("Matmul::GetTensorC", loc, "no block computed: call Iterate() first (it returned false or was not called)");
        next_async("Matmul::GetTensorC", loc);
        write_gm(gm, enAtomic != 0, enSequentialWrite, "Matmul::GetTensorC", loc);
    }
    template <bool sync = true>
    void GetTensorC(const AscendC::LocalTensor<TC>& co2, uint8_t enAtomic = 0, bool enSequentialWrite = false, ASCX_LOC) {
        (void)enSequentialWrite;
        if (server_) return;
        if (iter_ < 0) ascx_emu::fail("Matmul::GetTensorC", loc, "no block computed: call Iterate() first");
        next_async("Matmul::GetTensorC", loc);
        const int bm = t_.baseM, bn = t_.baseN;
        TC* d = co2.Ptr("Matmul::GetTensorC", 0, static_cast<int64_t>(bm) * bn, loc);
        for (int i = 0; i < (ascx_emu::skip_data() ? 0 : rows_); ++i)
            for (int j = 0; j < cols_; ++j) {
                Acc v = acc_[static_cast<size_t>(i) * cols_ + j];
                d[i * bn + j] = enAtomic ? static_cast<TC>(static_cast<Acc>(ascx_emu::mm::val(d[i * bn + j])) + v) : static_cast<TC>(v);
            }
    }

private:
    // An asynchronous Iterate<false>() starts the whole single-core product; each GetTensorC
    // then takes the next [baseM, baseN] block in iterateOrder (the first one Iterate computed).
    void next_async(const char* api, ascx_emu::SrcLoc loc) {
        if (async_ && fetched_) {
            if (iter_ + 1 >= blocks())
                ascx_emu::fail(api, loc, "asynchronous Iterate<false>(): GetTensorC called more often than the %d blocks of C", blocks());
            ++iter_;
            compute_block(api, loc);
        }
        fetched_ = true;
    }
    template <typename T> void set_gm(ascx_emu::mm::Operand<T>& o, const AscendC::GlobalTensor<T>& gm) {
        o.g = gm, o.p = gm.GetPhyAddr(), o.set = true, o.local = false;
    }
    template <typename T> void set_local(ascx_emu::mm::Operand<T>& o, const AscendC::LocalTensor<T>& t) {
        o.p = t.Ptr("Matmul::SetTensor", 0, t.GetSize(), ascx_emu::SrcLoc{"?", 0}), o.set = true, o.local = true, o.local_len = t.GetSize();
    }
    template <typename T> const T* rows(ascx_emu::mm::Operand<T>& o, int64_t first, int64_t count, const char* api, ascx_emu::SrcLoc loc) {
        if (!o.local) o.g.Check(api, static_cast<uint64_t>(first), static_cast<uint64_t>(count), loc);
        else if (static_cast<size_t>(first + count) > o.local_len)
            ascx_emu::fail(api, loc, "local operand access [%lld, %lld) out of its %zu elements", (long long)first, (long long)(first + count),
                           o.local_len);
        return o.p + first;
    }
    void start(const char* api, ascx_emu::SrcLoc loc) {
        if (!inited_) ascx_emu::fail(api, loc, "the Matmul object has no tiling: REGIST_MATMUL_OBJ(pipe, workspace, obj, &tiling) or Init(&tiling)");
        if (!a_.set || !b_.set) ascx_emu::fail(api, loc, "SetTensorA and SetTensorB must come first");
        if (bias_on_ && !bias_.set) ascx_emu::fail(api, loc, "the tiling enables bias (isBias) but SetBias was not called");
    }
    int mblocks() const { return (m_ + t_.baseM - 1) / t_.baseM; }
    int nblocks() const { return (n_ + t_.baseN - 1) / t_.baseN; }
    int blocks() const { return mblocks() * nblocks(); }
    void block_pos(int& mi, int& ni) const {
        if (t_.iterateOrder == 1) mi = iter_ / nblocks(), ni = iter_ % nblocks();
        else mi = iter_ % mblocks(), ni = iter_ / mblocks();
    }
    // C block [r0, r0 + rows) x [c0, c0 + cols) of the single-core result, priced on the cube pipes.
    void compute_block(const char* api, ascx_emu::SrcLoc loc) {
        int mi, ni;
        block_pos(mi, ni);
        r0_ = mi * t_.baseM, c0_ = ni * t_.baseN;
        rows_ = std::min(t_.baseM, m_ - r0_), cols_ = std::min(t_.baseN, n_ - c0_);
        price(api, loc);
        acc_.assign(static_cast<size_t>(rows_) * cols_, Acc(0));
        if (ascx_emu::skip_data()) return;
        const int K = k_;
        const int64_t lda = transA_ ? orgM_ : orgKa_, ldb = transB_ ? orgKb_ : orgN_;
        // bounds: the first and last element each operand block reads, checked once
        const int64_t m1 = r0_ + rows_ - 1, n1 = c0_ + cols_ - 1;
        const int64_t a_lo = transA_ ? r0_ : r0_ * lda, a_hi = transA_ ? (K - 1) * lda + m1 : m1 * lda + K - 1;
        const int64_t b_lo = transB_ ? c0_ * ldb : c0_, b_hi = transB_ ? n1 * ldb + K - 1 : (K - 1) * ldb + n1;
        const TA* pa = rows(a_, a_lo, a_hi - a_lo + 1, api, loc) - a_lo;
        const TB* pb = rows(b_, b_lo, b_hi - b_lo + 1, api, loc) - b_lo;
        const TBias* pbias = bias_on_ ? rows(bias_, c0_, cols_, api, loc) - c0_ : nullptr;
        std::vector<double> arow(static_cast<size_t>(K));
        for (int i = 0; i < rows_; ++i) {
            const int64_t m = r0_ + i;
            for (int k = 0; k < K; ++k) arow[static_cast<size_t>(k)] = ascx_emu::mm::val(pa[transA_ ? k * lda + m : m * lda + k]);
            for (int j = 0; j < cols_; ++j) {
                const int64_t n = c0_ + j;
                double s = 0;
                for (int k = 0; k < K; ++k) s += arow[static_cast<size_t>(k)] * ascx_emu::mm::val(pb[transB_ ? n * ldb + k : k * ldb + n]);
                if (pbias) s += ascx_emu::mm::val(pbias[n]);
                acc_[static_cast<size_t>(i) * cols_ + j] = static_cast<Acc>(s);
            }
        }
    }
    void write_gm(const AscendC::GlobalTensor<TC>& gm, bool atomic, bool sequential, const char* api, ascx_emu::SrcLoc loc) {
        if (ascx_emu::skip_data()) return;
        for (int i = 0; i < rows_; ++i) {
            const int64_t row = sequential ? static_cast<int64_t>(i) * t_.baseN : static_cast<int64_t>(r0_ + i) * orgN_ + c0_;
            gm.Check(api, static_cast<uint64_t>(row), static_cast<uint64_t>(cols_), loc);
            TC* d = gm.GetPhyAddr() + row;
            for (int j = 0; j < cols_; ++j) {
                Acc v = acc_[static_cast<size_t>(i) * cols_ + j];
                d[j] = atomic ? static_cast<TC>(static_cast<Acc>(ascx_emu::mm::val(d[j])) + v) : static_cast<TC>(v);
            }
        }
    }
    void price(const char* api, ascx_emu::SrcLoc loc) {
        ascx_emu::CoreState* c = ascx_emu::cur_core();
        if (!c) return;
        namespace tm = ascx_emu::tm;
        const double ka = static_cast<double>(k_), rows = rows_, cols = cols_;
        const double a_bytes = rows * ka * sizeof(TA), b_bytes = ka * cols * sizeof(TB);
        const int c0k = static_cast<int>(32 / sizeof(TA));
        const double fractals = std::ceil(rows / 16.0) * std::ceil(cols / 16.0) * std::ceil(ka / c0k);
        if (!a_.local) tm::gm_touch(c->tm, reinterpret_cast<uintptr_t>(a_.p), static_cast<uint64_t>(a_bytes));
        if (!b_.local) tm::gm_touch(c->tm, reinterpret_cast<uintptr_t>(b_.p), static_cast<uint64_t>(b_bytes));
        tm::Edge e1, e2, e3;
        ascx_emu::account(*c, PIPE_MTE2, api, loc, tm::copy_in(a_bytes + b_bytes, rows + ka, true, 0));
        tm::set_edge(c->tm, PIPE_MTE2, e1);
        tm::wait_edge(c->tm, PIPE_MTE1, e1);
        ascx_emu::account(*c, PIPE_MTE1, api, loc, tm::load_l0(a_bytes, false));
        ascx_emu::account(*c, PIPE_MTE1, api, loc, tm::load_l0(b_bytes, true));
        tm::set_edge(c->tm, PIPE_MTE1, e2);
        tm::wait_edge(c->tm, PIPE_M, e2);
        ascx_emu::account(*c, PIPE_M, api, loc, tm::mmad(fractals, std::is_same<TA, float>::value));
        tm::set_edge(c->tm, PIPE_M, e3);
        tm::wait_edge(c->tm, PIPE_FIX, e3);
        ascx_emu::account(*c, PIPE_FIX, api, loc, tm::fixpipe(rows * cols * sizeof(TC)));
    }

    TCubeTiling t_{};
    bool inited_ = false, server_ = false, transA_ = false, transB_ = false, bias_on_ = false;
    int orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0, m_ = 0, n_ = 0, k_ = 0;
    int iter_ = -1, r0_ = 0, c0_ = 0, rows_ = 0, cols_ = 0;
    bool async_ = false, fetched_ = false;  // Iterate<false>() and whether GetTensorC took the current block
    ascx_emu::mm::Operand<TA> a_;
    ascx_emu::mm::Operand<TB> b_;
    ascx_emu::mm::Operand<TBias> bias_;
    std::vector<Acc> acc_;
};
// The public matmul samples write `using namespace matmul;` alone and then call GetBlockIdx(),
// GetSysWorkSpacePtr(), TPipe... unqualified: the matmul namespace sees AscendC's names.
// The public API reference names the class behind Matmul `MatmulImpl` (samples spell either).
template <class A, class B, class C, class BIAS = C, const AscendC::MatmulConfig& MM_CFG = AscendC::CFG_NORM, class... MORE>
using MatmulImpl = Matmul<A, B, C, BIAS, MM_CFG, MORE...>;
}  // namespace ASCX_EMU_MM_ABI
using namespace AscendC;
}  // namespace matmul
// The public samples also name CubeFormat unqualified at global scope (MatmulType<TPosition::GM,
// CubeFormat::ND, half> after only `using AscendC::MatmulType;`).
using AscendC::CubeFormat;
namespace AscendC {
using ::matmul::Matmul;
}  // namespace AscendC

namespace ascx_emu {
namespace mm {
inline namespace ASCX_EMU_MM_ABI {
// REGIST_MATMUL_OBJ on the AIC of a MIX launch: the objects are served there (the calls of
// the AIV cores drive them; here the AIV computes), and the AIC's kernel returns, as on the
// device, so the code after it (vector work) runs on the AIV cores only.
inline void regist(AscendC::TPipe*) {
    if (aic_serves()) throw KernelReturn{};
}
template <class M> inline void regist(AscendC::TPipe* pipe, M&) { regist(pipe); }  // no tiling: the kernel calls Init later
template <class M, class... R> inline void regist(AscendC::TPipe* pipe, M& obj, const TCubeTiling* tiling, R&&... rest) {
    if (tiling) obj.Init(tiling, pipe);
    regist(pipe, rest...);
}
template <class M, class... R> inline void regist(AscendC::TPipe* pipe, M& obj, TCubeTiling* tiling, R&&... rest) {
    regist(pipe, obj, static_cast<const TCubeTiling*>(tiling), rest...);
}
}  // namespace ASCX_EMU_MM_ABI
}  // namespace mm
}  // namespace ascx_emu

// REGIST_MATMUL_OBJ(pipe, workspace, obj1[, &tiling1[, obj2, &tiling2 ...]]): each object with its tiling.
#define REGIST_MATMUL_OBJ(pipe, workspace, ...) \
    do { (void)(workspace); ::ascx_emu::mm::regist((pipe), __VA_ARGS__); } while (0)
