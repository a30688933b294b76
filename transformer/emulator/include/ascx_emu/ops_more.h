// ascx emulator: more of the public Ascend C API met in public samples (issue 26 item 3):
// event ids (`GetTPipePtr()->FetchEventID`, `AllocEventID`, `ReleaseEventID`, `event_t`), the
// `set_flag` / `wait_flag` / `pipe_barrier` intrinsics, `GlobalTensor::SetL2CacheHint` (a hint:
// no effect on results), `DumpTensor` / `ShapeInfo`, `DEFAULT_C0_SIZE`, `InitOutput`, the GELU
// family (`Gelu`, `FasterGelu`, `FasterGeluV2`) and kernel `assert(cond, fmt, ...)`. Written
// from the public API reference. Clean-room (Apache-2.0).
#pragma once
#include <cassert>
#include <cmath>
#include <cstdio>

namespace AscendC {

// ---------------------------------------------------------------- event ids
enum event_t : int32_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace detail {
// Ids taken by AllocEventID, per HardEvent, for the running core (a thread per core).
inline uint8_t& taken_ids(HardEvent e) {
    static thread_local uint8_t t[static_cast<int>(HardEvent::MAX) + 1] = {};
    return t[static_cast<int>(e)];
}
inline int32_t free_id(HardEvent e) {
    for (int32_t i = 0; i < 8; ++i)
        if (!(taken_ids(e) & (1u << i))) return i;
    return -1;
}
}  // namespace detail

// FetchEventID: an id free for the event (nothing taken); AllocEventID takes it, ReleaseEventID
// gives it back. All 8 taken is an error (the device has 8 per event type).
template <HardEvent EVT> inline TEventID TPipe::FetchEventID() { return FetchEventID(EVT); }
inline TEventID TPipe::FetchEventID(HardEvent evt) {
    int32_t id = detail::free_id(evt);
    if (id < 0) ascx_emu::fail("TPipe::FetchEventID", SrcLoc{"?", 0}, "all 8 event ids of this HardEvent are allocated");
    return static_cast<TEventID>(id);
}
template <HardEvent EVT> inline TEventID TPipe::AllocEventID() {
    TEventID id = FetchEventID(EVT);
    detail::taken_ids(EVT) = static_cast<uint8_t>(detail::taken_ids(EVT) | (1u << id));
    return id;
}
template <HardEvent EVT> inline void TPipe::ReleaseEventID(TEventID id) {
    detail::taken_ids(EVT) = static_cast<uint8_t>(detail::taken_ids(EVT) & ~(1u << (id & 7)));
}
// The running core's TPipe (the last one it constructed).
inline TPipe* GetTPipePtr(ASCX_LOC) {
    TPipe* p = ascx_emu::current_pipe();
    if (p == nullptr) ascx_emu::fail("GetTPipePtr", loc, "no TPipe was created on this core");
    return p;
}

}  // namespace AscendC

namespace ascx_emu {
// The HardEvent between two pipes (set_flag(PIPE_MTE2, PIPE_V, id) is SetFlag<HardEvent::MTE2_V>(id)).
inline AscendC::HardEvent event_of_pipes(pipe_t src, pipe_t dst, const char* api, SrcLoc loc) {
    for (int e = 0; e < static_cast<int>(AscendC::HardEvent::MAX); ++e) {
        int s, d;
        const char* n;
        AscendC::event_pipes(static_cast<AscendC::HardEvent>(e), s, d, n);
        if (s == src && d == dst) return static_cast<AscendC::HardEvent>(e);
    }
    fail(api, loc, "no HardEvent from pipe %d to pipe %d", static_cast<int>(src), static_cast<int>(dst));
}
}  // namespace ascx_emu

// The intrinsic forms (global namespace, as kernels call them).
inline void set_flag(pipe_t src, pipe_t dst, int32_t id, ASCX_LOC) {
    AscendC::set_flag_event(ascx_emu::event_of_pipes(src, dst, "set_flag", loc), id, loc);
}
inline void wait_flag(pipe_t src, pipe_t dst, int32_t id, ASCX_LOC) {
    AscendC::wait_flag_event(ascx_emu::event_of_pipes(src, dst, "wait_flag", loc), id, loc);
}
using AscendC::event_t;
using AscendC::EVENT_ID0; using AscendC::EVENT_ID1; using AscendC::EVENT_ID2; using AscendC::EVENT_ID3;
using AscendC::EVENT_ID4; using AscendC::EVENT_ID5; using AscendC::EVENT_ID6; using AscendC::EVENT_ID7;

