// ascx emulator: data movement, vector, reduction and cube instructions.
// Clean-room implementation written for the ascx project from the public Ascend C API
// documentation (Apache-2.0). Semantics chosen are documented in docs/emulator.md.
#pragma once
#include "runtime.h"

namespace AscendC {

// ---------------------------------------------------------------- parameter structs
struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;   // 32 B units
    uint16_t srcStride = 0;  // gap between blocks, 32 B units
    uint16_t dstStride = 0;
};
struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn, uint32_t rsvIn = 0)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;  // bytes
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};
template <typename T> struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool isPadIn, uint8_t l, uint8_t r, T v) : isPad(isPadIn), leftPadding(l), rightPadding(r), paddingValue(v) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = 0;
};
struct DataCopyPadParams {
    DataCopyPadParams() = default;
    DataCopyPadParams(bool isPadIn, uint8_t l, uint8_t r, uint64_t v) : isPad(isPadIn), leftPadding(l), rightPadding(r), paddingValue(v) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};
struct Nd2NzParams {
    Nd2NzParams() = default;
    Nd2NzParams(uint16_t ndNumIn, uint16_t nValueIn, uint16_t dValueIn, uint16_t srcNdMatrixStrideIn, uint16_t srcDValueIn,
                uint16_t dstNzC0StrideIn, uint16_t dstNzNStrideIn, uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn), srcDValue(srcDValueIn),
          dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn), dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 1;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 1;
    uint16_t dstNzMatrixStride = 0;
};
struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t dB, uint8_t s0B, uint8_t s1B, uint8_t dR, uint8_t s0R, uint8_t s1R)
        : dstBlkStride(dB), src0BlkStride(s0B), src1BlkStride(s1B), dstRepStride(dR), src0RepStride(s0R), src1RepStride(s1R) {}
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
    bool repeatStrideMode = false, strideSizeMode = false;
};
struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t dB, uint16_t sB, uint8_t dR, uint8_t sR)
        : dstBlkStride(dB), srcBlkStride(sB), dstRepStride(dR), srcRepStride(sR) {}
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
    bool repeatStrideMode = false, strideSizeMode = false;
};
struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(uint16_t dB, uint16_t dR) : dstBlkStride(dB), dstRepStride(dR) {}
    uint16_t dstBlkStride = 1, dstRepStride = 8;
};
struct LoadData2DParams {
    LoadData2DParams() = default;
    LoadData2DParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint8_t sidIn, uint16_t dstGapIn,
                     bool ifTransposeIn, uint8_t addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), sid(sidIn), dstGap(dstGapIn),
          ifTranspose(ifTransposeIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint8_t sid = 0;
    uint16_t dstGap = 0;
    bool ifTranspose = false;
    uint8_t addrMode = 0;
};
using LoadData2dParams = LoadData2DParams;
struct MmadParams {
    MmadParams() = default;
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, bool isBiasIn, int32_t fmOffsetIn, bool enSsparseIn,
               bool enWinogradAIn, bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn), enWinogradA(enWinogradAIn),
          enWinogradB(enWinogradBIn) {}
    uint16_t m = 0, n = 0, k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false, enWinogradA = false, enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
};
enum class QuantMode_t { NoQuant, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };
enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
struct FixpipeParamsV220 {
    FixpipeParamsV220() = default;
    FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    uint16_t nSize = 0, mSize = 0, srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1, srcNdStride = 0, dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};
enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class ReduceOrder { ORDER_VALUE_INDEX, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

}  // namespace AscendC

namespace ascx_emu {
using AscendC::GlobalTensor;
using AscendC::LocalTensor;

inline std::string copy_extra(const char* src, const char* dst, const char* dtype, long long bytes, long long elems,
                              long long blocks = 1) {
    return ks("src", src) + ks("dst", dst) + ks("dtype", dtype) + kv("bytes", bytes) + kv("elems", elems) + kv("blocks", blocks);
}

// Pipe of a local->local or GM<->local move.
inline int move_pipe(int src_scope, int dst_scope) {
    if (src_scope == SC_GM) return PIPE_MTE2;
    if (dst_scope == SC_GM) return (src_scope == SC_L0C) ? PIPE_FIX : PIPE_MTE3;
    if (src_scope == SC_UB && dst_scope == SC_UB) return PIPE_V;
    if (src_scope == SC_UB && dst_scope == SC_L1) return PIPE_MTE3;
    if (src_scope == SC_L1) return PIPE_MTE1;
    return PIPE_MTE2;
}

inline void check_local_align(const char* api, int scope, uint32_t addr, SrcLoc loc) {
    uint32_t al = scope_align(scope);
    if (addr % al != 0)
        fail(api, loc, "misaligned local address: %s address %u is not %u-byte aligned", scope_name(scope), addr, al);
}

// Element loop of a mask/repeat vector instruction. `per(i, r, b, e)` is called for each
// active element i of repeat r (block b, element e in the block). elems per block = 32 / S.
inline void check_repeat(const char* api, int32_t repeat, SrcLoc loc) {
    if (repeat < 0 || repeat > 255)
        fail(api, loc, "repeatTimes %d out of range [0, 255] (use the count form or split the repeats)", repeat);
}
inline void mask_bits(const char* api, uint64_t mask, int esize, uint64_t& lo, uint64_t& hi, SrcLoc loc) {
    uint64_t maxm = 256u / static_cast<uint64_t>(esize);
    if (maxm > 128) maxm = 128;
    if (mask == 0 || mask > maxm)
        fail(api, loc, "continuous mask %llu out of range [1, %llu] for %d-byte elements", (unsigned long long)mask,
             (unsigned long long)maxm, esize);
    lo = mask >= 64 ? ~0ull : ((1ull << mask) - 1);
    hi = mask >= 128 ? ~0ull : (mask <= 64 ? 0 : ((1ull << (mask - 64)) - 1));
}
inline bool mask_on(uint64_t lo, uint64_t hi, int i) { return i < 64 ? ((lo >> i) & 1u) : ((hi >> (i - 64)) & 1u); }

// Byte extent touched by one operand of a repeat instruction (relative to its start).
inline int64_t repeat_extent(int32_t repeat, int64_t blk_stride, int64_t rep_stride, int nblocks, int64_t blk_bytes) {
    if (repeat <= 0) return 0;
    int64_t mx = 0;
    for (int b = 0; b < nblocks; ++b) mx = std::max(mx, b * blk_stride * 32 + blk_bytes);
    return (repeat - 1) * rep_stride * 32 + mx;
}

template <typename T> inline void local_check_vec(const char* api, const LocalTensor<T>& t, SrcLoc loc) {
    t.Valid(api, loc);
    if (t.scope() != SC_UB) fail(api, loc, "vector instruction operand must be in UB (VECIN/VECOUT/VECCALC), got %s", scope_name(t.scope()));
    check_local_align(api, SC_UB, t.addr(), loc);
}

// ---- timing hooks of data movement (see timing.h): cost features, GM traffic, local bytes.
// Byte offset of a GM view from the start of its GmAlloc region (stands for the device
// buffer base when judging 512 B alignment).
template <typename T> inline uint64_t gm_offset(const GlobalTensor<T>& g) {
    uintptr_t st;
    size_t len;
    const void* p = g.address_();
    if (gm_region_of(p, st, len)) return reinterpret_cast<uintptr_t>(p) - st;
    return reinterpret_cast<uintptr_t>(p);
}
// GM traffic of `blocks` bursts of `block_bytes`, `pitch` bytes apart, from a GM view.
template <typename T>
inline void gm_blocks(CoreState& c, const GlobalTensor<T>& g, uint64_t block_bytes, uint64_t blocks, uint64_t pitch) {
    uintptr_t a = reinterpret_cast<uintptr_t>(g.address_());
    if (pitch == block_bytes || blocks <= 1) {
        tm::gm_touch(c.tm, a, block_bytes * blocks);
        return;
    }
    for (uint64_t i = 0; i < blocks; ++i) tm::gm_touch(c.tm, a + i * pitch, block_bytes);
}
// GM -> local (MTE2): `blocks` bursts of `block_bytes`, `pitch` bytes apart in GM; the
// local destination spans `local_bytes`.
template <typename T>
inline void acct_gm_in(CoreState& c, const char* op, SrcLoc loc, const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint64_t block_bytes,
                       uint64_t blocks, uint64_t pitch, int64_t local_bytes) {
    double bytes = static_cast<double>(block_bytes * blocks);
    gm_blocks(c, src, block_bytes, blocks, pitch);
    account(c, PIPE_MTE2, op, loc,
            tm::copy_in(bytes, static_cast<double>(blocks), dst.scope() == SC_L1, tm::unaligned_bytes(gm_offset(src), block_bytes, pitch, blocks)),
            {tm::W(dst, local_bytes)});
}
// local -> GM (MTE3 from UB/L1, FIX from L0C).
template <typename T>
inline void acct_gm_out(CoreState& c, const char* op, SrcLoc loc, const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint64_t block_bytes,
                        uint64_t blocks, uint64_t pitch, int64_t local_bytes) {
    double bytes = static_cast<double>(block_bytes * blocks);
    gm_blocks(c, dst, block_bytes, blocks, pitch);
    int pipe = move_pipe(src.scope(), SC_GM);
    tm::Cost k = pipe == PIPE_FIX ? tm::fixpipe(bytes)
                                  : tm::copy_out(bytes, static_cast<double>(blocks), tm::unaligned_bytes(gm_offset(dst), block_bytes, pitch, blocks));
    account(c, pipe, op, loc, k, {tm::R(src, local_bytes)});
}
// local -> local: UB->UB on V (priced as a vector copy), UB->L1 on MTE3, L1->L0 on MTE1.
template <typename T, typename U>
inline void acct_local_move(CoreState& c, const char* op, SrcLoc loc, const LocalTensor<T>& dst, const LocalTensor<U>& src, uint64_t bytes,
                            int64_t dst_bytes, int64_t src_bytes) {
    int pipe = move_pipe(src.scope(), dst.scope());
    double b = static_cast<double>(bytes);
    tm::Cost k = pipe == PIPE_V ? tm::vec(tm::VC_SIMPLE, std::ceil(b / 256.0), true, b)
                 : pipe == PIPE_MTE1 ? tm::load_l0(b, dst.scope() == SC_L0B)
                 : pipe == PIPE_MTE2 ? tm::copy_in(b, 1, dst.scope() == SC_L1, 0)
                                     : tm::copy_out(b, 1, 0);
    account(c, pipe, op, loc, k, {tm::R(src, src_bytes), tm::W(dst, dst_bytes)});
}
inline bool skip_data() { return tm::timing_only(); }

}  // namespace ascx_emu

