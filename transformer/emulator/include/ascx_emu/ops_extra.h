// ascx emulator: further basic-API instructions that public sample kernels use: Fill on GM,
// Std::max/min, mask/repeat reductions, GatherMask, Gather, Sort32, MrgSort, vector Copy,
// Transpose, BlockReduce*, PairReduceSum, CompareScalar and repeat-form Compare, Select modes,
// Axpy, shifts and bitwise ops. Clean-room implementation written for the ascx project from the
// public Ascend C API documentation (Apache-2.0). Semantics chosen are in docs/emulator.md.
#pragma once
#include "ops.h"

namespace AscendC {

// ================================================================ InitConstValue
// Sets a cube-side local tensor (A1/B1 in L1, A2/B2 in L0A/L0B) to a constant: repeatTimes
// iterations of blockNum blocks (32 B in L1, 512 B in L0A/L0B), dstGap blocks skipped between
// iterations (the A2 form with every parameter; blockNum = 0 with repeatTimes > 0 is the older
// form of one 512 B block per iteration). Public docs: "InitConstValue" (Ascend C basic API).
// The docs do not name the pipe: we assume the L1 form is executed by MTE2 (the unit that
// writes L1 from GM) and the L0 form by MTE1 (the unit that writes L0A/L0B), each priced as
// a copy of the bytes written.
template <typename T> struct InitConstValueParams {
    InitConstValueParams() = default;
    InitConstValueParams(uint16_t repeatTimesIn, uint16_t blockNumIn, uint16_t dstGapIn, T initValueIn)
        : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
    InitConstValueParams(uint16_t repeatTimesIn, T initValueIn) : repeatTimes(repeatTimesIn), initValue(initValueIn) {}
    uint16_t repeatTimes = 0;
    uint16_t blockNum = 0;
    uint16_t dstGap = 0;
    T initValue = 0;
};
template <typename T>
inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<ascx_emu::nondeduced_t<T>>& p, ASCX_LOC) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "InitConstValue: supported element types are 16- and 32-bit (half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t)");
    const char* api = "InitConstValue";
    auto& c = ascx_emu::core(api, loc);
    dst.Valid(api, loc);
    const int sc = dst.scope();
    if (sc != ascx_emu::SC_L1 && sc != ascx_emu::SC_L0A && sc != ascx_emu::SC_L0B)
        ascx_emu::fail(api, loc, "destination must be in A1/B1 (L1) or A2/B2 (L0A/L0B), got %s", ascx_emu::scope_name(sc));
    ascx_emu::check_local_align(api, sc, dst.addr(), loc);
    if (p.repeatTimes > 32767 || p.blockNum > 32767 || p.dstGap > 32767)
        ascx_emu::fail(api, loc, "repeatTimes %u / blockNum %u / dstGap %u out of range [0, 32767]", p.repeatTimes, p.blockNum, p.dstGap);
    const bool l1 = sc == ascx_emu::SC_L1;
    const int64_t blk = l1 ? 32 : 512;
    // the older form (blockNum 0): one 512 B block per iteration, iterations back to back
    const int64_t per = p.blockNum ? p.blockNum * blk : 512, gap = p.blockNum ? p.dstGap * blk : 0;
    const int64_t n = per / static_cast<int64_t>(sizeof(T));
    if (p.repeatTimes == 0) return;
    const int64_t span = (p.repeatTimes - 1) * (per + gap) + per;
    dst.BytePtr(api, 0, span, loc);  // bounds of the whole footprint, checked before writing
    for (int64_t r = 0; r < (ascx_emu::skip_data() ? 0 : p.repeatTimes); ++r) {
        T* d = reinterpret_cast<T*>(dst.BytePtr(api, r * (per + gap), per, loc));
        for (int64_t i = 0; i < n; ++i) d[i] = p.initValue;
    }
    const double bytes = static_cast<double>(p.repeatTimes * per);
    const int pipe = l1 ? PIPE_MTE2 : PIPE_MTE1;
    ascx_emu::account(c, pipe, api, loc, l1 ? ascx_emu::tm::copy_in(bytes, p.repeatTimes, true, 0) : ascx_emu::tm::load_l0(bytes, sc == ascx_emu::SC_L0B),
                      {ascx_emu::tm::W(dst, span)});
    if (c.tracing)
        ascx_emu::trace_emit(c, pipe, api, ascx_emu::ks("dst", ascx_emu::scope_name(sc)) + ascx_emu::ks("dtype", ascx_emu::type_name<T>()) +
                                               ascx_emu::kv("bytes", static_cast<long long>(bytes)) + ascx_emu::kv("repeats", p.repeatTimes), loc);
}

// ================================================================ Std::max / Std::min
namespace Std {
template <typename T> constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }
template <typename T> constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }
}  // namespace Std

// ================================================================ Fill / InitGlobalMemory
// Sets `size` elements of GM to `value`. Documented to be usable only before the kernel's
// first TPipe::InitBuffer (it stages the value through UB on the device).
template <typename T> inline void Fill(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const ascx_emu::nondeduced_t<T> value, ASCX_LOC) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Fill: supported element types are 16- and 32-bit (half, int16_t, uint16_t, float, int32_t, uint32_t)");
    const char* api = "Fill";
    auto& c = ascx_emu::core(api, loc);
    if (!c.bufs.empty())
        ascx_emu::fail(api, loc, "called after TPipe::InitBuffer; the documentation allows Fill only before the first InitBuffer");
    gmWorkspaceAddr.Check(api, 0, size, loc);
    T* d = gmWorkspaceAddr.address_();
    const uint64_t bytes = size * sizeof(T);
    ascx_emu::gm_blocks(c, gmWorkspaceAddr, bytes, 1, bytes);
    ascx_emu::account(c, PIPE_MTE3, api, loc,
                      ascx_emu::tm::copy_out(static_cast<double>(bytes), 1, ascx_emu::tm::unaligned_bytes(ascx_emu::gm_offset(gmWorkspaceAddr), bytes, bytes, 1)));
    for (uint64_t i = 0; i < (ascx_emu::skip_data() ? 0 : size); ++i) d[i] = value;
    ascx_emu::trace_emit(c, PIPE_MTE3, api, ascx_emu::copy_extra("UB", "GM", ascx_emu::type_name<T>(), static_cast<long long>(size * sizeof(T)),
                                                                 static_cast<long long>(size)), loc);
}
template <typename T>
inline void InitGlobalMemory(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const ascx_emu::nondeduced_t<T> value, ASCX_LOC) {
    Fill(gmWorkspaceAddr, size, value, loc);
}