namespace AscendC {
// ---------------------------------------------------------------- constants, GM helpers
constexpr uint32_t DEFAULT_C0_SIZE = 32;  // bytes of one C0 group of the fractal formats (32 B)

template <typename T>
inline void InitOutput(GlobalTensor<T>& gm, const uint64_t size, const ascx_emu::nondeduced_t<T> value = 0, ASCX_LOC) {
    Fill(gm, size, value, loc);  // the older name of InitGlobalMemory
}

// ---------------------------------------------------------------- DumpTensor
namespace detail {
template <typename T> inline double dump_value(const T& v) { return static_cast<double>(v); }
template <typename T> inline void dump_values(const char* where, uint32_t desc, const T* p, uint32_t n, const ShapeInfo& info) {
    std::printf("DumpTensor: desc=%u, %s, %u elements of %s", desc, where, n, ascx_emu::type_name<T>());
    if (info.shapeDim) {
        std::printf(", shape [");
        for (uint8_t i = 0; i < info.shapeDim; ++i) std::printf(i ? ", %u" : "%u", info.shape[i]);
        std::printf("]");
    }
    std::printf(":");
    for (uint32_t i = 0; i < n; ++i) std::printf(" %g", dump_value(p[i]));
    std::printf("\n");
}
}  // namespace detail
// Prints `dumpSize` elements (on the host's stdout: the emulator has no device log buffer).
template <typename T>
inline void DumpTensor(const LocalTensor<T>& t, uint32_t desc, uint32_t dumpSize, const ShapeInfo& info = ShapeInfo(), ASCX_LOC) {
    const T* p = t.Ptr("DumpTensor", 0, dumpSize, loc);
    if (!ascx_emu::skip_data()) detail::dump_values("LocalTensor", desc, p, dumpSize, info);
}
template <typename T>
inline void DumpTensor(const GlobalTensor<T>& t, uint32_t desc, uint32_t dumpSize, const ShapeInfo& info = ShapeInfo(), ASCX_LOC) {
    t.Check("DumpTensor", 0, dumpSize, loc);
    if (!ascx_emu::skip_data()) detail::dump_values("GlobalTensor", desc, t.GetPhyAddr(), dumpSize, info);
}
// DumpAccChkPoint: DumpTensor from element countOff on (its page: a dump at an offset); index is
// the desc printed.
template <typename T>
inline void DumpAccChkPoint(const LocalTensor<T>& t, uint32_t index, uint32_t countOff, uint32_t dumpSize, ASCX_LOC) {
    const T* p = t.Ptr("DumpAccChkPoint", countOff, dumpSize, loc);
    if (!ascx_emu::skip_data()) detail::dump_values("LocalTensor", index, p, dumpSize, ShapeInfo());
}
template <typename T>
inline void DumpAccChkPoint(const GlobalTensor<T>& t, uint32_t index, uint32_t countOff, uint32_t dumpSize, ASCX_LOC) {
    t.Check("DumpAccChkPoint", countOff, dumpSize, loc);
    if (!ascx_emu::skip_data()) detail::dump_values("GlobalTensor", index, t.GetPhyAddr() + countOff, dumpSize, ShapeInfo());
}

// ---------------------------------------------------------------- GELU family
// Our reading of the public formulas (the FasterGelu page shows its formula as a picture; we
// use the simplification FastGelu -> x / (1 + exp(-1.702 x)) it names). Computed in double and
// rounded once; priced as the basic vector instructions of the formula (timing: hl_acct).
namespace detail {
template <typename T, typename F>
inline void gelu_like(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t n, int transc, int simple, SrcLoc loc,
                      F&& f) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "the GELU APIs take half or float");
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    const T* x = src.Ptr(api, 0, n, loc);
    T* d = dst.Ptr(api, 0, n, loc);
    bool first = true;
    for (int i = 0; i < transc + simple; ++i) {
        const int cls = i < transc ? ascx_emu::tm::VC_TRANSC : ascx_emu::tm::VC_SIMPLE;
        ascx_emu::account(c, PIPE_V, api, loc, ascx_emu::tm::vec(cls, static_cast<double>(repeats_for<T>(n)), true, static_cast<double>(nbytes<T>(n))),
                          first ? std::initializer_list<ascx_emu::tm::Acc>{ascx_emu::tm::R(src, nbytes<T>(n)), ascx_emu::tm::W(dst, nbytes<T>(n))}
                                : std::initializer_list<ascx_emu::tm::Acc>{});
        first = false;
    }
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : n); ++i) d[i] = static_cast<T>(f(static_cast<double>(x[i])));
    trace_vec<T>(c, api, n, repeats_for<T>(n), loc);
}
}  // namespace detail