namespace AscendC {

// ================================================================ DataCopy
// GM -> local (UB or L1), count form.
template <typename T> inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count, ASCX_LOC) {
    const char* api = "DataCopy";
    auto& c = ascx_emu::core(api, loc);
    uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % 32 != 0)
        ascx_emu::fail(api, loc,
                       "count %u of %s is %llu bytes, not a multiple of 32 B (the device silently truncates to %llu bytes; use "
                       "DataCopyPad for ragged tails)",
                       count, ascx_emu::type_name<T>(), (unsigned long long)bytes, (unsigned long long)(bytes / 32 * 32));
    dst.Valid(api, loc);
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    src.Check(api, 0, count, loc);
    uint8_t* dp = reinterpret_cast<uint8_t*>(dst.Ptr(api, 0, count, loc));
    if (!ascx_emu::skip_data()) std::memcpy(dp, src.address_(), bytes);
    ascx_emu::acct_gm_in(c, "DataCopy", loc, dst, src, bytes, 1, bytes, static_cast<int64_t>(bytes));
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE2, "DataCopy", ascx_emu::copy_extra("GM", ascx_emu::scope_name(dst.scope()), ascx_emu::type_name<T>(),
                                                                        static_cast<long long>(bytes), count), loc);
}
// local -> GM, count form.
template <typename T> inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, ASCX_LOC) {
    const char* api = "DataCopy";
    auto& c = ascx_emu::core(api, loc);
    uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % 32 != 0)
        ascx_emu::fail(api, loc,
                       "count %u of %s is %llu bytes, not a multiple of 32 B (the device silently truncates to %llu bytes; use "
                       "DataCopyPad for ragged tails)",
                       count, ascx_emu::type_name<T>(), (unsigned long long)bytes, (unsigned long long)(bytes / 32 * 32));
    src.Valid(api, loc);
    ascx_emu::check_local_align(api, src.scope(), src.addr(), loc);
    dst.Check(api, 0, count, loc);
    const T* s = src.Ptr(api, 0, count, loc);
    T* d = dst.address_();
    if (ascx_emu::skip_data()) {
    } else if (c.atomic_add) {
        for (uint32_t i = 0; i < count; ++i) d[i] = ascx_emu::convert<T>(ascx_emu::to_d(d[i]) + ascx_emu::to_d(s[i]));
    } else {
        std::memcpy(d, s, bytes);
    }
    ascx_emu::acct_gm_out(c, "DataCopy", loc, dst, src, bytes, 1, bytes, static_cast<int64_t>(bytes));
    if (c.tracing) ascx_emu::trace_emit(c, ascx_emu::move_pipe(src.scope(), ascx_emu::SC_GM), "DataCopy",
                         ascx_emu::copy_extra(ascx_emu::scope_name(src.scope()), "GM", ascx_emu::type_name<T>(), static_cast<long long>(bytes), count), loc);
}
// local -> local, count form (UB->UB on PIPE_V, UB->L1 on MTE3).
template <typename T> inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, ASCX_LOC) {
    const char* api = "DataCopy";
    auto& c = ascx_emu::core(api, loc);
    uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % 32 != 0)
        ascx_emu::fail(api, loc, "count %u of %s is %llu bytes, not a multiple of 32 B (the device silently truncates)", count,
                       ascx_emu::type_name<T>(), (unsigned long long)bytes);
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    ascx_emu::check_local_align(api, src.scope(), src.addr(), loc);
    T* dp = dst.Ptr(api, 0, count, loc);
    const T* sp = src.Ptr(api, 0, count, loc);
    if (!ascx_emu::skip_data()) std::memmove(dp, sp, bytes);
    ascx_emu::acct_local_move(c, "DataCopy", loc, dst, src, bytes, static_cast<int64_t>(bytes), static_cast<int64_t>(bytes));
    if (c.tracing) ascx_emu::trace_emit(c, ascx_emu::move_pipe(src.scope(), dst.scope()), "DataCopy",
                         ascx_emu::copy_extra(ascx_emu::scope_name(src.scope()), ascx_emu::scope_name(dst.scope()), ascx_emu::type_name<T>(),
                                              static_cast<long long>(bytes), count), loc);
}

namespace detail {
inline void check_dcp(const char* api, const DataCopyParams& p, SrcLoc loc) {
    if (p.blockCount == 0 || p.blockCount > 4095) ascx_emu::fail(api, loc, "DataCopyParams.blockCount %u out of range [1, 4095]", p.blockCount);
    if (p.blockLen == 0) ascx_emu::fail(api, loc, "DataCopyParams.blockLen is 0");
}
}  // namespace detail

// Strided forms: blockCount blocks of blockLen * 32 B; srcStride/dstStride are the gaps
// between consecutive blocks (end of one to start of the next) in 32 B units.
template <typename T> inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p, ASCX_LOC) {
    const char* api = "DataCopy";
    auto& c = ascx_emu::core(api, loc);
    detail::check_dcp(api, p, loc);
    dst.Valid(api, loc);
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    uint64_t bl = p.blockLen * 32ull, es = sizeof(T);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint64_t so = i * (bl + p.srcStride * 32ull), doff = i * (bl + p.dstStride * 32ull);
        src.Check(api, so / es, bl / es, loc);
        uint8_t* dp = dst.BytePtr(api, static_cast<int64_t>(doff), static_cast<int64_t>(bl), loc);
        if (!ascx_emu::skip_data()) std::memcpy(dp, reinterpret_cast<const uint8_t*>(src.address_()) + so, bl);
    }
    ascx_emu::acct_gm_in(c, "DataCopy", loc, dst, src, bl, p.blockCount, bl + p.srcStride * 32ull,
                         static_cast<int64_t>((p.blockCount - 1) * (bl + p.dstStride * 32ull) + bl));
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE2, "DataCopy",
                         ascx_emu::copy_extra("GM", ascx_emu::scope_name(dst.scope()), ascx_emu::type_name<T>(), static_cast<long long>(bl * p.blockCount),
                                              static_cast<long long>(bl * p.blockCount / es), p.blockCount), loc);
}
template <typename T> inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, ASCX_LOC) {
    const char* api = "DataCopy";
    auto& c = ascx_emu::core(api, loc);
    detail::check_dcp(api, p, loc);
    src.Valid(api, loc);
    ascx_emu::check_local_align(api, src.scope(), src.addr(), loc);
    uint64_t bl = p.blockLen * 32ull, es = sizeof(T);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint64_t so = i * (bl + p.srcStride * 32ull), doff = i * (bl + p.dstStride * 32ull);
        dst.Check(api, doff / es, bl / es, loc);
        const uint8_t* sp = src.BytePtr(api, static_cast<int64_t>(so), static_cast<int64_t>(bl), loc);
        if (!ascx_emu::skip_data()) std::memcpy(reinterpret_cast<uint8_t*>(dst.address_()) + doff, sp, bl);
    }
    ascx_emu::acct_gm_out(c, "DataCopy", loc, dst, src, bl, p.blockCount, bl + p.dstStride * 32ull,
                          static_cast<int64_t>((p.blockCount - 1) * (bl + p.srcStride * 32ull) + bl));
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE3, "DataCopy",
                         ascx_emu::copy_extra(ascx_emu::scope_name(src.scope()), "GM", ascx_emu::type_name<T>(), static_cast<long long>(bl * p.blockCount),
                                              static_cast<long long>(bl * p.blockCount / es), p.blockCount), loc);
}
// L1 (C1) -> bias table (C2, MTE1): blockLen and dstStride count 64 B, srcStride 32 B (the
// bias-table copy's units, cce intrinsic page copy_cbuf_to_bt); the table holds 1 KB.
template <typename T> inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, ASCX_LOC) {
    const char* api = "DataCopy";
    auto& c = ascx_emu::core(api, loc);
    detail::check_dcp(api, p, loc);
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    ascx_emu::check_local_align(api, src.scope(), src.addr(), loc);
    const bool to_bt = dst.scope() == ascx_emu::SC_BT;
    if (to_bt && src.scope() != ascx_emu::SC_L1)
        ascx_emu::fail(api, loc, "the bias table (C2) is filled from L1 (C1), not from %s", ascx_emu::scope_name(src.scope()));
    const uint64_t unit = to_bt ? 64ull : 32ull, dunit = unit;
    uint64_t bl = p.blockLen * unit;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint64_t so = i * (bl + p.srcStride * 32ull), doff = i * (bl + p.dstStride * dunit);
        uint8_t* dp = dst.BytePtr(api, static_cast<int64_t>(doff), static_cast<int64_t>(bl), loc);
        const uint8_t* sp = src.BytePtr(api, static_cast<int64_t>(so), static_cast<int64_t>(bl), loc);
        if (!ascx_emu::skip_data()) std::memmove(dp, sp, bl);
    }
    ascx_emu::acct_local_move(c, "DataCopy", loc, dst, src, bl * p.blockCount,
                              static_cast<int64_t>((p.blockCount - 1) * (bl + p.dstStride * dunit) + bl),
                              static_cast<int64_t>((p.blockCount - 1) * (bl + p.srcStride * 32ull) + bl));
    if (c.tracing) ascx_emu::trace_emit(c, ascx_emu::move_pipe(src.scope(), dst.scope()), "DataCopy",
                         ascx_emu::copy_extra(ascx_emu::scope_name(src.scope()), ascx_emu::scope_name(dst.scope()), ascx_emu::type_name<T>(),
                                              static_cast<long long>(bl * p.blockCount), static_cast<long long>(bl * p.blockCount / sizeof(T)), p.blockCount), loc);
}

// L1 (C1) half -> bias table (C2) float, converted on the way (copy_cbuf_to_bt with
// convControl: the L1 data are read as FP16 and written as FP32). blockLen and srcStride
// count the source (64 B and 32 B), dstStride 64 B of the table: a block of blockLen * 32
// halves becomes as many floats.
inline void DataCopy(const LocalTensor<float>& dst, const LocalTensor<half>& src, const DataCopyParams& p, ASCX_LOC) {
    const char* api = "DataCopy";
    auto& c = ascx_emu::core(api, loc);
    detail::check_dcp(api, p, loc);
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    ascx_emu::check_local_align(api, src.scope(), src.addr(), loc);
    if (dst.scope() != ascx_emu::SC_BT || src.scope() != ascx_emu::SC_L1)
        ascx_emu::fail(api, loc, "a half -> float DataCopy is the L1 (C1) -> bias table (C2) conversion; got %s -> %s",
                       ascx_emu::scope_name(src.scope()), ascx_emu::scope_name(dst.scope()));
    const uint64_t sbl = p.blockLen * 64ull, n = sbl / sizeof(half), dbl = n * sizeof(float);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        const uint64_t so = i * (sbl + p.srcStride * 32ull), doff = i * (dbl + p.dstStride * 64ull);
        float* dp = reinterpret_cast<float*>(dst.BytePtr(api, static_cast<int64_t>(doff), static_cast<int64_t>(dbl), loc));
        const half* sp = reinterpret_cast<const half*>(src.BytePtr(api, static_cast<int64_t>(so), static_cast<int64_t>(sbl), loc));
        for (uint64_t e = 0; e < (ascx_emu::skip_data() ? 0 : n); ++e) dp[e] = static_cast<float>(sp[e]);
    }
    ascx_emu::acct_local_move(c, "DataCopy", loc, dst, src, sbl * p.blockCount,
                              static_cast<int64_t>((p.blockCount - 1) * (dbl + p.dstStride * 64ull) + dbl),
                              static_cast<int64_t>((p.blockCount - 1) * (sbl + p.srcStride * 32ull) + sbl));
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE1, "DataCopy",
                         ascx_emu::copy_extra("L1", "BT", "half", static_cast<long long>(sbl * p.blockCount),
                                              static_cast<long long>(n * p.blockCount), p.blockCount), loc);
}