namespace detail {
// Continuous-mask geometry that accepts an int32 mask (reductions take `const int32_t mask`).
template <typename T> inline RepGeom geom_cont_i(const char* api, int32_t mask, int32_t repeat, SrcLoc loc) {
    if (mask <= 0) ascx_emu::fail(api, loc, "continuous mask %d out of range [1, %d]", mask, 256 / static_cast<int>(sizeof(T)) > 128 ? 128 : 256 / static_cast<int>(sizeof(T)));
    return geom_cont<T>(api, static_cast<uint64_t>(mask), repeat, loc);
}
// Active elements of repeat r, in order: (source element offset, position within the repeat).
template <typename F> inline void each_active_in(const RepGeom& g, int32_t r, int64_t blk, int64_t rep, int64_t esz, F&& f) {
    RepGeom one = g;
    one.repeat = 1;
    int64_t per = 32 / g.esize;
    for_active(one, [&](int64_t, int64_t bk, int64_t e) { f(rep_off(r, bk, e, blk, rep, esz), bk * per + e); });
}
}  // namespace detail

// ================================================================ ReduceMax / ReduceMin / ReduceSum (mask/repeat)
// The result of all active elements of all repeats (block stride 1, repeat stride
// srcRepStride blocks): dst[0] = value; with calIndex dst[1] = index of the first extremum,
// counted as r * (256 / sizeof(T)) + position within the repeat, stored as a sizeof(T) integer.
namespace detail {
template <typename T>
inline void reduce_rep(const char* api, int kind, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
                       const RepGeom& g, int32_t srcRepStride, bool calIndex, SrcLoc loc) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "ReduceMax/ReduceMin/ReduceSum: T must be half or float");
    auto& c = ascx_emu::core(api, loc);
    if (srcRepStride < 0) ascx_emu::fail(api, loc, "srcRepStride %d is negative", srcRepStride);
    const T* a = operand(api, src, g, 1, srcRepStride, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    work.Valid(api, loc);
    const int64_t per_rep = 256 / static_cast<int64_t>(sizeof(T));
    double best = 0;
    float acc = 0.0f;
    uint32_t bi = 0;
    long long n = 0;
    if (g.repeat == 0) ascx_emu::fail(api, loc, "no active element (repeatTimes 0)");
    vec_acct(c, api, loc, g.repeat, false, 0,
             {ascx_emu::tm::R(src, extent<T>(g, 1, srcRepStride)), ascx_emu::tm::W(dst, nbytes<T>(calIndex ? 2 : 1))});
    for (int32_t r = 0; r < g.repeat; ++r)
        each_active_in(g, r, 1, srcRepStride, sizeof(T), [&](int64_t off, int64_t pos) {
            double v = ascx_emu::to_d(a[off]);
            uint32_t idx = static_cast<uint32_t>(r * per_rep + pos);
            if (kind == 2) acc += static_cast<float>(v);
            else if (n == 0 || wins(kind == 0, v, best)) { best = v; bi = idx; }
            ++n;
        });
    T* d = dst.Ptr(api, 0, calIndex ? 2 : 1, loc);
    d[0] = ascx_emu::convert<T>(kind == 2 ? static_cast<double>(acc) : best);
    if (calIndex) store_index(&d[1], bi);
    trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}
}  // namespace detail
// Both mask forms of one reduction; EXTRA_PARAM / EXTRA_ARG carry calIndex where it exists.
#define ASCX_EMU_REDUCE_REP(NAME, KIND, EXTRA_PARAM, EXTRA_ARG)                                                          \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,      \
                     const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride EXTRA_PARAM, ASCX_LOC) { \
        detail::reduce_rep(#NAME, KIND, dst, src, sharedTmpBuffer, detail::geom_cont_i<T>(#NAME, mask, repeatTime, loc), \
                           srcRepStride, EXTRA_ARG, loc);                                                               \
    }                                                                                                                  \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,      \
                     const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride EXTRA_PARAM, ASCX_LOC) { \
        detail::reduce_rep(#NAME, KIND, dst, src, sharedTmpBuffer, detail::geom_bits<T>(#NAME, mask, repeatTime, loc),   \
                           srcRepStride, EXTRA_ARG, loc);                                                               \
    }
#define ASCX_EMU_CALINDEX_PARAM , bool calIndex = false
ASCX_EMU_REDUCE_REP(ReduceMax, 0, ASCX_EMU_CALINDEX_PARAM, calIndex)
ASCX_EMU_REDUCE_REP(ReduceMin, 1, ASCX_EMU_CALINDEX_PARAM, calIndex)
ASCX_EMU_REDUCE_REP(ReduceSum, 2, , false)
#undef ASCX_EMU_CALINDEX_PARAM
#undef ASCX_EMU_REDUCE_REP