template <typename T, bool highPrecision = false, bool highPerformance = false>
inline void Gelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dataSize, ASCX_LOC) {
    detail::gelu_like("Gelu", dst, src, dataSize, 2, 5, loc,
                      [](double x) { return x / (1.0 + std::exp(-1.59576912 * (x + 0.044715 * x * x * x))); });
}
template <typename T, bool highPrecision = false, bool highPerformance = false>
inline void Gelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t dataSize,
                 ASCX_LOC) {
    (void)sharedTmpBuffer;
    Gelu<T, highPrecision, highPerformance>(dst, src, dataSize, loc);
}
template <typename T, bool highPrecision = false, bool highPerformance = false>
inline void FasterGelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dataSize, ASCX_LOC) {
    detail::gelu_like("FasterGelu", dst, src, dataSize, 2, 2, loc, [](double x) { return x / (1.0 + std::exp(-1.702 * x)); });
}
template <typename T, bool highPrecision = false, bool highPerformance = false>
inline void FasterGelu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                       const uint32_t dataSize, ASCX_LOC) {
    (void)sharedTmpBuffer;
    FasterGelu<T, highPrecision, highPerformance>(dst, src, dataSize, loc);
}
template <typename T, bool highPrecision = false, bool highPerformance = false>
inline void FasterGeluV2(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dataSize, ASCX_LOC) {
    detail::gelu_like("FasterGeluV2", dst, src, dataSize, 0, 8, loc, [](double x) {
        const double sgn = (x + 1e-12) / std::fabs(x + 1e-12);
        const double a = std::fmin(std::fabs(0.7071 * x), 1.769) - 1.769;
        return x * (sgn * (-0.1444 * a * a + 0.5) + 0.5);
    });
}
template <typename T, bool highPrecision = false, bool highPerformance = false>
inline void FasterGeluV2(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                         const uint32_t dataSize, ASCX_LOC) {
    (void)sharedTmpBuffer;
    FasterGeluV2<T, highPrecision, highPerformance>(dst, src, dataSize, loc);
}

// ---------------------------------------------------------------- Broadcast
// Broadcast<T, dim, axis>(dst, src, dstShape, srcShape[, sharedTmpBuffer]): numpy broadcasting
// of an ND tensor along one axis, dim 1 ([1] -> [n]) or 2 (axis 1: [m, 1] -> [m, k]; axis 0:
// [1, k] -> [m, k]), as its public page says. Priced as the vector steps that page names:
// for [m, 1] -> [m, k] a Brcb (8 elements a repeat, each to a 32 B block), a copy of the
// m x k' blocks (k' = k rounded up to 32 B), and a GatherMask to k when k is not aligned; the
// other forms as one copy pass over the destination. `BroadCast` is the 8.0 spelling.
namespace detail {
template <typename T> inline void broadcast_pass(ascx_emu::CoreState& c, const char* api, SrcLoc loc, double repeats,
                                                 std::initializer_list<ascx_emu::tm::Acc> acc) {
    ascx_emu::account(c, PIPE_V, api, loc, ascx_emu::tm::vec(ascx_emu::tm::VC_SIMPLE, repeats, false, 0), acc);
}
}  // namespace detail
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim], const uint32_t srcShape[dim],
                      ASCX_LOC) {
    static_assert(dim == 1 || dim == 2, "Broadcast: dim must be 1 or 2");
    static_assert(axis >= 0 && axis < dim, "Broadcast: axis must be 0 (dim 1 or 2) or 1 (dim 2)");
    const char* api = "Broadcast";
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    for (int32_t i = 0; i < dim; ++i) {
        const bool ok = i == axis ? srcShape[i] == 1 && dstShape[i] >= 1 : srcShape[i] == dstShape[i];
        if (!ok)
            ascx_emu::fail(api, loc, "srcShape[%d] = %u, dstShape[%d] = %u: the source must be 1 along axis %d and equal to the "
                           "destination elsewhere", i, srcShape[i], i, dstShape[i], axis);
    }
    const int64_t rows = dim == 2 ? dstShape[0] : 1, cols = dim == 2 ? dstShape[1] : dstShape[0];
    const int64_t n = rows * cols, sn = dim == 2 ? srcShape[0] * static_cast<int64_t>(srcShape[1]) : 1;
    const T* x = src.Ptr(api, 0, sn, loc);
    T* d = dst.Ptr(api, 0, n, loc);
    const int64_t per_block = 32 / static_cast<int64_t>(sizeof(T));
    if (dim == 2 && axis == 1) {
        const int64_t kpad = (cols + per_block - 1) / per_block * per_block;
        detail::broadcast_pass<T>(c, api, loc, static_cast<double>((rows + 7) / 8),
                                  {ascx_emu::tm::R(src, detail::nbytes<T>(sn)), ascx_emu::tm::W(dst, detail::nbytes<T>(n))});
        detail::broadcast_pass<T>(c, api, loc, static_cast<double>(detail::repeats_for<T>(rows * kpad)), {});
        if (kpad != cols) detail::broadcast_pass<T>(c, api, loc, static_cast<double>(detail::repeats_for<T>(rows * kpad)), {});
    } else {
        detail::broadcast_pass<T>(c, api, loc, static_cast<double>(detail::repeats_for<T>(n)),
                                  {ascx_emu::tm::R(src, detail::nbytes<T>(sn)), ascx_emu::tm::W(dst, detail::nbytes<T>(n))});
    }
    for (int64_t r = 0; r < (ascx_emu::skip_data() ? 0 : rows); ++r)
        for (int64_t k = 0; k < cols; ++k) d[r * cols + k] = dim == 1 ? x[0] : axis == 1 ? x[r] : x[k];
    detail::trace_vec<T>(c, api, n, detail::repeats_for<T>(n), loc);
}
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim], const uint32_t srcShape[dim],
                      LocalTensor<uint8_t>& sharedTmpBuffer, ASCX_LOC) {
    (void)sharedTmpBuffer;
    Broadcast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape, loc);
}
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim], const uint32_t srcShape[dim],
                      ASCX_LOC) {
    Broadcast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape, loc);
}
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim], const uint32_t srcShape[dim],
                      LocalTensor<uint8_t>& sharedTmpBuffer, ASCX_LOC) {
    (void)sharedTmpBuffer;
    Broadcast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape, loc);
}