// GM (ND) -> L1 (NZ): element (r, c) of matrix i goes to
//   dst[i*dstNzMatrixStride + (c/C0)*dstNzC0Stride*C0 + r*dstNzNStride*C0 + c%C0], C0 = 32/sizeof(T);
// the columns of the last C0 group beyond dValue are zero-filled.
template <typename T> inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p, ASCX_LOC) {
    const char* api = "DataCopy(Nd2Nz)";
    auto& c = ascx_emu::core(api, loc);
    dst.Valid(api, loc);
    if (dst.scope() != ascx_emu::SC_L1) ascx_emu::fail(api, loc, "ND->NZ DataCopy destination must be in L1 (A1/B1), got %s", ascx_emu::scope_name(dst.scope()));
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    const int64_t C0 = 32 / static_cast<int64_t>(sizeof(T));
    int64_t dpad = (p.dValue + C0 - 1) / C0 * C0;
    for (int64_t i = 0; i < (ascx_emu::skip_data() ? 0 : p.ndNum); ++i)
        for (int64_t r = 0; r < p.nValue; ++r) {
            int64_t srow = i * p.srcNdMatrixStride + r * p.srcDValue;
            src.Check(api, static_cast<uint64_t>(srow), p.dValue, loc);
            const T* s = src.address_() + srow;
            for (int64_t col = 0; col < dpad; ++col) {
                int64_t di = i * p.dstNzMatrixStride + (col / C0) * p.dstNzC0Stride * C0 + r * p.dstNzNStride * C0 + col % C0;
                *dst.Ptr(api, di, 1, loc) = col < p.dValue ? s[col] : T(0);
            }
        }
    long long n = static_cast<long long>(p.ndNum) * p.nValue * p.dValue;
    if (p.ndNum > 0 && p.nValue > 0 && p.dValue > 0) {
        int64_t ext = ((p.ndNum - 1) * p.dstNzMatrixStride + (dpad / C0 - 1) * p.dstNzC0Stride * C0 + (p.nValue - 1) * p.dstNzNStride * C0 + C0) *
                      static_cast<int64_t>(sizeof(T));
        src.Check(api, 0, static_cast<uint64_t>((p.ndNum - 1) * p.srcNdMatrixStride + (p.nValue - 1) * p.srcDValue + p.dValue), loc);
        ascx_emu::acct_gm_in(c, "DataCopyNd2Nz", loc, dst, src, static_cast<uint64_t>(p.dValue) * sizeof(T),
                             static_cast<uint64_t>(p.ndNum) * p.nValue, static_cast<uint64_t>(p.srcDValue) * sizeof(T), ext);
    }
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE2, "DataCopyNd2Nz", ascx_emu::copy_extra("GM", "L1", ascx_emu::type_name<T>(), n * static_cast<long long>(sizeof(T)), n,
                                                                             static_cast<long long>(p.ndNum) * p.nValue), loc);
}

// ================================================================ DataCopyPad
// GM -> UB: blockCount blocks of blockLen BYTES; srcStride = GM gap in bytes; dstStride =
// UB gap in 32 B blocks; each UB block holds [leftPadding][data][rightPadding] rounded up
// to 32 B. With isPad the paddings (and the round-up tail) take paddingValue.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad,
                        ASCX_LOC) {
    const char* api = "DataCopyPad";
    auto& c = ascx_emu::core(api, loc);
    dst.Valid(api, loc);
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    if (p.blockCount == 0 || p.blockCount > 4095) ascx_emu::fail(api, loc, "blockCount %u out of range [1, 4095]", p.blockCount);
    if (p.blockLen % sizeof(T) != 0) ascx_emu::fail(api, loc, "blockLen %u bytes is not a multiple of sizeof(%s)", p.blockLen, ascx_emu::type_name<T>());
    const uint64_t es = sizeof(T);
    uint64_t lp = pad.leftPadding * es, rp = pad.rightPadding * es;
    if (lp > 32 || rp > 32) ascx_emu::fail(api, loc, "padding of %u/%u elements exceeds 32 bytes", pad.leftPadding, pad.rightPadding);
    uint64_t ub_block = (lp + p.blockLen + rp + 31) / 32 * 32;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint64_t so = i * (static_cast<uint64_t>(p.blockLen) + p.srcStride);
        uint64_t doff = i * (ub_block + p.dstStride * 32ull);
        src.Check(api, so / es, p.blockLen / es, loc);
        uint8_t* d = dst.BytePtr(api, static_cast<int64_t>(doff), static_cast<int64_t>(ub_block), loc);
        if (ascx_emu::skip_data()) continue;
        if (pad.isPad) {
            T* dt = reinterpret_cast<T*>(d);
            for (uint64_t k = 0; k < ub_block / es; ++k) dt[k] = pad.paddingValue;
        }
        std::memcpy(d + lp, reinterpret_cast<const uint8_t*>(src.address_()) + so, p.blockLen);
    }
    ascx_emu::acct_gm_in(c, "DataCopyPad", loc, dst, src, p.blockLen, p.blockCount, static_cast<uint64_t>(p.blockLen) + p.srcStride,
                         static_cast<int64_t>((p.blockCount - 1) * (ub_block + p.dstStride * 32ull) + ub_block));
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE2, "DataCopyPad",
                         ascx_emu::copy_extra("GM", ascx_emu::scope_name(dst.scope()), ascx_emu::type_name<T>(),
                                              static_cast<long long>(p.blockLen) * p.blockCount,
                                              static_cast<long long>(p.blockLen / es) * p.blockCount, p.blockCount), loc);
}
// UB -> GM: blockCount blocks of blockLen bytes; srcStride = UB gap in 32 B blocks (each UB
// block occupies blockLen rounded up to 32 B); dstStride = GM gap in bytes.
template <typename T> inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p, ASCX_LOC) {
    const char* api = "DataCopyPad";
    auto& c = ascx_emu::core(api, loc);
    src.Valid(api, loc);
    ascx_emu::check_local_align(api, src.scope(), src.addr(), loc);
    if (p.blockCount == 0 || p.blockCount > 4095) ascx_emu::fail(api, loc, "blockCount %u out of range [1, 4095]", p.blockCount);
    if (p.blockLen % sizeof(T) != 0) ascx_emu::fail(api, loc, "blockLen %u bytes is not a multiple of sizeof(%s)", p.blockLen, ascx_emu::type_name<T>());
    const uint64_t es = sizeof(T);
    uint64_t ub_block = (p.blockLen + 31ull) / 32 * 32;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint64_t so = i * (ub_block + p.srcStride * 32ull);
        uint64_t doff = i * (static_cast<uint64_t>(p.blockLen) + p.dstStride);
        dst.Check(api, doff / es, p.blockLen / es, loc);
        const uint8_t* s = src.BytePtr(api, static_cast<int64_t>(so), p.blockLen, loc);
        T* d = reinterpret_cast<T*>(reinterpret_cast<uint8_t*>(dst.address_()) + doff);
        if (ascx_emu::skip_data()) {
        } else if (c.atomic_add) {
            const T* st = reinterpret_cast<const T*>(s);
            for (uint64_t k = 0; k < p.blockLen / es; ++k) d[k] = ascx_emu::convert<T>(ascx_emu::to_d(d[k]) + ascx_emu::to_d(st[k]));
        } else {
            std::memcpy(d, s, p.blockLen);
        }
    }
    ascx_emu::acct_gm_out(c, "DataCopyPad", loc, dst, src, p.blockLen, p.blockCount, static_cast<uint64_t>(p.blockLen) + p.dstStride,
                          static_cast<int64_t>((p.blockCount - 1) * (ub_block + p.srcStride * 32ull) + p.blockLen));
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE3, "DataCopyPad",
                         ascx_emu::copy_extra(ascx_emu::scope_name(src.scope()), "GM", ascx_emu::type_name<T>(),
                                              static_cast<long long>(p.blockLen) * p.blockCount,
                                              static_cast<long long>(p.blockLen / es) * p.blockCount, p.blockCount), loc);
}
// Older DataCopyParams-typed variants (blockLen in bytes, as documented for DataCopyPad).
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p, const DataCopyPadParams& pad, ASCX_LOC) {
    T pv;
    uint64_t raw = pad.paddingValue;
    std::memcpy(static_cast<void*>(&pv), &raw, sizeof(T));
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride),
                DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, pv), loc);
}
template <typename T> inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, ASCX_LOC) {
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride), loc);
}