// ================================================================ BlockReduce* / PairReduceSum
// BlockReduce: each 32 B block of a repeat reduces its active elements to one value; repeat r
// writes its 8 results at dst[r * dstRepStride * 8 + b] (dstRepStride counts reduced repeats).
// A block without active elements writes nothing. PairReduceSum: each pair (2k, 2k+1) of a
// repeat sums its active elements into dst[r * dstRepStride * (per_repeat / 2) + k].
namespace detail {
template <typename T, typename Fin>
inline void grouped_reduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const RepGeom& g, int32_t dstRepStride,
                           int32_t srcBlkStride, int32_t srcRepStride, int64_t group, Fin&& fin, SrcLoc loc) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "BlockReduce*/PairReduceSum: T must be half or float");
    auto& c = ascx_emu::core(api, loc);
    const T* a = operand(api, src, g, srcBlkStride, srcRepStride, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    const int64_t per_rep = 256 / static_cast<int64_t>(sizeof(T)), ngroups = per_rep / group;
    long long n = 0;
    const int64_t dst_elems = g.repeat > 0 ? (static_cast<int64_t>(g.repeat) - 1) * dstRepStride * ngroups + ngroups : 0;
    vec_acct(c, api, loc, g.repeat, false, 0,
             {ascx_emu::tm::R(src, extent<T>(g, srcBlkStride, srcRepStride)), ascx_emu::tm::W(dst, nbytes<T>(dst_elems))});
    for (int32_t r = 0; r < g.repeat; ++r) {
        std::vector<std::vector<double>> vals(static_cast<size_t>(ngroups));
        each_active_in(g, r, srcBlkStride, srcRepStride, sizeof(T), [&](int64_t off, int64_t pos) {
            vals[static_cast<size_t>(pos / group)].push_back(ascx_emu::to_d(a[off]));
            ++n;
        });
        for (int64_t k = 0; k < ngroups; ++k)
            if (!vals[static_cast<size_t>(k)].empty())
                *dst.Ptr(api, static_cast<int64_t>(r) * dstRepStride * ngroups + k, 1, loc) = ascx_emu::convert<T>(fin(vals[static_cast<size_t>(k)]));
    }
    trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}
inline double fin_sum(const std::vector<double>& v) { float acc = 0.0f; for (double x : v) acc += static_cast<float>(x); return acc; }
inline double fin_max(const std::vector<double>& v) { double b = v[0]; for (double x : v) b = vmax(b, x); return b; }
inline double fin_min(const std::vector<double>& v) { double b = v[0]; for (double x : v) b = vmin(b, x); return b; }
}  // namespace detail
#define ASCX_EMU_GROUPED(NAME, GROUP, FIN)                                                                                     \
    template <typename T, bool isSetMask = true>                                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask,     \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, ASCX_LOC) {         \
        auto g = isSetMask ? detail::geom_cont_i<T>(#NAME, mask, repeatTime, loc) : detail::geom_core<T>(#NAME, repeatTime, loc); \
        detail::grouped_reduce(#NAME, dst, src, g, dstRepStride, srcBlkStride, srcRepStride, GROUP, FIN, loc);              \
    }                                                                                                                        \
    template <typename T, bool isSetMask = true>                                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const uint64_t mask[],  \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, ASCX_LOC) {         \
        auto g = isSetMask ? detail::geom_bits<T>(#NAME, mask, repeatTime, loc) : detail::geom_core<T>(#NAME, repeatTime, loc); \
        detail::grouped_reduce(#NAME, dst, src, g, dstRepStride, srcBlkStride, srcRepStride, GROUP, FIN, loc);              \
    }
ASCX_EMU_GROUPED(BlockReduceSum, 32 / static_cast<int64_t>(sizeof(T)), detail::fin_sum)
ASCX_EMU_GROUPED(BlockReduceMax, 32 / static_cast<int64_t>(sizeof(T)), detail::fin_max)
ASCX_EMU_GROUPED(BlockReduceMin, 32 / static_cast<int64_t>(sizeof(T)), detail::fin_min)
ASCX_EMU_GROUPED(PairReduceSum, 2, detail::fin_sum)
#undef ASCX_EMU_GROUPED

// ================================================================ GatherMask
struct GatherMaskParams {
    GatherMaskParams() = default;
    GatherMaskParams(uint8_t s0Blk, uint16_t rep, uint16_t s0Rep, uint8_t s1Rep)
        : src0BlockStride(s0Blk), repeatTimes(rep), src0RepeatStride(s0Rep), src1RepeatStride(s1Rep) {}
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = 0;
    uint8_t src1RepeatStride = 0;
};
enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;
constexpr GatherMaskMode defaultGahterMaskMode = defaultGatherMaskMode;  // the older docs' spelling

namespace detail {
// bit(i) gives the pattern bit of element i of a repeat, `prb` the pattern bytes of repeat r.
template <typename T, typename Bit>
inline void gather_mask(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src0, bool reduceMode, uint32_t mask,
                        const GatherMaskParams& p, uint64_t& rsvdCnt, Bit&& bit, SrcLoc loc) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "GatherMask: T must be a 16- or 32-bit type");
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src0, loc);
    const int64_t es = sizeof(T), per_blk = 32 / es, per_rep = 256 / es;
    // Normal mode: repeatTimes repeats of 256 B. Counter mode (our reading of the A2 form):
    // `mask` elements in total, consumed in repeats of 256 B; repeatTimes is ignored.
    int64_t total;
    if (!reduceMode) {
        if (p.repeatTimes > 255) ascx_emu::fail(api, loc, "repeatTimes %u out of range [0, 255]", p.repeatTimes);
        total = p.repeatTimes * per_rep;
    } else {
        if (mask == 0) ascx_emu::fail(api, loc, "counter mode (reduceMode = true) needs mask >= 1 (the number of elements)");
        total = mask;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < total; ++i) {
        int64_t r = i / per_rep, j = i % per_rep;
        if (!bit(r, j)) continue;
        int64_t off = (r * p.src0RepeatStride * 32 + (j / per_blk) * p.src0BlockStride * 32) / es + j % per_blk;
        *dst.Ptr(api, k++, 1, loc) = *src0.Ptr(api, off, 1, loc);
    }
    rsvdCnt = static_cast<uint64_t>(k);
    const int64_t nrep = (total + per_rep - 1) / per_rep;
    const int64_t src_bytes = nrep > 0 ? (nrep - 1) * p.src0RepeatStride * 32 + 7 * p.src0BlockStride * 32 + 32 : 0;
    vec_acct(c, api, loc, static_cast<double>(nrep), false, 0, {ascx_emu::tm::R(src0, src_bytes), ascx_emu::tm::W(dst, k * es)});
    trace_vec<T>(c, api, total, nrep, loc, "repeat");
}
}  // namespace detail