// ---------------------------------------------------------------- LocalMemAllocator
// LocalMemAllocator<hard>: the static-tensor style without TPipe / TQue. Alloc hands out
// LocalTensors of tileSize elements one after another from the start of memory `hard` (each
// rounded up to 32 B and aligned as the memory needs), failing past its capacity; GetCurAddr is
// the next free byte. Its page says it must not be mixed with TPipe: the emulator does not check
// that. BIAS and FIXBUF (bias table, fixpipe buffer) are not emulated memories.
namespace detail {
constexpr TPosition hardware_position(Hardware h) {
    return h == Hardware::UB ? TPosition::VECCALC : h == Hardware::L1 ? TPosition::A1 : h == Hardware::L0A ? TPosition::A2
           : h == Hardware::L0B ? TPosition::B2 : h == Hardware::L0C ? TPosition::CO1 : h == Hardware::BIAS ? TPosition::C2
           : TPosition::MAX;
}
}  // namespace detail
template <Hardware hard = Hardware::UB> class LocalMemAllocator {
    static_assert(detail::hardware_position(hard) != TPosition::MAX,
                  "LocalMemAllocator: the emulator has UB, L1, L0A, L0B, L0C and BIAS (not GM or FIXBUF)");
    static constexpr int kScope = position_scope(detail::hardware_position(hard));

public:
    LocalMemAllocator() = default;
    uint32_t GetCurAddr() const { return cur_; }
    template <TPosition pos, class DataType, uint32_t tileSize> LocalTensor<DataType> Alloc(ASCX_LOC) { return Alloc<pos, DataType>(tileSize, loc); }
    template <class DataType, uint32_t tileSize> LocalTensor<DataType> Alloc(ASCX_LOC) {
        return Alloc<detail::hardware_position(hard), DataType>(tileSize, loc);
    }
    template <class DataType> LocalTensor<DataType> Alloc(uint32_t tileSize, ASCX_LOC) {
        return Alloc<detail::hardware_position(hard), DataType>(tileSize, loc);
    }
    template <TPosition pos, class DataType> LocalTensor<DataType> Alloc(uint32_t tileSize, ASCX_LOC) {
        const char* api = "LocalMemAllocator::Alloc";
        if (position_scope(pos) != kScope)
            ascx_emu::fail(api, loc, "position %s is not in this allocator's memory %s", position_name(pos), ascx_emu::scope_name(kScope));
        auto& c = ascx_emu::core(api, loc);
        ascx_emu::scope_mem(c, kScope, api, loc);  // the memory exists on this core kind
        const uint32_t al = ascx_emu::scope_align(kScope);
        const uint32_t start = (cur_ + al - 1) / al * al;
        const uint64_t bytes = (static_cast<uint64_t>(tileSize) * sizeof(DataType) + 31u) / 32u * 32u;
        if (start + bytes > ascx_emu::scope_capacity(kScope))
            ascx_emu::fail(api, loc, "%s over-allocation: %u elements of %s at offset %u need %llu bytes, capacity is %u bytes",
                           ascx_emu::scope_name(kScope), tileSize, ascx_emu::type_name<DataType>(), start,
                           static_cast<unsigned long long>(start + bytes), ascx_emu::scope_capacity(kScope));
        cur_ = static_cast<uint32_t>(start + bytes);
        LocalTensor<DataType> t(&c, nullptr, pos, start, static_cast<uint32_t>(bytes));
        t.SetSize(tileSize);
        return t;
    }

private:
    uint32_t cur_ = 0;
};