// ================================================================ vector instructions
namespace detail {

template <typename T> inline long long repeats_for(int64_t count) {
    return static_cast<long long>((count * static_cast<int64_t>(sizeof(T)) + 255) / 256);
}

template <typename T> inline void trace_vec(ascx_emu::CoreState& c, const char* op, long long elems, long long repeats, SrcLoc loc,
                                            const char* form = "count") {
    if (!c.tracing) return;
    ascx_emu::trace_emit(c, PIPE_V, op,
                         ascx_emu::ks("dtype", ascx_emu::type_name<T>()) + ascx_emu::kv("elems", elems) + ascx_emu::kv("repeats", repeats) +
                             ascx_emu::kv("bytes", elems * static_cast<long long>(sizeof(T))) + ascx_emu::ks("form", form), loc);
}

// Pricing class of a vector instruction (timing.h): transcendental and division are slower,
// reductions pay an extra head.
inline int vec_class_of(const char* op) {
    static const char* transc[] = {"Exp", "Ln", "Sqrt", "Rsqrt", "Div", "Reciprocal"};
    for (const char* t : transc)
        if (std::strcmp(op, t) == 0) return ascx_emu::tm::VC_TRANSC;
    if (std::strncmp(op, "Reduce", 6) == 0 || std::strncmp(op, "WholeReduce", 11) == 0) return ascx_emu::tm::VC_REDUCE;
    if (std::strcmp(op, "Cast") == 0) return ascx_emu::tm::VC_CAST;
    return ascx_emu::tm::VC_SIMPLE;
}
inline int vec_class(const char* op) {  // op is a string literal: cache the last answer by address
    static thread_local const char* last = nullptr;
    static thread_local int cls = 0;
    if (op != last) {
        cls = vec_class_of(op);
        last = op;
    }
    return cls;
}
// Timing hook of a vector instruction: `repeats` repeats (count form: `bytes` processed).
// A count-form instruction's UB bank conflicts come from its accesses (contiguous operands);
// a repeat-form one passes its operands' strides (`banks`, timing.h bank_extra_beats).
inline void vec_acct(ascx_emu::CoreState& c, const char* op, SrcLoc loc, double repeats, bool count_form, double bytes,
                     std::initializer_list<ascx_emu::tm::Acc> acc, std::initializer_list<ascx_emu::tm::VOp> banks = {}) {
    ascx_emu::tm::Cost k = ascx_emu::tm::vec(vec_class(op), repeats, count_form, bytes);
    const int64_t rep = static_cast<int64_t>(repeats);
    if (banks.size()) k.f[ascx_emu::tm::V_BANK] = ascx_emu::tm::bank_extra_beats(banks.begin(), static_cast<int>(banks.size()), rep);
    else if (count_form) k.f[ascx_emu::tm::V_BANK] = ascx_emu::tm::bank_extra_beats_count(acc, rep, ascx_emu::SC_UB);
    ascx_emu::account(c, PIPE_V, op, loc, k, acc);
}
template <typename T> inline int64_t nbytes(int64_t count) { return count * static_cast<int64_t>(sizeof(T)); }

// Element index of active element (repeat r, block b, element e) for an operand with the
// given block / repeat strides (32 B units) and element size S: offset in elements.
inline int64_t rep_off(int64_t r, int64_t b, int64_t e, int64_t blk, int64_t rep, int64_t esz) {
    return (r * rep * 32 + b * blk * 32) / esz + e;
}

// Generic mask/repeat driver for up to 2 sources. E = element size that defines the
// repeat geometry (elements per block = 32 / E, 8 blocks per repeat).
struct RepGeom {
    int32_t repeat;
    uint64_t lo, hi;
    int esize;
};

template <typename T> inline RepGeom geom_cont(const char* api, uint64_t mask, int32_t repeat, SrcLoc loc) {
    ascx_emu::check_repeat(api, repeat, loc);
    RepGeom g{repeat, 0, 0, static_cast<int>(sizeof(T))};
    ascx_emu::mask_bits(api, mask, static_cast<int>(sizeof(T)), g.lo, g.hi, loc);
    return g;
}
template <typename T> inline RepGeom geom_bits(const char* api, const uint64_t mask[], int32_t repeat, SrcLoc loc) {
    ascx_emu::check_repeat(api, repeat, loc);
    RepGeom g{repeat, mask[0], sizeof(T) == 2 ? mask[1] : 0, static_cast<int>(sizeof(T))};
    if (sizeof(T) == 4 && mask[1] != 0) ascx_emu::fail(api, loc, "mask[1] must be 0 for 32-bit types (64 elements per repeat)");
    if (g.lo == 0 && g.hi == 0) ascx_emu::fail(api, loc, "bit mask is all zero");
    return g;
}
template <typename T> inline RepGeom geom_core(const char* api, int32_t repeat, SrcLoc loc) {
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::check_repeat(api, repeat, loc);
    return RepGeom{repeat, c.mask_lo, sizeof(T) == 2 ? c.mask_hi : 0, static_cast<int>(sizeof(T))};
}

// Calls f(r, b, e, i) for every active element.
template <typename F> inline void for_active(const RepGeom& g, F&& f) {
    if (ascx_emu::skip_data()) return;
    int per_blk = 32 / g.esize;
    int per_rep = 8 * per_blk;
    for (int32_t r = 0; r < g.repeat; ++r)
        for (int i = 0; i < per_rep && i < 128; ++i)
            if (ascx_emu::mask_on(g.lo, g.hi, i)) f(r, i / per_blk, i % per_blk);
}

// Bytes an operand of element type T spans under geometry g with the given strides.
template <typename T> inline int64_t extent(const RepGeom& g, int64_t blk, int64_t rep, int64_t geom_esize = 0) {
    if (geom_esize == 0) geom_esize = g.esize;
    int64_t blk_bytes = 32 * static_cast<int64_t>(sizeof(T)) / geom_esize;
    int nb = 0;
    int per_blk = 32 / g.esize;
    for (int i = 0; i < 8 * per_blk && i < 128; ++i)
        if (ascx_emu::mask_on(g.lo, g.hi, i)) nb = i / per_blk + 1;
    int64_t mx = 0;
    if (g.repeat > 0 && nb > 0) mx = (g.repeat - 1) * rep * 32 + (nb - 1) * blk * blk_bytes + blk_bytes;
    return mx;
}
// A repeat-form operand for the bank model: blocks per repeat from the mask (as `extent`).
template <typename T> inline ascx_emu::tm::VOp bank_op(const LocalTensor<T>& t, const RepGeom& g, int64_t blk, int64_t rep, bool write) {
    int nb = 0;
    int per_blk = 32 / g.esize;
    for (int i = 0; i < 8 * per_blk && i < 128; ++i)
        if (ascx_emu::mask_on(g.lo, g.hi, i)) nb = i / per_blk + 1;
    return ascx_emu::tm::VOp{static_cast<int64_t>(t.addr()), blk, rep, nb, nb, g.repeat, write};
}
// Checks that an operand's touched range lies inside its buffer and returns its base pointer.
template <typename T>
inline T* operand(const char* api, const LocalTensor<T>& t, const RepGeom& g, int64_t blk, int64_t rep, SrcLoc loc, int64_t geom_esize = 0) {
    ascx_emu::local_check_vec(api, t, loc);
    return reinterpret_cast<T*>(t.BytePtr(api, 0, extent<T>(g, blk, rep, geom_esize), loc));
}

}  // namespace detail

// ---- elementwise results: floats are computed in double and rounded once; 16/32-bit integers
// (Add Sub Mul Max Min, Adds Muls Maxs Mins: half/int16_t/float/int32_t on Atlas A2 per the
// public API pages) in 64-bit and wrapped to T (two's complement, as the device's adders
// drop the carry); Div and the transcendental ops are float-only.
namespace detail {
constexpr bool same_name(const char* a, const char* b) { return *a == *b && (*a == 0 || same_name(a + 1, b + 1)); }
template <typename T, typename R> inline T int_result(R r) {
    if constexpr (std::is_floating_point<R>::value) return ascx_emu::convert<T>(static_cast<double>(r));
    else return static_cast<T>(static_cast<typename std::make_unsigned<T>::type>(static_cast<uint64_t>(static_cast<int64_t>(r))));
}
// Max/Min and the max/min reductions order values as IEEE 754-2019 maximum/minimum do: a NaN
// operand wins (NaN propagates, as the IR's `max`/`min` and numpy do) and +0 is above -0.
// The A2 vector pages say neither; the public pages that do speak of zeros (the register Max,
// SIMT __hmax) give +0 for max(-0, +0). `wins(is_max, v, best)`: v replaces the running best.
template <typename V> inline bool wins(bool is_max, V v, V best) {
    if constexpr (std::is_floating_point<V>::value) {
        if (best != best) return false;  // a NaN already won (the first NaN is kept)
        if (v != v) return true;
        if (v == best) return v == 0 && std::signbit(v) != std::signbit(best) && std::signbit(v) != is_max;
    }
    return is_max ? v > best : v < best;
}
template <typename V> inline V vmax(V x, V y) { return wins(true, y, x) ? y : x; }
template <typename V> inline V vmin(V x, V y) { return wins(false, y, x) ? y : x; }
template <typename T, typename F> inline T ew2(T a, T b, F f) {
    if constexpr (std::is_integral<T>::value) return int_result<T>(f(static_cast<int64_t>(a), static_cast<int64_t>(b)));
    else return ascx_emu::convert<T>(static_cast<double>(f(ascx_emu::to_d(a), ascx_emu::to_d(b))));
}
template <typename T, typename F> inline T ew1(T a, T s, F f) {
    if constexpr (std::is_integral<T>::value) return int_result<T>(f(static_cast<int64_t>(a), static_cast<int64_t>(s)));
    else return ascx_emu::convert<T>(static_cast<double>(f(ascx_emu::to_d(a), ascx_emu::to_d(s))));
}
}  // namespace detail