// Built-in patterns 1..7 (bit i = element i of a repeat): 1 even elements, 2 odd elements,
// 3/4/5/6 the 1st/2nd/3rd/4th of every 4, 7 all.
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern, const bool reduceMode, const uint32_t mask,
                       const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt, ASCX_LOC) {
    if (src1Pattern < 1 || src1Pattern > 7) ascx_emu::fail("GatherMask", loc, "built-in src1Pattern %u out of range [1, 7]", src1Pattern);
    auto bit = [&](int64_t, int64_t j) -> bool {
        switch (src1Pattern) {
            case 1: return j % 2 == 0;
            case 2: return j % 2 == 1;
            case 7: return true;
            default: return j % 4 == src1Pattern - 3;
        }
    };
    detail::gather_mask("GatherMask", dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, bit, loc);
}
// User-defined pattern: the bits of src1Pattern (LSB first, uint16_t for 16-bit T, uint32_t
// for 32-bit T) are consumed continuously within a repeat; repeat r starts at byte
// r * src1RepeatStride * 32 of the pattern.
template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern, const bool reduceMode,
                       const uint32_t mask, const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt, ASCX_LOC) {
    static_assert(sizeof(U) == sizeof(T) && std::is_unsigned<U>::value,
                  "GatherMask: src1Pattern must be uint16_t for 16-bit T and uint32_t for 32-bit T");
    const char* api = "GatherMask";
    ascx_emu::local_check_vec(api, src1Pattern, loc);
    auto bit = [&](int64_t r, int64_t j) -> bool {
        int64_t byte = r * gatherMaskParams.src1RepeatStride * 32 + j / 8;
        return (*src1Pattern.BytePtr(api, byte, 1, loc) >> (j % 8)) & 1u;
    };
    detail::gather_mask(api, dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, bit, loc);
}

// ================================================================ Gather
// dst[i] = the element at byte srcBaseAddr + srcOffset[i] of src (offsets in bytes, element aligned).
namespace detail {
template <typename T>
inline void gather_one(const char* api, const LocalTensor<T>& dst, int64_t di, const LocalTensor<T>& src, const LocalTensor<uint32_t>& off,
                       int64_t i, uint32_t base, SrcLoc loc) {
    uint64_t b = static_cast<uint64_t>(base) + *off.Ptr(api, i, 1, loc);
    if (b % sizeof(T) != 0)
        ascx_emu::fail(api, loc, "srcOffset[%lld] + srcBaseAddr = %llu bytes is not a multiple of sizeof(%s)", (long long)i,
                       (unsigned long long)b, ascx_emu::type_name<T>());
    std::memcpy(static_cast<void*>(dst.Ptr(api, di, 1, loc)), src.BytePtr(api, static_cast<int64_t>(b), sizeof(T), loc), sizeof(T));
}
}  // namespace detail
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                   const uint32_t count, ASCX_LOC) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Gather: T must be a 16- or 32-bit type");
    const char* api = "Gather";
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    ascx_emu::local_check_vec(api, srcOffset, loc);
    // offsets are data: a timing-only run (no data) skips the gather itself
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : count); ++i) detail::gather_one(api, dst, i, src, srcOffset, i, srcBaseAddr, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(src, static_cast<int64_t>(src.GetSize() * sizeof(T))), ascx_emu::tm::R(srcOffset, 4 * static_cast<int64_t>(count)),
                      ascx_emu::tm::W(dst, detail::nbytes<T>(count))});
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
// Repeat form: repeat r gathers the active elements j of the repeat: dst[r * dstRepStride * 32 B + j]
// from srcOffset[r * per_repeat + j].
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                   const uint64_t mask, const uint8_t repeatTime, const uint16_t dstRepStride, ASCX_LOC) {
    const char* api = "Gather";
    auto& c = ascx_emu::core(api, loc);
    auto g = detail::geom_cont<T>(api, mask, repeatTime, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    const int64_t per_rep = 256 / static_cast<int64_t>(sizeof(T));
    long long n = 0;
    for (int32_t r = 0; r < g.repeat; ++r)
        detail::each_active_in(g, r, 1, 8, sizeof(T), [&](int64_t, int64_t pos) {
            detail::gather_one(api, dst, r * dstRepStride * (32 / static_cast<int64_t>(sizeof(T))) + pos, src, srcOffset, r * per_rep + pos,
                               srcBaseAddr, loc);
            ++n;
        });
    detail::vec_acct(c, api, loc, g.repeat, false, 0,
                     {ascx_emu::tm::R(src, static_cast<int64_t>(src.GetSize() * sizeof(T))), ascx_emu::tm::R(srcOffset, g.repeat * per_rep * 4),
                      ascx_emu::tm::W(dst, detail::extent<T>(g, 1, dstRepStride))});
    detail::trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}

// ================================================================ Sort32 / MrgSort
// A sorted element is 8 bytes: the score in the low bytes (float: 4, half: 2 then 2 reserved
// bytes), the uint32 index in the high 4 bytes.
namespace detail {
struct ScoreIdx {
    double score;
    uint32_t idx;
    uint8_t raw[4];  // score bits as stored
};
template <typename T> inline ScoreIdx read_pair(const uint8_t* p) {
    ScoreIdx s{};
    T v;
    std::memcpy(static_cast<void*>(&v), p, sizeof(T));
    s.score = ascx_emu::to_d(v);
    std::memcpy(s.raw, p, 4);
    std::memcpy(&s.idx, p + 4, 4);
    return s;
}
template <typename T> inline void write_pair(uint8_t* p, const ScoreIdx& s) {
    std::memcpy(p, s.raw, 4);
    if (sizeof(T) == 2) std::memset(p + 2, 0, 2);
    std::memcpy(p + 4, &s.idx, 4);
}
}  // namespace detail

// Each repeat sorts 32 (score, index) pairs by score, largest first; equal scores keep their
// input order. Repeats are independent: src advances 32 elements, dst 32 * 8 bytes.
template <typename T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1, const int32_t repeatTime, ASCX_LOC) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "Sort32: T must be half or float");
    const char* api = "Sort32";
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::check_repeat(api, repeatTime, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src0, loc);
    ascx_emu::local_check_vec(api, src1, loc);
    detail::vec_acct(c, api, loc, repeatTime, false, 0,
                     {ascx_emu::tm::R(src0, detail::nbytes<T>(static_cast<int64_t>(repeatTime) * 32)), ascx_emu::tm::R(src1, static_cast<int64_t>(repeatTime) * 128),
                      ascx_emu::tm::W(dst, static_cast<int64_t>(repeatTime) * 256)});
    for (int32_t r = 0; r < repeatTime; ++r) {
        std::vector<detail::ScoreIdx> v(32);
        const T* s = src0.Ptr(api, static_cast<int64_t>(r) * 32, 32, loc);
        const uint32_t* ix = src1.Ptr(api, static_cast<int64_t>(r) * 32, 32, loc);
        for (int i = 0; i < 32; ++i) {
            v[i].score = ascx_emu::to_d(s[i]);
            v[i].idx = ix[i];
            std::memset(v[i].raw, 0, 4);
            std::memcpy(v[i].raw, static_cast<const void*>(&s[i]), sizeof(T));
        }
        std::stable_sort(v.begin(), v.end(), [](const detail::ScoreIdx& a, const detail::ScoreIdx& b) { return a.score > b.score; });
        uint8_t* d = dst.BytePtr(api, static_cast<int64_t>(r) * 256, 256, loc);
        for (int i = 0; i < 32; ++i) detail::write_pair<T>(d + 8 * i, v[i]);
    }
    detail::trace_vec<T>(c, api, static_cast<long long>(repeatTime) * 32, repeatTime, loc, "repeat");
}