// ---------------------------------------------------------------- LocalTensor(pos, addr, tileSize)
// The static-tensor constructor: a tensor of tileSize elements at byte addr of pos's memory,
// outside any TPipe buffer. A misaligned address or one running past the memory is an error.
template <typename T>
LocalTensor<T>::LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, ::ascx_emu::SrcLoc loc) {
    const char* api = "LocalTensor(pos, addr, tileSize)";
    const int scope = position_scope(pos);
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::scope_mem(c, scope, api, loc);  // the memory exists on this core kind
    const uint64_t bytes = static_cast<uint64_t>(tileSize) * sizeof(T);
    if (addr % 32u != 0)
        ascx_emu::fail(api, loc, "address %u in %s is not 32-byte aligned", addr, ascx_emu::scope_name(scope));
    if (addr + bytes > ascx_emu::scope_capacity(scope))
        ascx_emu::fail(api, loc, "%u elements of %s at byte %u end at byte %llu, past %s's %u bytes", tileSize,
                       ascx_emu::type_name<T>(), addr, static_cast<unsigned long long>(addr + bytes),
                       ascx_emu::scope_name(scope), ascx_emu::scope_capacity(scope));
    *this = LocalTensor<T>(&c, nullptr, pos, addr, static_cast<uint32_t>(bytes));
}

// ---------------------------------------------------------------- LocalTensor operators
// `dst = a + b` (also -, *, /, &, |): the whole-tensor form of Add / Sub / Mul / Div / And / Or
// on the public pages. `a + b` makes an expression; assigning it to a LocalTensor runs the
// instruction over the destination's whole size (GetSize()), priced and checked as that call.
namespace detail {
enum class TensorOp { Add, Sub, Mul, Div, And, Or };
// OP is a template argument so that only the instruction written is instantiated (Div takes no
// integers, And / Or no floats: each keeps its own type checks).
template <typename T, TensorOp OP> struct TensorExpr {
    using ascx_tensor_expr = void;
    LocalTensor<T> a, b;
    void assign_to(const LocalTensor<T>& dst) const {
        const SrcLoc loc{"LocalTensor operator (dst = a op b)", 0};
        const int32_t n = static_cast<int32_t>(dst.GetSize());
        if constexpr (OP == TensorOp::Add) Add(dst, a, b, n, loc);
        else if constexpr (OP == TensorOp::Sub) Sub(dst, a, b, n, loc);
        else if constexpr (OP == TensorOp::Mul) Mul(dst, a, b, n, loc);
        else if constexpr (OP == TensorOp::Div) Div(dst, a, b, n, loc);
        else if constexpr (OP == TensorOp::And) And(dst, a, b, n, loc);
        else Or(dst, a, b, n, loc);
    }
};
}  // namespace detail
#define ASCX_EMU_TENSOR_OPERATOR(SYM, OP)                                                                                     \
    template <typename T> detail::TensorExpr<T, detail::TensorOp::OP> operator SYM(const LocalTensor<T>& a, const LocalTensor<T>& b) { \
        return {a, b};                                                                                                     \
    }
ASCX_EMU_TENSOR_OPERATOR(+, Add)
ASCX_EMU_TENSOR_OPERATOR(-, Sub)
ASCX_EMU_TENSOR_OPERATOR(*, Mul)
ASCX_EMU_TENSOR_OPERATOR(/, Div)
ASCX_EMU_TENSOR_OPERATOR(&, And)
ASCX_EMU_TENSOR_OPERATOR(|, Or)
#undef ASCX_EMU_TENSOR_OPERATOR

}  // namespace AscendC

// Kernel `assert(cond[, fmt, args...])`: the Ascend C debug assert takes a message; the C one
// does not. A failed one stops the run like an emulator check (exit 3, message and location).
#undef assert
#define assert(...) ASCX_EMU_KASSERT_(__VA_ARGS__, "")
#define ASCX_EMU_KASSERT_(cond, ...) \
    do { if (!(cond)) ::ascx_emu::assert_failed("assert", #cond, __FILE__, __LINE__, __VA_ARGS__); } while (0)