// ---- binary ops
// integer element types: 16/32-bit only (no int8 vector arithmetic), and no integer Div
#define ASCX_EMU_INT_CHECK(NAME)                                                                                           \
    static_assert(!std::is_integral<T>::value || (sizeof(T) >= 2 && !detail::same_name(#NAME, "Div")),                   \
                  #NAME ": integer operands must be int16_t/int32_t (uint16_t/uint32_t), and Div takes half or float")
#define ASCX_EMU_BINARY(NAME, EXPR)                                                                                         \
    template <typename T>                                                                                                  \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count, \
                     ASCX_LOC) {                                                                                           \
        const char* api = #NAME;                                                                                           \
        ASCX_EMU_INT_CHECK(NAME);                                                                                          \
        auto& c = ascx_emu::core(api, loc);                                                                                \
        if (count < 0) ascx_emu::fail(api, loc, "negative count %d", count);                                               \
        ascx_emu::local_check_vec(api, dst, loc);                                                                          \
        ascx_emu::local_check_vec(api, src0, loc);                                                                         \
        ascx_emu::local_check_vec(api, src1, loc);                                                                         \
        T* d = dst.Ptr(api, 0, count, loc);                                                                                \
        const T* a = src0.Ptr(api, 0, count, loc);                                                                         \
        const T* b = src1.Ptr(api, 0, count, loc);                                                                         \
        detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)), \
                         {ascx_emu::tm::R(src0, detail::nbytes<T>(count)), ascx_emu::tm::R(src1, detail::nbytes<T>(count)),           \
                          ascx_emu::tm::W(dst, detail::nbytes<T>(count))});                                                  \
        for (int32_t i = 0; i < (ascx_emu::skip_data() ? 0 : count); ++i)                                                 \
            d[i] = detail::ew2<T>(a[i], b[i], [](auto x, auto y) { return EXPR; });                                       \
        detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);                                           \
    }                                                                                                                      \
    template <typename T, bool isSetMask = true>                                                                           \
    inline void NAME##_rep_(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                            const detail::RepGeom& g, const BinaryRepeatParams& p, SrcLoc loc) {                          \
        ASCX_EMU_INT_CHECK(NAME);                                                                                          \
        auto& c = ascx_emu::core(api, loc);                                                                                \
        T* d = detail::operand(api, dst, g, p.dstBlkStride, p.dstRepStride, loc);                                          \
        const T* a = detail::operand(api, src0, g, p.src0BlkStride, p.src0RepStride, loc);                                  \
        const T* b = detail::operand(api, src1, g, p.src1BlkStride, p.src1RepStride, loc);                                  \
        const int64_t es = sizeof(T);                                                                                      \
        long long n = 0;                                                                                                   \
        detail::vec_acct(c, api, loc, g.repeat, false, 0,                                                                  \
                         {ascx_emu::tm::R(src0, detail::extent<T>(g, p.src0BlkStride, p.src0RepStride)),                    \
                          ascx_emu::tm::R(src1, detail::extent<T>(g, p.src1BlkStride, p.src1RepStride)),                    \
                          ascx_emu::tm::W(dst, detail::extent<T>(g, p.dstBlkStride, p.dstRepStride))},                      \
                         {detail::bank_op(src0, g, p.src0BlkStride, p.src0RepStride, false),                                 \
                          detail::bank_op(src1, g, p.src1BlkStride, p.src1RepStride, false),                                 \
                          detail::bank_op(dst, g, p.dstBlkStride, p.dstRepStride, true)});                                   \
        detail::for_active(g, [&](int64_t r, int64_t bk, int64_t e) {                                                      \
            d[detail::rep_off(r, bk, e, p.dstBlkStride, p.dstRepStride, es)] = detail::ew2<T>(                            \
                a[detail::rep_off(r, bk, e, p.src0BlkStride, p.src0RepStride, es)],                                       \
                b[detail::rep_off(r, bk, e, p.src1BlkStride, p.src1RepStride, es)], [](auto x, auto y) { return EXPR; });  \
            ++n;                                                                                                           \
        });                                                                                                                \
        detail::trace_vec<T>(c, api, n, g.repeat, loc, "repeat");                                                          \
    }                                                                                                                      \
    template <typename T, bool isSetMask = true>                                                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,    \
                     const int32_t repeatTimes, const BinaryRepeatParams& p, ASCX_LOC) {                                   \
        auto g = isSetMask ? detail::geom_cont<T>(#NAME, mask, repeatTimes, loc) : detail::geom_core<T>(#NAME, repeatTimes, loc); \
        NAME##_rep_<T>(#NAME, dst, src0, src1, g, p, loc);                                                                 \
    }                                                                                                                      \
    template <typename T, bool isSetMask = true>                                                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const uint64_t mask[], \
                     const int32_t repeatTimes, const BinaryRepeatParams& p, ASCX_LOC) {                                   \
        auto g = isSetMask ? detail::geom_bits<T>(#NAME, mask, repeatTimes, loc) : detail::geom_core<T>(#NAME, repeatTimes, loc); \
        NAME##_rep_<T>(#NAME, dst, src0, src1, g, p, loc);                                                                 \
    }

ASCX_EMU_BINARY(Add, x + y)
ASCX_EMU_BINARY(Sub, x - y)
ASCX_EMU_BINARY(Mul, x * y)
ASCX_EMU_BINARY(Div, x / y)
ASCX_EMU_BINARY(Max, detail::vmax(x, y))
ASCX_EMU_BINARY(Min, detail::vmin(x, y))
ASCX_EMU_BINARY(AddRelu, (x + y > 0 ? x + y : 0.0))
#undef ASCX_EMU_BINARY

// ---- unary ops and scalar ops (one source); EXPR uses x (source) and s (scalar)
#define ASCX_EMU_UNARY_BODY(NAME, EXPR, SCALAR_PARAM, SCALAR_INIT)                                                          \
    template <typename T>                                                                                                  \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src SCALAR_PARAM, const int32_t& count, ASCX_LOC) {    \
        const char* api = #NAME;                                                                                           \
        auto& c = ascx_emu::core(api, loc);                                                                                \
        if (count < 0) ascx_emu::fail(api, loc, "negative count %d", count);                                               \
        ascx_emu::local_check_vec(api, dst, loc);                                                                          \
        ascx_emu::local_check_vec(api, src, loc);                                                                          \
        T* d = dst.Ptr(api, 0, count, loc);                                                                                \
        const T* a = src.Ptr(api, 0, count, loc);                                                                          \
        SCALAR_INIT;                                                                                                       \
        detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)), \
                         {ascx_emu::tm::R(src, detail::nbytes<T>(count)), ascx_emu::tm::W(dst, detail::nbytes<T>(count))});   \
        for (int32_t i = 0; i < (ascx_emu::skip_data() ? 0 : count); ++i)                                                 \
            d[i] = detail::ew1<T>(a[i], ascx_sv, [](auto x, auto s) { (void)s; return EXPR; });                        \
        detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);                                           \
    }                                                                                                                      \
    template <typename T>                                                                                                  \
    inline void NAME##_rep_(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src SCALAR_PARAM,            \
                            const detail::RepGeom& g, const UnaryRepeatParams& p, SrcLoc loc) {                           \
        auto& c = ascx_emu::core(api, loc);                                                                                \
        T* d = detail::operand(api, dst, g, p.dstBlkStride, p.dstRepStride, loc);                                          \
        const T* a = detail::operand(api, src, g, p.srcBlkStride, p.srcRepStride, loc);                                    \
        const int64_t es = sizeof(T);                                                                                      \
        SCALAR_INIT;                                                                                                       \
        long long n = 0;                                                                                                   \
        detail::vec_acct(c, api, loc, g.repeat, false, 0,                                                                  \
                         {ascx_emu::tm::R(src, detail::extent<T>(g, p.srcBlkStride, p.srcRepStride)),                       \
                          ascx_emu::tm::W(dst, detail::extent<T>(g, p.dstBlkStride, p.dstRepStride))},                      \
                         {detail::bank_op(src, g, p.srcBlkStride, p.srcRepStride, false),                                    \
                          detail::bank_op(dst, g, p.dstBlkStride, p.dstRepStride, true)});                                   \
        detail::for_active(g, [&](int64_t r, int64_t bk, int64_t e) {                                                      \
            d[detail::rep_off(r, bk, e, p.dstBlkStride, p.dstRepStride, es)] = detail::ew1<T>(                            \
                a[detail::rep_off(r, bk, e, p.srcBlkStride, p.srcRepStride, es)], ascx_sv,                             \
                [](auto x, auto s) { (void)s; return EXPR; });                                                             \
            ++n;                                                                                                           \
        });                                                                                                                \
        detail::trace_vec<T>(c, api, n, g.repeat, loc, "repeat");                                                          \
    }                                                                                                                      \
    template <typename T, bool isSetMask = true>                                                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src SCALAR_PARAM, uint64_t mask, const int32_t repeatTimes, \
                     const UnaryRepeatParams& p, ASCX_LOC) {                                                               \
        auto g = isSetMask ? detail::geom_cont<T>(#NAME, mask, repeatTimes, loc) : detail::geom_core<T>(#NAME, repeatTimes, loc); \
        NAME##_rep_<T>(#NAME, dst, src ASCX_EMU_SCALAR_ARG_##SCALAR_INIT, g, p, loc);                                      \
    }                                                                                                                      \
    template <typename T, bool isSetMask = true>                                                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src SCALAR_PARAM, const uint64_t mask[],            \
                     const int32_t repeatTimes, const UnaryRepeatParams& p, ASCX_LOC) {                                    \
        auto g = isSetMask ? detail::geom_bits<T>(#NAME, mask, repeatTimes, loc) : detail::geom_core<T>(#NAME, repeatTimes, loc); \
        NAME##_rep_<T>(#NAME, dst, src ASCX_EMU_SCALAR_ARG_##SCALAR_INIT, g, p, loc);                                      \
    }

#define ASCX_EMU_NOSCALAR const T ascx_sv{}
#define ASCX_EMU_WITHSCALAR const T ascx_sv = static_cast<T>(scalarValue)
#define ASCX_EMU_SCALAR_ARG_ASCX_EMU_NOSCALAR
#define ASCX_EMU_SCALAR_ARG_ASCX_EMU_WITHSCALAR , scalarValue

#define ASCX_EMU_UNARY(NAME, EXPR) ASCX_EMU_UNARY_BODY(NAME, EXPR, , ASCX_EMU_NOSCALAR)
#define ASCX_EMU_SCALAR(NAME, EXPR) ASCX_EMU_UNARY_BODY(NAME, EXPR, ASCX_EMU_COMMA const ascx_emu::nondeduced_t<T>& scalarValue, ASCX_EMU_WITHSCALAR)
#define ASCX_EMU_COMMA ,

ASCX_EMU_UNARY(Exp, std::exp(x))
ASCX_EMU_UNARY(Ln, std::log(x))
ASCX_EMU_UNARY(Abs, std::fabs(x))
ASCX_EMU_UNARY(Sqrt, std::sqrt(x))
ASCX_EMU_UNARY(Rsqrt, 1.0 / std::sqrt(x))
ASCX_EMU_UNARY(Reciprocal, 1.0 / x)
ASCX_EMU_UNARY(Relu, (x > 0 ? x : 0.0))
ASCX_EMU_UNARY(Neg, -x)
ASCX_EMU_SCALAR(Adds, x + s)
ASCX_EMU_SCALAR(Muls, x * s)
ASCX_EMU_SCALAR(Maxs, detail::vmax(x, s))
ASCX_EMU_SCALAR(Mins, detail::vmin(x, s))
ASCX_EMU_SCALAR(LeakyRelu, (x >= 0 ? x : x * s))

// ---- Duplicate
template <typename T> inline void Duplicate(const LocalTensor<T>& dst, const ascx_emu::nondeduced_t<T>& scalarValue, const int32_t& count, ASCX_LOC) {
    const char* api = "Duplicate";
    auto& c = ascx_emu::core(api, loc);
    if (count < 0) ascx_emu::fail(api, loc, "negative count %d", count);
    ascx_emu::local_check_vec(api, dst, loc);
    T* d = dst.Ptr(api, 0, count, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::W(dst, detail::nbytes<T>(count))});
    for (int32_t i = 0; i < (ascx_emu::skip_data() ? 0 : count); ++i) d[i] = scalarValue;
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
// CreateVecIndex (public API, count form): dst[i] = firstValue + i for i < count; int16_t,
// half, int32_t and float on the A2 (the documented types; others do not compile). A float
// index is exact while firstValue + i is (|.| <= 2^24; half: 2^11); beyond, rounded once.
template <typename T> inline void CreateVecIndex(const LocalTensor<T>& dst, const ascx_emu::nondeduced_t<T>& firstValue, const uint32_t count, ASCX_LOC) {
    static_assert(std::is_same<T, int16_t>::value || std::is_same<T, int32_t>::value || std::is_same<T, float>::value ||
                      std::is_same<T, half>::value,
                  "ascx emulator: CreateVecIndex takes int16_t, half, int32_t or float (Atlas A2)");
    const char* api = "CreateVecIndex";
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    T* d = dst.Ptr(api, 0, count, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::W(dst, detail::nbytes<T>(count))});
    const double first = ascx_emu::to_d(firstValue);
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : count); ++i) d[i] = ascx_emu::convert<T>(first + static_cast<double>(i));
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const ascx_emu::nondeduced_t<T>& scalarValue, uint64_t mask, const int32_t repeatTimes, const uint16_t dstBlockStride,
                      const uint8_t dstRepeatStride, ASCX_LOC) {
    const char* api = "Duplicate";
    auto& c = ascx_emu::core(api, loc);
    auto g = isSetMask ? detail::geom_cont<T>(api, mask, repeatTimes, loc) : detail::geom_core<T>(api, repeatTimes, loc);
    T* d = detail::operand(api, dst, g, dstBlockStride, dstRepeatStride, loc);
    detail::vec_acct(c, api, loc, g.repeat, false, 0, {ascx_emu::tm::W(dst, detail::extent<T>(g, dstBlockStride, dstRepeatStride))});
    long long n = 0;
    detail::for_active(g, [&](int64_t r, int64_t bk, int64_t e) {
        d[detail::rep_off(r, bk, e, dstBlockStride, dstRepeatStride, sizeof(T))] = scalarValue;
        ++n;
    });
    detail::trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const ascx_emu::nondeduced_t<T>& scalarValue, const uint64_t mask[], const int32_t repeatTimes,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride, ASCX_LOC) {
    const char* api = "Duplicate";
    auto& c = ascx_emu::core(api, loc);
    auto g = isSetMask ? detail::geom_bits<T>(api, mask, repeatTimes, loc) : detail::geom_core<T>(api, repeatTimes, loc);
    T* d = detail::operand(api, dst, g, dstBlockStride, dstRepeatStride, loc);
    detail::vec_acct(c, api, loc, g.repeat, false, 0, {ascx_emu::tm::W(dst, detail::extent<T>(g, dstBlockStride, dstRepeatStride))});
    long long n = 0;
    detail::for_active(g, [&](int64_t r, int64_t bk, int64_t e) {
        d[detail::rep_off(r, bk, e, dstBlockStride, dstRepeatStride, sizeof(T))] = scalarValue;
        ++n;
    });
    detail::trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}