template <typename T> struct MrgSortSrcList {
    MrgSortSrcList() = default;
    MrgSortSrcList(const LocalTensor<T>& a, const LocalTensor<T>& b, const LocalTensor<T>& c, const LocalTensor<T>& d) : src1(a), src2(b), src3(c), src4(d) {}
    LocalTensor<T> src1, src2, src3, src4;
};
struct MrgSort4Info {
    MrgSort4Info() = default;
    MrgSort4Info(const uint16_t lens[4], bool exhausted, uint16_t valid, uint16_t rep)
        : ifExhaustedSuspension(exhausted), validBit(valid), repeatTimes(rep) {
        for (int i = 0; i < 4; ++i) elementLengths[i] = lens[i];
    }
    uint16_t elementLengths[4] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint16_t repeatTimes = 1;
};

// Merges the valid (validBit: 0b0011 = lists 1-2, 0b0111 = 1-3, 0b1111 = 1-4) sorted lists of
// (score, index) pairs into dst, largest score first; on equal scores the lower-numbered list
// goes first. With ifExhaustedSuspension the merge stops when the first list runs out.
// Returns the number of pairs taken from each list in `taken`.
namespace detail {
template <typename T>
inline void mrg_sort(const char* api, const LocalTensor<T>& dst, const MrgSortSrcList<T>& l, const uint16_t lens[4], bool exhausted,
                     uint16_t validBit, uint16_t taken[4], SrcLoc loc) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "MrgSort: T must be half or float");
    auto& c = ascx_emu::core(api, loc);
    int nl = validBit == 0x3 ? 2 : validBit == 0x7 ? 3 : validBit == 0xF ? 4 : 0;
    if (nl == 0) ascx_emu::fail(api, loc, "validBit 0x%x must be 0b0011, 0b0111 or 0b1111 (2, 3 or 4 lists)", validBit);
    const LocalTensor<T>* src[4] = {&l.src1, &l.src2, &l.src3, &l.src4};
    std::vector<std::vector<ScoreIdx>> lists(static_cast<size_t>(nl));
    for (int i = 0; i < nl; ++i) {
        ascx_emu::local_check_vec(api, *src[i], loc);
        const uint8_t* p = src[i]->BytePtr(api, 0, static_cast<int64_t>(lens[i]) * 8, loc);
        for (uint16_t k = 0; k < lens[i]; ++k) lists[static_cast<size_t>(i)].push_back(read_pair<T>(p + 8 * k));
    }
    ascx_emu::local_check_vec(api, dst, loc);
    size_t pos[4] = {0, 0, 0, 0};
    int64_t out = 0;
    for (;;) {
        int best = -1;
        bool any_empty = false;
        for (int i = 0; i < nl; ++i) {
            if (pos[i] >= lists[static_cast<size_t>(i)].size()) { any_empty = true; continue; }
            if (best < 0 || lists[static_cast<size_t>(i)][pos[i]].score > lists[static_cast<size_t>(best)][pos[best]].score) best = i;
        }
        if (best < 0 || (exhausted && any_empty)) break;
        write_pair<T>(dst.BytePtr(api, out * 8, 8, loc), lists[static_cast<size_t>(best)][pos[best]]);
        ++pos[best];
        ++out;
    }
    for (int i = 0; i < 4; ++i) taken[i] = i < nl ? static_cast<uint16_t>(pos[i]) : 0;
    int64_t in_bytes = 0;
    for (int i = 0; i < nl; ++i) in_bytes += static_cast<int64_t>(lens[i]) * 8;
    vec_acct(c, api, loc, static_cast<double>((in_bytes + 255) / 256), false, 0,
             {ascx_emu::tm::R(*src[0], static_cast<int64_t>(lens[0]) * 8), ascx_emu::tm::R(*src[1], static_cast<int64_t>(lens[1]) * 8),
              ascx_emu::tm::W(dst, out * 8)});
    trace_vec<T>(c, api, out, (out * 8 + 255) / 256, loc, "repeat");
}
}  // namespace detail
template <typename T> inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& srcList, const MrgSort4Info& params, ASCX_LOC) {
    if (params.repeatTimes != 1) ascx_emu::fail("MrgSort", loc, "repeatTimes %u: the emulator merges one group of lists per call (repeatTimes 1)", params.repeatTimes);
    uint16_t taken[4];
    detail::mrg_sort("MrgSort", dst, srcList, params.elementLengths, params.ifExhaustedSuspension, params.validBit, taken, loc);
}
// Form with element counts and the per-list numbers merged returned in sortedNum.
template <typename T, bool isExhaustedSuspension = false>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& srcList, const uint16_t elementCountList[4], uint32_t sortedNum[4],
                    uint16_t validBit, const int32_t repeatTime, ASCX_LOC) {
    if (repeatTime != 1) ascx_emu::fail("MrgSort", loc, "repeatTime %d: the emulator merges one group of lists per call (repeatTime 1)", repeatTime);
    uint16_t taken[4];
    detail::mrg_sort("MrgSort", dst, srcList, elementCountList, isExhaustedSuspension, validBit, taken, loc);
    for (int i = 0; i < 4; ++i) sortedNum[i] = taken[i];
}