// ---- Cast
inline ascx_emu::Rnd to_rnd(RoundMode m) { return static_cast<ascx_emu::Rnd>(static_cast<int>(m)); }
template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& roundMode, const uint32_t count, ASCX_LOC) {
    const char* api = "Cast";
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    D* d = dst.Ptr(api, 0, count, loc);
    const S* a = src.Ptr(api, 0, count, loc);
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : count); ++i) d[i] = ascx_emu::convert<D>(ascx_emu::to_d(a[i]), to_rnd(roundMode));
    constexpr size_t big = sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S);
    detail::vec_acct(c, api, loc, static_cast<double>((count * big + 255) / 256), true, static_cast<double>(count * big),
                     {ascx_emu::tm::R(src, detail::nbytes<S>(count)), ascx_emu::tm::W(dst, detail::nbytes<D>(count))});
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_V, "Cast",
                         ascx_emu::ks("dtype", ascx_emu::type_name<D>()) + ascx_emu::ks("src_dtype", ascx_emu::type_name<S>()) +
                             ascx_emu::kv("elems", count) + ascx_emu::kv("repeats", static_cast<long long>((count * big + 255) / 256)) +
                             ascx_emu::kv("bytes", static_cast<long long>(count * big)) + ascx_emu::ks("form", "count"), loc);
}
// Repeat form: a repeat covers 256 / max(sizeof(D), sizeof(S)) elements; a "block" is 32 B
// of the wider type; strides are in 32 B units of each operand.
template <typename D, typename S, bool isSetMask = true>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& roundMode, uint64_t mask, const int32_t repeatTimes,
                 const UnaryRepeatParams& p, ASCX_LOC) {
    const char* api = "Cast";
    auto& c = ascx_emu::core(api, loc);
    constexpr int64_t big = sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S);
    ascx_emu::check_repeat(api, repeatTimes, loc);
    detail::RepGeom g{repeatTimes, 0, 0, static_cast<int>(big)};
    if (isSetMask) ascx_emu::mask_bits(api, mask, static_cast<int>(big), g.lo, g.hi, loc);
    else { g.lo = c.mask_lo; g.hi = big == 2 ? c.mask_hi : 0; }
    D* d = detail::operand(api, dst, g, p.dstBlkStride, p.dstRepStride, loc, big);
    const S* a = detail::operand(api, src, g, p.srcBlkStride, p.srcRepStride, loc, big);
    detail::vec_acct(c, api, loc, repeatTimes, false, 0,
                     {ascx_emu::tm::R(src, detail::extent<S>(g, p.srcBlkStride, p.srcRepStride, big)),
                      ascx_emu::tm::W(dst, detail::extent<D>(g, p.dstBlkStride, p.dstRepStride, big))});
    long long n = 0;
    detail::for_active(g, [&](int64_t r, int64_t bk, int64_t e) {
        int64_t so = (r * p.srcRepStride * 32 + bk * p.srcBlkStride * 32 * static_cast<int64_t>(sizeof(S)) / big) / static_cast<int64_t>(sizeof(S)) + e;
        int64_t dof = (r * p.dstRepStride * 32 + bk * p.dstBlkStride * 32 * static_cast<int64_t>(sizeof(D)) / big) / static_cast<int64_t>(sizeof(D)) + e;
        d[dof] = ascx_emu::convert<D>(ascx_emu::to_d(a[so]), to_rnd(roundMode));
        ++n;
    });
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_V, "Cast",
                         ascx_emu::ks("dtype", ascx_emu::type_name<D>()) + ascx_emu::ks("src_dtype", ascx_emu::type_name<S>()) +
                             ascx_emu::kv("elems", n) + ascx_emu::kv("repeats", repeatTimes) + ascx_emu::kv("bytes", n * big) +
                             ascx_emu::ks("form", "repeat"), loc);
}

// ---- Brcb: each repeat reads 8 consecutive src elements; element j fills dst block j.
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTimes, const BrcbRepeatParams& p, ASCX_LOC) {
    const char* api = "Brcb";
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::check_repeat(api, repeatTimes, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    const int64_t per = 32 / static_cast<int64_t>(sizeof(T));
    const T* a = src.Ptr(api, 0, static_cast<int64_t>(repeatTimes) * 8, loc);
    int64_t ext = repeatTimes ? (repeatTimes - 1) * p.dstRepStride * 32 + 7 * p.dstBlkStride * 32 + 32 : 0;
    T* d = reinterpret_cast<T*>(dst.BytePtr(api, 0, ext, loc));
    detail::vec_acct(c, api, loc, repeatTimes, false, 0, {ascx_emu::tm::R(src, detail::nbytes<T>(static_cast<int64_t>(repeatTimes) * 8)), ascx_emu::tm::W(dst, ext)});
    for (int64_t r = 0; r < (ascx_emu::skip_data() ? 0 : repeatTimes); ++r)
        for (int64_t j = 0; j < 8; ++j)
            for (int64_t e = 0; e < per; ++e) d[(r * p.dstRepStride * 32 + j * p.dstBlkStride * 32) / static_cast<int64_t>(sizeof(T)) + e] = a[r * 8 + j];
    detail::trace_vec<T>(c, api, static_cast<long long>(repeatTimes) * 8 * per, repeatTimes, loc, "repeat");
}

// ---- reductions (count form): dst[0] = result; ReduceMax with calIndex also writes the
// index of the first maximum into dst[1] (as an integer of sizeof(T) bytes).
namespace detail {
template <typename T> inline void store_index(T* slot, uint32_t idx) {
    if constexpr (sizeof(T) == 2) { uint16_t v = static_cast<uint16_t>(idx); std::memcpy(static_cast<void*>(slot), &v, 2); }
    else { uint32_t v = idx; std::memcpy(static_cast<void*>(slot), &v, 4); }
}
}  // namespace detail
template <typename T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal, const int32_t count, bool calIndex = false,
                      ASCX_LOC) {
    const char* api = "ReduceMax";
    auto& c = ascx_emu::core(api, loc);
    if (count <= 0) ascx_emu::fail(api, loc, "count %d must be positive", count);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    workLocal.Valid(api, loc);
    const T* a = src.Ptr(api, 0, count, loc);
    T* d = dst.Ptr(api, 0, calIndex ? 2 : 1, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(src, detail::nbytes<T>(count)), ascx_emu::tm::W(dst, detail::nbytes<T>(calIndex ? 2 : 1))});
    double best = ascx_emu::to_d(a[0]);
    uint32_t bi = 0;
    for (int32_t i = 1; i < (ascx_emu::skip_data() ? 0 : count); ++i) {
        double v = ascx_emu::to_d(a[i]);
        if (detail::wins(true, v, best)) { best = v; bi = static_cast<uint32_t>(i); }
    }
    d[0] = ascx_emu::convert<T>(best);
    if (calIndex) detail::store_index(&d[1], bi);
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
template <typename T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal, const int32_t count, bool calIndex = false,
                      ASCX_LOC) {
    const char* api = "ReduceMin";
    auto& c = ascx_emu::core(api, loc);
    if (count <= 0) ascx_emu::fail(api, loc, "count %d must be positive", count);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    workLocal.Valid(api, loc);
    const T* a = src.Ptr(api, 0, count, loc);
    T* d = dst.Ptr(api, 0, calIndex ? 2 : 1, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(src, detail::nbytes<T>(count)), ascx_emu::tm::W(dst, detail::nbytes<T>(calIndex ? 2 : 1))});
    double best = ascx_emu::to_d(a[0]);
    uint32_t bi = 0;
    for (int32_t i = 1; i < (ascx_emu::skip_data() ? 0 : count); ++i) {
        double v = ascx_emu::to_d(a[i]);
        if (detail::wins(false, v, best)) { best = v; bi = static_cast<uint32_t>(i); }
    }
    d[0] = ascx_emu::convert<T>(best);
    if (calIndex) detail::store_index(&d[1], bi);
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal, const int32_t count, ASCX_LOC) {
    const char* api = "ReduceSum";
    auto& c = ascx_emu::core(api, loc);
    if (count <= 0) ascx_emu::fail(api, loc, "count %d must be positive", count);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    workLocal.Valid(api, loc);
    const T* a = src.Ptr(api, 0, count, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(src, detail::nbytes<T>(count)), ascx_emu::tm::W(dst, detail::nbytes<T>(1))});
    float acc = 0.0f;  // float accumulation, rounded once to T
    for (int32_t i = 0; i < (ascx_emu::skip_data() ? 0 : count); ++i) acc += static_cast<float>(ascx_emu::to_d(a[i]));
    *dst.Ptr(api, 0, 1, loc) = ascx_emu::convert<T>(acc);
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}

// ---- per-repeat reductions. WholeReduceSum writes one value per repeat at
// dst[r * dstRepStride] (unit: one element). WholeReduceMax/Min write per ReduceOrder:
// VALUE_INDEX pairs (unit 2 elements), ONLY_VALUE (unit 1 element), ONLY_INDEX (uint32 unit).
namespace detail {
// `unit`: bytes of one repeat's result (the dstRepStride unit: one element, a value-index
// pair, or a uint32 index), so the hazard detector sees exactly the bytes written.
template <typename T, typename F>
inline void whole_reduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const RepGeom& g, int32_t dstRepStride,
                         int32_t srcBlkStride, int32_t srcRepStride, F&& finish, SrcLoc loc, int64_t unit = sizeof(T)) {
    auto& c = ascx_emu::core(api, loc);
    const T* a = operand(api, src, g, srcBlkStride, srcRepStride, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    vec_acct(c, api, loc, g.repeat, false, 0,
             {ascx_emu::tm::R(src, extent<T>(g, srcBlkStride, srcRepStride)),
              ascx_emu::tm::W(dst, g.repeat > 0 ? (g.repeat - 1) * static_cast<int64_t>(dstRepStride) * unit + unit : 0)});
    std::vector<std::pair<double, uint32_t>> items;
    long long n = 0;
    for (int32_t r = 0; r < (ascx_emu::skip_data() ? 0 : g.repeat); ++r) {
        items.clear();
        RepGeom one = g;
        one.repeat = 1;
        for_active(one, [&](int64_t, int64_t bk, int64_t e) {
            int64_t per = 32 / g.esize;
            items.emplace_back(ascx_emu::to_d(a[rep_off(r, bk, e, srcBlkStride, srcRepStride, sizeof(T))]), static_cast<uint32_t>(bk * per + e));
        });
        n += static_cast<long long>(items.size());
        finish(r, items);
    }
    trace_vec<T>(c, api, n, g.repeat, loc, "repeat");
}
}  // namespace detail

template <typename T, bool isSetMask = true>
inline void WholeReduceSum_(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, const detail::RepGeom& g, int32_t dstRepStride,
                            int32_t srcBlkStride, int32_t srcRepStride, SrcLoc loc) {
    detail::whole_reduce(api, dst, src, g, dstRepStride, srcBlkStride, srcRepStride,
                         [&](int32_t r, const std::vector<std::pair<double, uint32_t>>& it) {
                             float acc = 0.0f;
                             for (auto& p : it) acc += static_cast<float>(p.first);
                             *dst.Ptr(api, static_cast<int64_t>(r) * dstRepStride, 1, loc) = ascx_emu::convert<T>(acc);
                         }, loc);
}
template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTimes, const int32_t dstRepStride,
                           const int32_t srcBlkStride, const int32_t srcRepStride, ASCX_LOC) {
    auto g = isSetMask ? detail::geom_cont<T>("WholeReduceSum", static_cast<uint64_t>(mask), repeatTimes, loc) : detail::geom_core<T>("WholeReduceSum", repeatTimes, loc);
    WholeReduceSum_<T>("WholeReduceSum", dst, src, g, dstRepStride, srcBlkStride, srcRepStride, loc);
}
template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeatTimes,
                           const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, ASCX_LOC) {
    auto g = isSetMask ? detail::geom_bits<T>("WholeReduceSum", mask, repeatTimes, loc) : detail::geom_core<T>("WholeReduceSum", repeatTimes, loc);
    WholeReduceSum_<T>("WholeReduceSum", dst, src, g, dstRepStride, srcBlkStride, srcRepStride, loc);
}

template <typename T>
inline void WholeReduceMinMax_(const char* api, bool is_max, const LocalTensor<T>& dst, const LocalTensor<T>& src, const detail::RepGeom& g,
                               int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, ReduceOrder order, SrcLoc loc) {
    detail::whole_reduce(api, dst, src, g, dstRepStride, srcBlkStride, srcRepStride,
                         [&](int32_t r, const std::vector<std::pair<double, uint32_t>>& it) {
                             if (it.empty()) return;
                             auto best = it[0];
                             for (auto& p : it)
                                 if (detail::wins(is_max, p.first, best.first)) best = p;
                             T v = ascx_emu::convert<T>(best.first);
                             if (order == ReduceOrder::ORDER_ONLY_VALUE) {
                                 *dst.Ptr(api, static_cast<int64_t>(r) * dstRepStride, 1, loc) = v;
                             } else if (order == ReduceOrder::ORDER_ONLY_INDEX) {
                                 uint32_t idx = best.second;
                                 std::memcpy(dst.BytePtr(api, static_cast<int64_t>(r) * dstRepStride * 4, 4, loc), &idx, 4);
                             } else {
                                 T* pr = dst.Ptr(api, static_cast<int64_t>(r) * dstRepStride * 2, 2, loc);
                                 int vi = order == ReduceOrder::ORDER_VALUE_INDEX ? 0 : 1;
                                 pr[vi] = v;
                                 detail::store_index(&pr[1 - vi], best.second);
                             }
                         }, loc,
                         order == ReduceOrder::ORDER_ONLY_VALUE ? static_cast<int64_t>(sizeof(T))
                         : order == ReduceOrder::ORDER_ONLY_INDEX ? int64_t{4} : static_cast<int64_t>(2 * sizeof(T)));
}
#define ASCX_EMU_WHOLE_MM(NAME, ISMAX)                                                                                     \
    template <typename T, bool isSetMask = true>                                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTimes, \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                  \
                     ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, ASCX_LOC) {                                       \
        auto g = isSetMask ? detail::geom_cont<T>(#NAME, static_cast<uint64_t>(mask), repeatTimes, loc) : detail::geom_core<T>(#NAME, repeatTimes, loc); \
        WholeReduceMinMax_<T>(#NAME, ISMAX, dst, src, g, dstRepStride, srcBlkStride, srcRepStride, order, loc);           \
    }                                                                                                                     \
    template <typename T, bool isSetMask = true>                                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeatTimes, \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                  \
                     ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, ASCX_LOC) {                                       \
        auto g = isSetMask ? detail::geom_bits<T>(#NAME, mask, repeatTimes, loc) : detail::geom_core<T>(#NAME, repeatTimes, loc); \
        WholeReduceMinMax_<T>(#NAME, ISMAX, dst, src, g, dstRepStride, srcBlkStride, srcRepStride, order, loc);           \
    }
ASCX_EMU_WHOLE_MM(WholeReduceMax, true)
ASCX_EMU_WHOLE_MM(WholeReduceMin, false)
#undef ASCX_EMU_WHOLE_MM

// ---- Compare / Select (count form). Compare writes one bit per element (LSB first) into
// a uint8_t mask tensor; Select picks src0 where the bit is 1, else src1.
enum class CMPMODE { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode, uint32_t count, ASCX_LOC) {
    const char* api = "Compare";
    auto& c = ascx_emu::core(api, loc);
    if ((count * sizeof(T)) % 256 != 0) ascx_emu::fail(api, loc, "count %u * sizeof(T) must be a multiple of 256 bytes", count);
    ascx_emu::local_check_vec(api, dst, loc);
    const T* a = src0.Ptr(api, 0, count, loc);
    const T* b = src1.Ptr(api, 0, count, loc);
    uint8_t* d = dst.BytePtr(api, 0, (count + 7) / 8, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(src0, detail::nbytes<T>(count)), ascx_emu::tm::R(src1, detail::nbytes<T>(count)),
                      ascx_emu::tm::W(dst, (count + 7) / 8)});
    std::memset(d, 0, (count + 7) / 8);
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : count); ++i) {
        double x = ascx_emu::to_d(a[i]), y = ascx_emu::to_d(b[i]);
        bool r = mode == CMPMODE::LT ? x < y : mode == CMPMODE::GT ? x > y : mode == CMPMODE::EQ ? x == y
                 : mode == CMPMODE::LE ? x <= y : mode == CMPMODE::GE ? x >= y : x != y;
        if (r) d[i / 8] = static_cast<uint8_t>(d[i / 8] | (1u << (i % 8)));
    }
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,
                   uint32_t count, ASCX_LOC) {
    const char* api = "Select";
    auto& c = ascx_emu::core(api, loc);
    (void)selMode;
    ascx_emu::local_check_vec(api, dst, loc);
    const uint8_t* m = selMask.BytePtr(api, 0, (count + 7) / 8, loc);
    const T* a = src0.Ptr(api, 0, count, loc);
    const T* b = src1.Ptr(api, 0, count, loc);
    T* d = dst.Ptr(api, 0, count, loc);
    detail::vec_acct(c, api, loc, static_cast<double>(detail::repeats_for<T>(count)), true, static_cast<double>(detail::nbytes<T>(count)),
                     {ascx_emu::tm::R(selMask, (count + 7) / 8), ascx_emu::tm::R(src0, detail::nbytes<T>(count)),
                      ascx_emu::tm::R(src1, detail::nbytes<T>(count)), ascx_emu::tm::W(dst, detail::nbytes<T>(count))});
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : count); ++i) d[i] = ((m[i / 8] >> (i % 8)) & 1u) ? a[i] : b[i];
    detail::trace_vec<T>(c, api, count, detail::repeats_for<T>(count), loc);
}

// ================================================================ cube
// Fractal layouts (C0 = 32 / sizeof(input), 16 rows per fractal):
//  L0A "Zz": A[M,K] element (m,k) at ((m/16)*K1 + k/C0)*16*C0 + (m%16)*C0 + k%C0, K1 = ceil(K/C0)
//  L0B "Zn": B[K,N] element (k,n) at ((k/C0)*N1 + n/16)*16*C0 + (n%16)*C0 + k%C0,  N1 = ceil(N/16)
//  L0C "Nz": C[M,N] element (m,n) at ((n/16)*M1p + m)*16 + n%16 ... i.e. ((n/16)*M16 + m)*16 + n%16,
//           M16 = ceil(M/16)*16.
// LoadData (2D): repeat r copies one 512 B fractal from src fractal (startIndex + r*srcStride)
// to dst fractal r*(dstGap+1); with ifTranspose the 16x16 (16-bit) fractal is transposed.
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p, ASCX_LOC) {
    const char* api = "LoadData";
    auto& c = ascx_emu::core(api, loc);
    dst.Valid(api, loc);
    src.Valid(api, loc);
    if (dst.scope() != ascx_emu::SC_L0A && dst.scope() != ascx_emu::SC_L0B)
        ascx_emu::fail(api, loc, "LoadData destination must be in L0A (A2) or L0B (B2), got %s", ascx_emu::scope_name(dst.scope()));
    if (src.scope() != ascx_emu::SC_L1) ascx_emu::fail(api, loc, "LoadData source must be in L1 (A1/B1), got %s", ascx_emu::scope_name(src.scope()));
    ascx_emu::check_local_align(api, dst.scope(), dst.addr(), loc);
    ascx_emu::check_local_align(api, src.scope(), src.addr(), loc);
    if (p.ifTranspose && sizeof(T) != 2) ascx_emu::fail(api, loc, "ifTranspose is only supported for 16-bit types here");
    const int64_t F = 512;
    if (p.repeatTimes > 0)
        ascx_emu::account(c, PIPE_MTE1, api, loc, ascx_emu::tm::load_l0(static_cast<double>(p.repeatTimes * F), dst.scope() == ascx_emu::SC_L0B),
                          {ascx_emu::tm::Acc{src.scope(), static_cast<int64_t>(src.addr()) + p.startIndex * F,
                                             static_cast<int64_t>(src.addr()) + (p.startIndex + (p.repeatTimes - 1) * p.srcStride + 1) * F, false},
                           ascx_emu::tm::W(dst, ((p.repeatTimes - 1) * (p.dstGap + 1) + 1) * F)});
    for (int64_t r = 0; r < (ascx_emu::skip_data() ? 0 : p.repeatTimes); ++r) {
        int64_t sf = p.startIndex + r * p.srcStride, df = r * (p.dstGap + 1);
        const uint8_t* s = src.BytePtr(api, sf * F, F, loc);
        uint8_t* d = dst.BytePtr(api, df * F, F, loc);
        if (!p.ifTranspose) std::memcpy(d, s, F);
        else {
            const uint16_t* s16 = reinterpret_cast<const uint16_t*>(s);
            uint16_t tmp[256];
            for (int i = 0; i < 16; ++i)
                for (int j = 0; j < 16; ++j) tmp[j * 16 + i] = s16[i * 16 + j];
            std::memcpy(d, tmp, F);
        }
    }
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_MTE1, "LoadData",
                         ascx_emu::copy_extra("L1", ascx_emu::scope_name(dst.scope()), ascx_emu::type_name<T>(), p.repeatTimes * F,
                                              p.repeatTimes * F / static_cast<long long>(sizeof(T))) + ascx_emu::kv("fractals", p.repeatTimes) +
                             ascx_emu::kv("transpose", p.ifTranspose ? 1 : 0), loc);
}