// ================================================================ vector Copy
struct CopyRepeatParams {
    CopyRepeatParams() = default;
    CopyRepeatParams(uint16_t dS, uint16_t sS, uint16_t dR, uint16_t sR) : dstStride(dS), srcStride(sS), dstRepeatSize(dR), srcRepeatSize(sR) {}
    uint16_t dstStride = 1;      // block stride within a repeat, 32 B blocks
    uint16_t srcStride = 1;
    uint16_t dstRepeatSize = 8;  // repeat stride, 32 B blocks
    uint16_t srcRepeatSize = 8;
};
namespace detail {
template <typename T>
inline void copy_rep(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const RepGeom& g, const CopyRepeatParams& p, SrcLoc loc) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Copy: T must be a 16- or 32-bit type");
    auto& c = ascx_emu::core(api, loc);
    T* d = operand(api, dst, g, p.dstStride, p.dstRepeatSize, loc);
    const T* s = operand(api, src, g, p.srcStride, p.srcRepeatSize, loc);
    long long n = 0;
    vec_acct(c, api, loc, g.repeat, false, 0,
             {ascx_emu::tm::R(src, extent<T>(g, p.srcStride, p.srcRepeatSize)), ascx_emu::tm::W(dst, extent<T>(g, p.dstStride, p.dstRepeatSize))});
    for_active(g, [&](int64_t r, int64_t bk, int64_t e) {
        d[rep_off(r, bk, e, p.dstStride, p.dstRepeatSize, sizeof(T))] = s[rep_off(r, bk, e, p.srcStride, p.srcRepeatSize, sizeof(T))];
        ++n;
    });
    trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}
}  // namespace detail
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTime, const CopyRepeatParams& p, ASCX_LOC) {
    auto g = isSetMask ? detail::geom_cont<T>("Copy", mask, repeatTime, loc) : detail::geom_core<T>("Copy", repeatTime, loc);
    detail::copy_rep("Copy", dst, src, g, p, loc);
}
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeatTime, const CopyRepeatParams& p, ASCX_LOC) {
    auto g = isSetMask ? detail::geom_bits<T>("Copy", mask, repeatTime, loc) : detail::geom_core<T>("Copy", repeatTime, loc);
    detail::copy_rep("Copy", dst, src, g, p, loc);
}

// ================================================================ Transpose (16 x 16, 16-bit)
template <typename T> inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, ASCX_LOC) {
    static_assert(sizeof(T) == 2, "Transpose(dst, src): the basic form transposes a 16 x 16 matrix of a 16-bit type (half, int16_t, uint16_t)");
    const char* api = "Transpose";
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    const T* s = src.Ptr(api, 0, 256, loc);
    T* d = dst.Ptr(api, 0, 256, loc);
    if (dst.addr() == src.addr() && dst.scope() == src.scope()) ascx_emu::fail(api, loc, "dst and src are the same buffer (in-place transpose is not supported)");
    detail::vec_acct(c, api, loc, 2, false, 0, {ascx_emu::tm::R(src, 512), ascx_emu::tm::W(dst, 512)});
    for (int i = 0; i < (ascx_emu::skip_data() ? 0 : 16); ++i)
        for (int j = 0; j < 16; ++j) d[j * 16 + i] = s[i * 16 + j];
    detail::trace_vec<T>(c, api, 256, 2, loc);
}

// ================================================================ Axpy: dst = src * scalar + dst
// T (dst) and U (src) are both half, both float, or float dst with half src (the mixed form).
template <typename T, typename U>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U scalarValue, const int32_t count, ASCX_LOC) {
    static_assert((std::is_same<T, U>::value && (std::is_same<T, half>::value || std::is_same<T, float>::value)) ||
                      (std::is_same<T, float>::value && std::is_same<U, half>::value),
                  "Axpy: supported (dst, src) types are (half, half), (float, float) and (float, half)");
    const char* api = "Axpy";
    auto& c = ascx_emu::core(api, loc);
    if (count < 0) ascx_emu::fail(api, loc, "negative count %d", count);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    T* d = dst.Ptr(api, 0, count, loc);
    const U* a = src.Ptr(api, 0, count, loc);
    const double s = ascx_emu::to_d(scalarValue);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(src, detail::nbytes<U>(count)), ascx_emu::tm::R(dst, detail::nbytes<T>(count)), ascx_emu::tm::W(dst, detail::nbytes<T>(count))});
    for (int32_t i = 0; i < (ascx_emu::skip_data() ? 0 : count); ++i) d[i] = ascx_emu::convert<T>(ascx_emu::to_d(a[i]) * s + ascx_emu::to_d(d[i]));
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}