// Mmad: C[m,n] (+)= A[m,k] * B[k,n]; C accumulates in float (int32 for int8 inputs).
// cmatrixInitVal = true: C = A*B; false: C += A*B. The bias form (below: a C2 tensor, the bias
// table) gives C = A*B + bias[n], each row of C starting from the bias vector.
namespace detail {
template <typename DstT, typename SrcT, typename SrcBT, typename BiasT>
inline void mmad_impl(const LocalTensor<DstT>& dst, const LocalTensor<SrcT>& fm, const LocalTensor<SrcBT>& filter,
                      const LocalTensor<BiasT>* bias, const MmadParams& p, SrcLoc loc) {
    const char* api = "Mmad";
    auto& c = ascx_emu::core(api, loc);
    dst.Valid(api, loc);
    fm.Valid(api, loc);
    filter.Valid(api, loc);
    if (fm.scope() != ascx_emu::SC_L0A) ascx_emu::fail(api, loc, "left matrix must be in L0A (A2), got %s", ascx_emu::scope_name(fm.scope()));
    if (filter.scope() != ascx_emu::SC_L0B) ascx_emu::fail(api, loc, "right matrix must be in L0B (B2), got %s", ascx_emu::scope_name(filter.scope()));
    if (dst.scope() != ascx_emu::SC_L0C) ascx_emu::fail(api, loc, "result must be in L0C (CO1), got %s", ascx_emu::scope_name(dst.scope()));
    ascx_emu::check_local_align(api, ascx_emu::SC_L0A, fm.addr(), loc);
    ascx_emu::check_local_align(api, ascx_emu::SC_L0B, filter.addr(), loc);
    ascx_emu::check_local_align(api, ascx_emu::SC_L0C, dst.addr(), loc);
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) ascx_emu::fail(api, loc, "m=%u n=%u k=%u: each must be <= 4095", p.m, p.n, p.k);
    if (!bias && (p.isBias || p.cmatrixSource))
        ascx_emu::fail(api, loc, "isBias / cmatrixSource need the bias form Mmad(dst, fm, filter, bias, params) with the bias in C2 "
                       "(the bias table)");
    if (bias) {
        bias->Valid(api, loc);
        if (bias->scope() != ascx_emu::SC_BT)
            ascx_emu::fail(api, loc, "the bias must be in the bias table (C2), got %s", ascx_emu::scope_name(bias->scope()));
    }
    const int64_t C0 = 32 / static_cast<int64_t>(sizeof(SrcT));
    const int64_t M1 = (p.m + 15) / 16, K1 = (p.k + C0 - 1) / C0, N1 = (p.n + 15) / 16, M16 = M1 * 16;
    const SrcT* A = fm.Ptr(api, 0, M1 * K1 * 16 * C0, loc);
    const SrcBT* B = filter.Ptr(api, 0, K1 * N1 * 16 * C0, loc);
    DstT* Cm = dst.Ptr(api, 0, N1 * M16 * 16, loc);
    const BiasT* bv = bias ? bias->Ptr(api, 0, p.n, loc) : nullptr;
    const bool init = bias || p.cmatrixInitVal;
    ascx_emu::account(c, PIPE_M, api, loc, ascx_emu::tm::mmad(static_cast<double>(M1 * N1 * K1), sizeof(SrcT) == 4),
                      {ascx_emu::tm::R(fm, M1 * K1 * 16 * C0 * static_cast<int64_t>(sizeof(SrcT))),
                       ascx_emu::tm::R(filter, K1 * N1 * 16 * C0 * static_cast<int64_t>(sizeof(SrcBT))),
                       bias ? ascx_emu::tm::R(*bias, p.n * static_cast<int64_t>(sizeof(BiasT))) : ascx_emu::tm::Acc{0, 0, 0, false},
                       ascx_emu::tm::Acc{dst.scope(), static_cast<int64_t>(dst.addr()),
                                         static_cast<int64_t>(dst.addr()) + (init ? 0 : N1 * M16 * 16 * static_cast<int64_t>(sizeof(DstT))), false},
                       ascx_emu::tm::W(dst, N1 * M16 * 16 * static_cast<int64_t>(sizeof(DstT)))});
    // The cube multiplies whole fractals: K is padded to K1 * C0 and the padding of A (L0A)
    // and B (L0B) takes part in the sum. The emulator sums k < p.k only, which equals the
    // device's result only when every padded product is exactly 0 (e.g. Nd2Nz zero-fills A's
    // last C0 group, but B's padding rows must be zeroed by the kernel, InitConstValue):
    // refuse anything else, such as never-written (NaN) padding.
    for (int64_t k = p.k; k < (ascx_emu::skip_data() ? p.k : K1 * C0); ++k)
        for (int64_t n = 0; n < p.n; ++n) {
            double bv = ascx_emu::to_d(B[((k / C0) * N1 + n / 16) * 16 * C0 + (n % 16) * C0 + k % C0]);
            for (int64_t m = 0; m < p.m; ++m) {
                double prod = ascx_emu::to_d(A[(m / 16) * K1 * 16 * C0 + (m % 16) * C0 + (k / C0) * 16 * C0 + k % C0]) * bv;
                if (!(prod == 0.0))
                    ascx_emu::fail(api, loc, "k=%u is not a multiple of %lld and the K padding contributes %g at (m=%lld, n=%lld, k=%lld): "
                                   "the cube sums whole fractals, so zero the padding (InitConstValue) first", p.k, static_cast<long long>(C0),
                                   prod, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k));
            }
        }
    std::vector<double> bcol(static_cast<size_t>(p.k));
    for (int64_t n = 0; n < (ascx_emu::skip_data() ? 0 : p.n); ++n) {
        for (int64_t k = 0; k < p.k; ++k) bcol[k] = ascx_emu::to_d(B[((k / C0) * N1 + n / 16) * 16 * C0 + (n % 16) * C0 + k % C0]);
        for (int64_t m = 0; m < p.m; ++m) {
            double acc = bv ? ascx_emu::to_d(bv[n]) : 0.0;
            const SrcT* arow = A + (m / 16) * K1 * 16 * C0 + (m % 16) * C0;
            for (int64_t k = 0; k < p.k; ++k) acc += ascx_emu::to_d(arow[(k / C0) * 16 * C0 + k % C0]) * bcol[k];
            DstT& o = Cm[((n / 16) * M16 + m) * 16 + n % 16];
            if (init) o = ascx_emu::convert<DstT>(acc);
            else o = ascx_emu::convert<DstT>(ascx_emu::to_d(o) + acc);
        }
    }
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_M, "Mmad",
                         ascx_emu::ks("dtype", ascx_emu::type_name<SrcT>()) + ascx_emu::ks("acc_dtype", ascx_emu::type_name<DstT>()) +
                             ascx_emu::kv("m", p.m) + ascx_emu::kv("n", p.n) + ascx_emu::kv("k", p.k) + ascx_emu::kv("fractals", M1 * N1 * K1) +
                             ascx_emu::kv("init", init ? 1 : 0) + ascx_emu::kv("bias", bias ? 1 : 0), loc);
}
}  // namespace detail
template <typename DstT, typename SrcT, typename SrcBT>
inline void Mmad(const LocalTensor<DstT>& dst, const LocalTensor<SrcT>& fm, const LocalTensor<SrcBT>& filter, const MmadParams& p, ASCX_LOC) {
    detail::mmad_impl<DstT, SrcT, SrcBT, DstT>(dst, fm, filter, nullptr, p, loc);
}
// The bias form: the bias vector (n elements of the accumulator type) in C2, the bias table.
template <typename DstT, typename SrcT, typename SrcBT, typename BiasT>
inline void Mmad(const LocalTensor<DstT>& dst, const LocalTensor<SrcT>& fm, const LocalTensor<SrcBT>& filter, const LocalTensor<BiasT>& bias,
                 const MmadParams& p, ASCX_LOC) {
    detail::mmad_impl<DstT, SrcT, SrcBT, BiasT>(dst, fm, filter, &bias, p, loc);
}

// Fixpipe L0C -> GM. ROW_MAJOR (NZ2ND): dst[i*dstNdStride + m*dstStride + n] =
//   q(src[i*srcNdStride*1024B + ((n/16)*srcStride + m)*16 + n%16]) for m < mSize, n < nSize.
// NZ: dst keeps the NZ layout, column group j at j*dstStride*32 B.
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p, ASCX_LOC) {
    const char* api = "Fixpipe";
    auto& c = ascx_emu::core(api, loc);
    src.Valid(api, loc);
    if (src.scope() != ascx_emu::SC_L0C) ascx_emu::fail(api, loc, "source must be in L0C (CO1), got %s", ascx_emu::scope_name(src.scope()));
    ascx_emu::check_local_align(api, ascx_emu::SC_L0C, src.addr(), loc);
    bool to16 = ascx_emu::is_f16_like<T>::value;
    if (std::is_same<U, float>::value && to16) {
        bool ok = (std::is_same<T, half>::value && p.quantPre == QuantMode_t::F322F16) ||
                  (std::is_same<T, bfloat16_t>::value && p.quantPre == QuantMode_t::F322BF16);
        if (!ok) ascx_emu::fail(api, loc, "float L0C to %s GM needs quantPre = QuantMode_t::%s", ascx_emu::type_name<T>(),
                                std::is_same<T, half>::value ? "F322F16" : "F322BF16");
    }
    if (std::is_same<U, T>::value && p.quantPre != QuantMode_t::NoQuant)
        ascx_emu::fail(api, loc, "quantPre must be NoQuant when the GM type equals the L0C type");
    if (p.nSize == 0 || p.mSize == 0) ascx_emu::fail(api, loc, "nSize/mSize must be non-zero (got %u, %u)", p.nSize, p.mSize);
    if (p.srcStride < p.mSize && config.format == CO2Layout::ROW_MAJOR)
        ascx_emu::fail(api, loc, "srcStride %u (the M extent of the NZ source, in 16-row units of C0) is smaller than mSize %u", p.srcStride, p.mSize);
    int64_t nd = p.ndNum ? p.ndNum : 1;
    {
        int64_t ext = ((nd - 1) * p.srcNdStride * 1024 / static_cast<int64_t>(sizeof(U)) + ((p.nSize - 1) / 16 * p.srcStride + p.mSize - 1) * 16 + 16) *
                      static_cast<int64_t>(sizeof(U));
        double ob = static_cast<double>(nd * p.mSize * p.nSize) * sizeof(T);
        if (config.format == CO2Layout::ROW_MAJOR && nd == 1)
            ascx_emu::gm_blocks(c, dst, p.nSize * sizeof(T), p.mSize, static_cast<uint64_t>(p.dstStride) * sizeof(T));
        else
            ascx_emu::tm::gm_touch(c.tm, reinterpret_cast<uintptr_t>(dst.address_()), static_cast<uint64_t>(ob));
        ascx_emu::account(c, PIPE_FIX, api, loc, ascx_emu::tm::fixpipe(ob), {ascx_emu::tm::R(src, ext)});
    }
    for (int64_t i = 0; i < (ascx_emu::skip_data() ? 0 : nd); ++i) {
        int64_t sbase = i * p.srcNdStride * 1024 / static_cast<int64_t>(sizeof(U));
        for (int64_t m = 0; m < p.mSize; ++m)
            for (int64_t n = 0; n < p.nSize; ++n) {
                double v = ascx_emu::to_d(*src.Ptr(api, sbase + ((n / 16) * p.srcStride + m) * 16 + n % 16, 1, loc));
                if (p.reluEn && v < 0) v = 0;
                int64_t di;
                if (config.format == CO2Layout::ROW_MAJOR) di = i * p.dstNdStride + m * static_cast<int64_t>(p.dstStride) + n;
                else di = (n / 16) * static_cast<int64_t>(p.dstStride) * 32 / static_cast<int64_t>(sizeof(T)) + m * 16 + n % 16;
                dst.Check(api, static_cast<uint64_t>(di), 1, loc);
                T* d = dst.address_() + di;
                if (c.atomic_add) *d = ascx_emu::convert<T>(ascx_emu::to_d(*d) + v);
                else *d = ascx_emu::convert<T>(v);
            }
    }
    long long elems = nd * p.mSize * p.nSize;
    if (c.tracing) ascx_emu::trace_emit(c, PIPE_FIX, "Fixpipe",
                         ascx_emu::copy_extra("L0C", "GM", ascx_emu::type_name<T>(), elems * static_cast<long long>(sizeof(T)), elems) +
                             ascx_emu::ks("src_dtype", ascx_emu::type_name<U>()) + ascx_emu::kv("m", p.mSize) + ascx_emu::kv("n", p.nSize), loc);
}

}  // namespace AscendC