// ================================================================ shifts and bitwise ops (integers)
namespace detail {
template <typename T, typename F> inline void int_unary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t count, F&& f, SrcLoc loc) {
    auto& c = ascx_emu::core(api, loc);
    if (count < 0) ascx_emu::fail(api, loc, "negative count %d", count);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    T* d = dst.Ptr(api, 0, count, loc);
    const T* a = src.Ptr(api, 0, count, loc);
    vec_acct(c, api, loc, static_cast<double>(repeats_for<T>(count)), true, static_cast<double>(nbytes<T>(count)),
             {ascx_emu::tm::R(src, nbytes<T>(count)), ascx_emu::tm::W(dst, nbytes<T>(count))});
    for (int32_t i = 0; i < (ascx_emu::skip_data() ? 0 : count); ++i) d[i] = f(a[i]);
    trace_vec<T>(c, api, count, repeats_for<T>(count), loc);
}
template <typename T, typename F>
inline void int_binary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& s0, const LocalTensor<T>& s1, int32_t count, F&& f, SrcLoc loc) {
    auto& c = ascx_emu::core(api, loc);
    if (count < 0) ascx_emu::fail(api, loc, "negative count %d", count);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, s0, loc);
    ascx_emu::local_check_vec(api, s1, loc);
    T* d = dst.Ptr(api, 0, count, loc);
    const T* a = s0.Ptr(api, 0, count, loc);
    const T* b = s1.Ptr(api, 0, count, loc);
    vec_acct(c, api, loc, static_cast<double>(repeats_for<T>(count)), true, static_cast<double>(nbytes<T>(count)),
             {ascx_emu::tm::R(s0, nbytes<T>(count)), ascx_emu::tm::R(s1, nbytes<T>(count)), ascx_emu::tm::W(dst, nbytes<T>(count))});
    for (int32_t i = 0; i < (ascx_emu::skip_data() ? 0 : count); ++i) d[i] = f(a[i], b[i]);
    trace_vec<T>(c, api, count, repeats_for<T>(count), loc);
}
template <typename T> inline void check_shift(const char* api, int64_t s, SrcLoc loc) {
    if (s < 0 || s >= static_cast<int64_t>(8 * sizeof(T)))
        ascx_emu::fail(api, loc, "shift amount %lld out of range [0, %d] for %s", (long long)s, static_cast<int>(8 * sizeof(T)) - 1, ascx_emu::type_name<T>());
}
}  // namespace detail
#define ASCX_EMU_INT_ONLY(API, T) \
    static_assert(std::is_integral<T>::value && (sizeof(T) == 2 || sizeof(T) == 4), API ": T must be int16_t, uint16_t, int32_t or uint32_t")
// Logical shift left; shift right is arithmetic for signed and logical for unsigned types.
template <typename T> inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const ascx_emu::nondeduced_t<T>& scalarValue, const int32_t count, ASCX_LOC) {
    ASCX_EMU_INT_ONLY("ShiftLeft", T);
    detail::check_shift<T>("ShiftLeft", static_cast<int64_t>(scalarValue), loc);
    using UT = typename std::make_unsigned<T>::type;
    detail::int_unary("ShiftLeft", dst, src, count, [&](T x) { return static_cast<T>(static_cast<UT>(static_cast<UT>(x) << scalarValue)); }, loc);
}
template <typename T> inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const ascx_emu::nondeduced_t<T>& scalarValue, const int32_t count, ASCX_LOC) {
    ASCX_EMU_INT_ONLY("ShiftRight", T);
    detail::check_shift<T>("ShiftRight", static_cast<int64_t>(scalarValue), loc);
    detail::int_unary("ShiftRight", dst, src, count, [&](T x) {
        if constexpr (std::is_signed<T>::value) return static_cast<T>(x < 0 ? ~(~x >> scalarValue) : x >> scalarValue);
        else return static_cast<T>(x >> scalarValue);
    }, loc);
}
template <typename T> inline void And(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t count, ASCX_LOC) {
    static_assert(std::is_integral<T>::value && sizeof(T) == 2, "And: T must be int16_t or uint16_t");
    detail::int_binary("And", dst, src0, src1, count, [](T a, T b) { return static_cast<T>(a & b); }, loc);
}
template <typename T> inline void Or(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t count, ASCX_LOC) {
    static_assert(std::is_integral<T>::value && sizeof(T) == 2, "Or: T must be int16_t or uint16_t");
    detail::int_binary("Or", dst, src0, src1, count, [](T a, T b) { return static_cast<T>(a | b); }, loc);
}
template <typename T> inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t count, ASCX_LOC) {
    static_assert(std::is_integral<T>::value && sizeof(T) == 2, "Not: T must be int16_t or uint16_t");
    detail::int_unary("Not", dst, src, count, [](T a) { return static_cast<T>(~a); }, loc);
}
#undef ASCX_EMU_INT_ONLY

// ================================================================ CompareScalar, repeat-form Compare, Select modes
namespace detail {
inline bool cmp(CMPMODE m, double x, double y) {
    switch (m) {
        case CMPMODE::LT: return x < y;
        case CMPMODE::GT: return x > y;
        case CMPMODE::EQ: return x == y;
        case CMPMODE::LE: return x <= y;
        case CMPMODE::GE: return x >= y;
        default: return x != y;
    }
}
inline void set_bit(uint8_t* d, int64_t i, bool v) {
    if (v) d[i / 8] = static_cast<uint8_t>(d[i / 8] | (1u << (i % 8)));
    else d[i / 8] = static_cast<uint8_t>(d[i / 8] & ~(1u << (i % 8)));
}
}  // namespace detail
// dst bit i (LSB first) = src0[i] <cmpMode> scalar; count * sizeof(T) must be a multiple of 256 B.
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const ascx_emu::nondeduced_t<T> src1Scalar, CMPMODE cmpMode,
                          uint32_t count, ASCX_LOC) {
    const char* api = "CompareScalar";
    auto& c = ascx_emu::core(api, loc);
    if ((count * sizeof(T)) % 256 != 0) ascx_emu::fail(api, loc, "count %u * sizeof(T) must be a multiple of 256 bytes", count);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src0, loc);
    const T* a = src0.Ptr(api, 0, count, loc);
    uint8_t* d = dst.BytePtr(api, 0, (count + 7) / 8, loc);
    const double y = ascx_emu::to_d(src1Scalar);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(src0, detail::nbytes<T>(count)), ascx_emu::tm::W(dst, static_cast<int64_t>((count + 7) / 8))});
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : count); ++i) detail::set_bit(d, i, detail::cmp(cmpMode, ascx_emu::to_d(a[i]), y));
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
// Repeat form: repeat r writes the bits of its (256 / sizeof(T)) elements at bit r * (256 / sizeof(T));
// bits of inactive elements are cleared.
template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask,
                    uint8_t repeatTime, const BinaryRepeatParams& p, ASCX_LOC) {
    const char* api = "Compare";
    auto& c = ascx_emu::core(api, loc);
    auto g = isSetMask ? detail::geom_cont<T>(api, mask, repeatTime, loc) : detail::geom_core<T>(api, repeatTime, loc);
    const T* a = detail::operand(api, src0, g, p.src0BlkStride, p.src0RepStride, loc);
    const T* b = detail::operand(api, src1, g, p.src1BlkStride, p.src1RepStride, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    const int64_t per_rep = 256 / static_cast<int64_t>(sizeof(T)), es = sizeof(T);
    uint8_t* d = dst.BytePtr(api, 0, (g.repeat * per_rep + 7) / 8, loc);
    detail::vec_acct(c, api, loc, g.repeat, false, 0,
                     {ascx_emu::tm::R(src0, detail::extent<T>(g, p.src0BlkStride, p.src0RepStride)),
                      ascx_emu::tm::R(src1, detail::extent<T>(g, p.src1BlkStride, p.src1RepStride)),
                      ascx_emu::tm::W(dst, static_cast<int64_t>((g.repeat * per_rep + 7) / 8))});
    std::memset(d, 0, static_cast<size_t>((g.repeat * per_rep + 7) / 8));
    long long n = 0;
    detail::for_active(g, [&](int64_t r, int64_t bk, int64_t e) {
        double x = ascx_emu::to_d(a[detail::rep_off(r, bk, e, p.src0BlkStride, p.src0RepStride, es)]);
        double y = ascx_emu::to_d(b[detail::rep_off(r, bk, e, p.src1BlkStride, p.src1RepStride, es)]);
        detail::set_bit(d, r * per_rep + bk * (32 / es) + e, detail::cmp(cmpMode, x, y));
        ++n;
    });
    detail::trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}
// Select with a scalar second source (VSEL_TENSOR_SCALAR_MODE): dst[i] = bit i ? src0[i] : scalar.
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, const ascx_emu::nondeduced_t<T> src1,
                   SELMODE selMode, uint32_t count, ASCX_LOC) {
    const char* api = "Select";
    auto& c = ascx_emu::core(api, loc);
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
        ascx_emu::fail(api, loc, "a scalar src1 needs selMode = SELMODE::VSEL_TENSOR_SCALAR_MODE");
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src0, loc);
    const uint8_t* m = selMask.BytePtr(api, 0, (count + 7) / 8, loc);
    const T* a = src0.Ptr(api, 0, count, loc);
    T* d = dst.Ptr(api, 0, count, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(selMask, static_cast<int64_t>((count + 7) / 8)), ascx_emu::tm::R(src0, detail::nbytes<T>(count)),
                      ascx_emu::tm::W(dst, detail::nbytes<T>(count))});
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : count); ++i) d[i] = ((m[i / 8] >> (i % 8)) & 1u) ? a[i] : src1;
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
// Repeat form, tensor-tensor: repeat r reads its bits at bit r * (256 / sizeof(T)) of selMask
// (VSEL_TENSOR_TENSOR_MODE); VSEL_CMPMASK_SPR reuses the first repeat's bits for every repeat.
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,
                   uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& p, ASCX_LOC) {
    const char* api = "Select";
    auto& c = ascx_emu::core(api, loc);
    if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE) ascx_emu::fail(api, loc, "VSEL_TENSOR_SCALAR_MODE needs a scalar src1");
    auto g = isSetMask ? detail::geom_cont<T>(api, mask, repeatTime, loc) : detail::geom_core<T>(api, repeatTime, loc);
    T* d = detail::operand(api, dst, g, p.dstBlkStride, p.dstRepStride, loc);
    const T* a = detail::operand(api, src0, g, p.src0BlkStride, p.src0RepStride, loc);
    const T* b = detail::operand(api, src1, g, p.src1BlkStride, p.src1RepStride, loc);
    const int64_t per_rep = 256 / static_cast<int64_t>(sizeof(T)), es = sizeof(T);
    bool reuse = selMode == SELMODE::VSEL_CMPMASK_SPR;
    const uint8_t* m = selMask.BytePtr(api, 0, ((reuse ? 1 : g.repeat) * per_rep + 7) / 8, loc);
    detail::vec_acct(c, api, loc, g.repeat, false, 0,
                     {ascx_emu::tm::R(selMask, static_cast<int64_t>(((reuse ? 1 : g.repeat) * per_rep + 7) / 8)),
                      ascx_emu::tm::R(src0, detail::extent<T>(g, p.src0BlkStride, p.src0RepStride)),
                      ascx_emu::tm::R(src1, detail::extent<T>(g, p.src1BlkStride, p.src1RepStride)),
                      ascx_emu::tm::W(dst, detail::extent<T>(g, p.dstBlkStride, p.dstRepStride))});
    long long n = 0;
    detail::for_active(g, [&](int64_t r, int64_t bk, int64_t e) {
        int64_t bit = (reuse ? 0 : r * per_rep) + bk * (32 / es) + e;
        bool on = (m[bit / 8] >> (bit % 8)) & 1u;
        d[detail::rep_off(r, bk, e, p.dstBlkStride, p.dstRepStride, es)] =
            on ? a[detail::rep_off(r, bk, e, p.src0BlkStride, p.src0RepStride, es)] : b[detail::rep_off(r, bk, e, p.src1BlkStride, p.src1RepStride, es)];
        ++n;
    });
    detail::trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}

}  // namespace AscendC
