// ascx emulator: high-level APIs SoftMax / SimpleSoftMax (with SoftMaxTiling) and LayerNorm
// (with LayerNormTiling), plus the host-side tiling helpers sample hosts call to fill them.
// Clean-room implementation written for the ascx project from the public Ascend C API
// documentation (Apache-2.0): the documented formulas (row-wise over the last axis), tensor
// shapes and tiling struct field names. The tiling fields the emulator reads are the shape
// ones (srcM/srcK, bLength/sLength/hLength/originalHLength); the others are carried for
// source compatibility. Results are computed in double from the inputs and rounded once.
#pragma once
#include <vector>

#include "ops.h"

namespace AscendC {
namespace tiling {
struct SoftMaxTiling {
    uint32_t srcM = 0, srcK = 0, srcSize = 0;
    uint32_t outMaxM = 0, outMaxK = 0, outMaxSize = 0;
    uint32_t splitM = 0, splitK = 0, splitSize = 0;
    uint32_t reduceM = 0, reduceK = 0, reduceSize = 0;
    uint32_t rangeM = 0, tailM = 0, tailSplitSize = 0, tailReduceSize = 0;
};
struct LayerNormTiling {
    uint32_t bLength = 0, sLength = 0, hLength = 0, originalHLength = 0;
    uint32_t inputXSize = 0, meanVarSize = 0, numberOfTmpBuf = 0;
    uint32_t meanTmpTensorPos = 0, meanTmpTensorSize = 0, varianceTmpTensorPos = 0, varianceTmpTensorSize = 0;
    uint32_t tmpBufSize = 0, oneTmpSize = 0, firstTmpStartPos = 0, secondTmpStartPos = 0, thirdTmpStartPos = 0;
    uint32_t loopRound = 0, inputRoundSize = 0, inputTailSize = 0, inputTailPos = 0;
    uint32_t meanVarRoundSize = 0, meanVarTailSize = 0, meanVarTailPos = 0;
    uint32_t bshCurLength = 0, bsCurLength = 0;
    float lastDimValueBack = 0.0f;
};
}  // namespace tiling
using tiling::LayerNormTiling;
using tiling::SoftMaxTiling;

struct SoftMaxShapeInfo {
    uint32_t srcM = 0, srcK = 0, oriSrcM = 0, oriSrcK = 0;
};
struct SoftmaxConfig {
    bool isCheckTiling = true;
    uint32_t oriSrcM = 0, oriSrcK = 0;
};
inline constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0};

namespace detail {
struct SmShape { uint32_t m, k, ok; };
// Prices a high-level API as the basic vector instructions its documented algorithm issues
// over `elems` elements of T: one instruction per (class, pass), `rows` per-row results.
// Which instructions is our reading of the public formulas (docs/timing.md); the cost of each
// is the basic instruction's.
struct HlStep { int cls; bool per_row; };
template <typename T>
inline void hl_acct(ascx_emu::CoreState& c, const char* api, SrcLoc loc, int64_t elems, int64_t rows, std::initializer_list<HlStep> steps,
                    std::initializer_list<ascx_emu::tm::Acc> acc) {
    bool first = true;
    for (const HlStep& st : steps) {
        const int64_t n = st.per_row ? rows : elems;
        ascx_emu::account(c, PIPE_V, api, loc, ascx_emu::tm::vec(st.cls, static_cast<double>(repeats_for<T>(n)), true, static_cast<double>(nbytes<T>(n))),
                          first ? acc : std::initializer_list<ascx_emu::tm::Acc>{});
        first = false;
    }
}
namespace tmc = ascx_emu::tm;
template <typename T>
inline SmShape softmax_shape(const char* api, const SoftMaxTiling& tiling, const SoftMaxShapeInfo& info, SrcLoc loc) {
    SmShape s{info.srcM ? info.srcM : tiling.srcM, info.srcK ? info.srcK : tiling.srcK, 0};
    s.ok = info.oriSrcK ? info.oriSrcK : s.k;
    if (s.m == 0 || s.k == 0) ascx_emu::fail(api, loc, "shape is empty: give srcM/srcK in SoftMaxShapeInfo or in the tiling (SoftMaxTilingFunc)");
    if (info.srcK && tiling.srcK && (tiling.srcK != info.srcK || (tiling.srcM && tiling.srcM != info.srcM)))
        ascx_emu::fail(api, loc, "the tiling was computed for [%u, %u] but the shape info says [%u, %u]", tiling.srcM, tiling.srcK, info.srcM, info.srcK);
    if ((s.k * sizeof(T)) % 32 != 0)
        ascx_emu::fail(api, loc, "srcK %u: the last axis of %s must span a multiple of 32 bytes (pad it; give oriSrcK for the real length)", s.k,
                       ascx_emu::type_name<T>());
    if (s.ok > s.k) ascx_emu::fail(api, loc, "oriSrcK %u exceeds srcK %u", s.ok, s.k);
    return s;
}
// Row-wise softmax of src [m, k] over its first `ok` columns: dst = exp(x - max) / sum; the
// row max and sum are broadcast to a 32-byte block per row of maxT / sumT; dst padding
// columns [ok, k) are set to 0.
template <typename T, typename S>
inline void softmax_rows(const char* api, const LocalTensor<T>& dst, const LocalTensor<S>& sumT, const LocalTensor<S>& maxT, const LocalTensor<T>& src,
                         const SmShape& s, SrcLoc loc) {
    auto& c = ascx_emu::core(api, loc);
    ascx_emu::local_check_vec(api, dst, loc);
    ascx_emu::local_check_vec(api, src, loc);
    ascx_emu::local_check_vec(api, sumT, loc);
    ascx_emu::local_check_vec(api, maxT, loc);
    const int64_t per = 32 / static_cast<int64_t>(sizeof(S)), n = static_cast<int64_t>(s.m) * s.k;
    const T* x = src.Ptr(api, 0, n, loc);
    std::vector<double> row(s.k);
    T* d = dst.Ptr(api, 0, n, loc);
    S* sm = sumT.Ptr(api, 0, s.m * per, loc);
    S* mx = maxT.Ptr(api, 0, s.m * per, loc);
    // reduce max, subtract, exp, reduce sum, divide, and the two per-row broadcasts
    hl_acct<T>(c, api, loc, n, static_cast<int64_t>(s.m) * per,
               {{tmc::VC_REDUCE, false}, {tmc::VC_SIMPLE, false}, {tmc::VC_TRANSC, false}, {tmc::VC_REDUCE, false}, {tmc::VC_TRANSC, false},
                {tmc::VC_SIMPLE, true}, {tmc::VC_SIMPLE, true}},
               {tmc::R(src, nbytes<T>(n)), tmc::W(dst, nbytes<T>(n)), tmc::W(sumT, nbytes<S>(s.m * per)), tmc::W(maxT, nbytes<S>(s.m * per))});
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : s.m); ++i) {
        double m = -INFINITY, sum = 0;
        for (uint32_t j = 0; j < s.ok; ++j) m = std::max(m, ascx_emu::to_d(x[i * s.k + j]));
        for (uint32_t j = 0; j < s.ok; ++j) sum += (row[j] = std::exp(ascx_emu::to_d(x[i * s.k + j]) - m));
        for (uint32_t j = 0; j < s.k; ++j) d[i * s.k + j] = j < s.ok ? ascx_emu::convert<T>(row[j] / sum) : T(0);
        for (int64_t e = 0; e < per; ++e) {
            sm[i * per + e] = ascx_emu::convert<S>(sum);
            mx[i * per + e] = ascx_emu::convert<S>(m);
        }
    }
    trace_vec<T>(c, api, n, repeats_for<T>(n) * 7, loc);  // reducemax, sub, exp, reducesum, div, 2 broadcasts
}
}  // namespace detail

// SoftMax over the last axis of src [srcM, srcK]; sumTensor / maxTensor hold [srcM, 32 B].
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASCX_LOC) {
    static_assert(!isDataFormatNZ, "SoftMax: the NZ data format (isDataFormatNZ = true) is not emulated");
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "SoftMax: T must be half or float");
    detail::softmax_rows("SoftMax", dstTensor, sumTensor, maxTensor, srcTensor, detail::softmax_shape<T>("SoftMax", tiling, softmaxShapeInfo, loc), loc);
}
// half data with float sum / max.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor, const LocalTensor<float>& maxTensor,
                    const LocalTensor<half>& srcTensor, const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASCX_LOC) {
    static_assert(!isDataFormatNZ, "SoftMax: the NZ data format (isDataFormatNZ = true) is not emulated");
    detail::softmax_rows("SoftMax", dstTensor, sumTensor, maxTensor, srcTensor, detail::softmax_shape<half>("SoftMax", tiling, softmaxShapeInfo, loc), loc);
}
// Forms with a caller-provided temporary buffer (checked for existence; not needed here).
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASCX_LOC) {
    sharedTmpBuffer.Valid("SoftMax", loc);
    SoftMax<T, isReuseSource, isBasicBlock, isDataFormatNZ, config>(dstTensor, sumTensor, maxTensor, srcTensor, tiling, softmaxShapeInfo, loc);
}

// SimpleSoftMax: dst = exp(src - max) / sum with given per-row max / sum ([m, 32 B] each).
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor, const LocalTensor<T>& inMaxTensor,
                          const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, ASCX_LOC) {
    static_assert(!isDataFormatNZ, "SimpleSoftMax: the NZ data format is not emulated");
    const char* api = "SimpleSoftMax";
    auto& c = ascx_emu::core(api, loc);
    auto s = detail::softmax_shape<T>(api, tiling, softmaxShapeInfo, loc);
    ascx_emu::local_check_vec(api, dstTensor, loc);
    const int64_t per = 32 / static_cast<int64_t>(sizeof(T)), n = static_cast<int64_t>(s.m) * s.k;
    const T* x = srcTensor.Ptr(api, 0, n, loc);
    const T* sm = inSumTensor.Ptr(api, 0, s.m * per, loc);
    const T* mx = inMaxTensor.Ptr(api, 0, s.m * per, loc);
    T* d = dstTensor.Ptr(api, 0, n, loc);
    // subtract the row max, exp, divide by the row sum
    detail::hl_acct<T>(c, api, loc, n, s.m,
                       {{detail::tmc::VC_SIMPLE, false}, {detail::tmc::VC_TRANSC, false}, {detail::tmc::VC_TRANSC, false}},
                       {detail::tmc::R(srcTensor, detail::nbytes<T>(n)), detail::tmc::R(inSumTensor, detail::nbytes<T>(s.m * per)),
                        detail::tmc::R(inMaxTensor, detail::nbytes<T>(s.m * per)), detail::tmc::W(dstTensor, detail::nbytes<T>(n))});
    for (uint32_t i = 0; i < (ascx_emu::skip_data() ? 0u : s.m); ++i)
        for (uint32_t j = 0; j < s.k; ++j)
            d[i * s.k + j] = j < s.ok ? ascx_emu::convert<T>(std::exp(ascx_emu::to_d(x[i * s.k + j]) - ascx_emu::to_d(mx[i * per])) / ascx_emu::to_d(sm[i * per])) : T(0);
    detail::trace_vec<T>(c, api, n, detail::repeats_for<T>(n) * 3, loc);
}

// LayerNorm over the last axis of inputX [B, S, H] (the first originalHLength of H columns):
// mean and (biased) variance per row -> outputMean / outputVariance [B, S];
// output = (x - mean) / sqrt(variance + epsilon) * gamma + beta, padding columns set to 0.
template <typename T, bool isReuseSource = false>
inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const LocalTensor<uint8_t>& sharedTmpBuffer,
                      const ascx_emu::nondeduced_t<T> epsilon, LayerNormTiling& tiling, ASCX_LOC) {
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "LayerNorm: T must be half or float");
    const char* api = "LayerNorm";
    auto& c = ascx_emu::core(api, loc);
    if (sharedTmpBuffer.core_) sharedTmpBuffer.Valid(api, loc);
    const int64_t B = tiling.bLength, S = tiling.sLength, H = tiling.hLength, oh = tiling.originalHLength ? tiling.originalHLength : tiling.hLength;
    if (B == 0 || S == 0 || H == 0) ascx_emu::fail(api, loc, "tiling shape [%lld, %lld, %lld] is empty (fill it with GetLayerNormNDTilingInfo)", (long long)B, (long long)S, (long long)H);
    if ((H * static_cast<int64_t>(sizeof(T))) % 32 != 0)
        ascx_emu::fail(api, loc, "hLength %lld: the last axis of %s must span a multiple of 32 bytes", (long long)H, ascx_emu::type_name<T>());
    if (oh > H) ascx_emu::fail(api, loc, "originalHLength %lld exceeds hLength %lld", (long long)oh, (long long)H);
    for (auto* t : {&output, &outputMean, &outputVariance, &inputX, &gamma, &beta}) ascx_emu::local_check_vec(api, *t, loc);
    const int64_t rows = B * S, n = rows * H;
    const T* x = inputX.Ptr(api, 0, n, loc);
    const T* g = gamma.Ptr(api, 0, H, loc);
    const T* b = beta.Ptr(api, 0, H, loc);
    T* o = output.Ptr(api, 0, n, loc);
    T* mo = outputMean.Ptr(api, 0, rows, loc);
    T* vo = outputVariance.Ptr(api, 0, rows, loc);
    const double eps = ascx_emu::to_d(epsilon);
    // mean: reduce sum, scale; variance: subtract, square, reduce sum; rstd per row: add eps,
    // sqrt, reciprocal; output: scale by rstd, multiply gamma, add beta
    detail::hl_acct<T>(c, api, loc, n, rows,
                       {{detail::tmc::VC_REDUCE, false}, {detail::tmc::VC_SIMPLE, true}, {detail::tmc::VC_SIMPLE, false}, {detail::tmc::VC_SIMPLE, false},
                        {detail::tmc::VC_REDUCE, false}, {detail::tmc::VC_SIMPLE, true}, {detail::tmc::VC_TRANSC, true}, {detail::tmc::VC_TRANSC, true},
                        {detail::tmc::VC_SIMPLE, false}, {detail::tmc::VC_SIMPLE, false}, {detail::tmc::VC_SIMPLE, false}},
                       {detail::tmc::R(inputX, detail::nbytes<T>(n)), detail::tmc::R(gamma, detail::nbytes<T>(H)), detail::tmc::R(beta, detail::nbytes<T>(H)),
                        detail::tmc::W(output, detail::nbytes<T>(n)), detail::tmc::W(outputMean, detail::nbytes<T>(rows)),
                        detail::tmc::W(outputVariance, detail::nbytes<T>(rows))});
    for (int64_t r = 0; r < (ascx_emu::skip_data() ? 0 : rows); ++r) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < oh; ++j) mean += ascx_emu::to_d(x[r * H + j]);
        mean /= static_cast<double>(oh);
        for (int64_t j = 0; j < oh; ++j) {
            double dv = ascx_emu::to_d(x[r * H + j]) - mean;
            var += dv * dv;
        }
        var /= static_cast<double>(oh);
        double rstd = 1.0 / std::sqrt(var + eps);
        for (int64_t j = 0; j < H; ++j)
            o[r * H + j] = j < oh ? ascx_emu::convert<T>((ascx_emu::to_d(x[r * H + j]) - mean) * rstd * ascx_emu::to_d(g[j]) + ascx_emu::to_d(b[j])) : T(0);
        mo[r] = ascx_emu::convert<T>(mean);
        vo[r] = ascx_emu::convert<T>(var);
    }
    detail::trace_vec<T>(c, api, n, detail::repeats_for<T>(n) * 8, loc);
}
template <typename T, bool isReuseSource = false>
inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const ascx_emu::nondeduced_t<T> epsilon,
                      LayerNormTiling& tiling, ASCX_LOC) {
    LayerNorm<T, isReuseSource>(output, outputMean, outputVariance, inputX, gamma, beta, LocalTensor<uint8_t>(), epsilon, tiling, loc);
}

}  // namespace AscendC

// ---------------------------------------------------------------- host-side tiling helpers
// ge::Shape and the documented tiling functions a host program calls to fill the structs above.
namespace ge {
class Shape {
public:
    Shape() = default;
    Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    std::vector<int64_t> GetDims() const { return dims_; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return dims_.empty() ? 0 : n;
    }

private:
    std::vector<int64_t> dims_;
};
}  // namespace ge

namespace AscendC {
// [m, k]: all leading axes folded into m.
inline void softmax_mk_(const ge::Shape& s, uint32_t& m, uint32_t& k) {
    k = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
    m = k ? static_cast<uint32_t>(s.GetShapeSize() / k) : 0;
}
// The emulator needs no temporary space; these report one 32-byte block per row (min) and a
// full row of floats per row (max), a plausible range for sizing buffers.
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
    (void)dataTypeSize, (void)isReuseSource;
    uint32_t m, k;
    softmax_mk_(srcShape, m, k);
    return m * 32;
}
inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
    (void)dataTypeSize, (void)isReuseSource;
    uint32_t m, k;
    softmax_mk_(srcShape, m, k);
    return m * (k * 4 + 64);
}
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize, const uint32_t localWorkSpaceSize, SoftMaxTiling& t) {
    uint32_t m, k;
    softmax_mk_(srcShape, m, k);
    t = SoftMaxTiling{};
    t.srcM = m, t.srcK = k, t.srcSize = m * k;
    t.outMaxM = m, t.outMaxK = dataTypeSize ? 32 / dataTypeSize : 0, t.outMaxSize = t.outMaxM * t.outMaxK;
    uint32_t rows = k ? localWorkSpaceSize / (k * 4 + 64) : 0;
    t.splitM = rows ? (rows < m ? rows : m) : m, t.splitK = k, t.splitSize = t.splitM * k;
    t.reduceM = t.splitM, t.reduceK = t.outMaxK, t.reduceSize = t.reduceM * t.reduceK;
    t.rangeM = t.splitM ? m / t.splitM : 0, t.tailM = t.splitM ? m % t.splitM : 0;
    t.tailSplitSize = t.tailM * k, t.tailReduceSize = t.tailM * t.outMaxK;
}
// LayerNorm: srcShape is [B, S, H] (an optional 4th dim gives the original H).
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    int64_t rows = srcShape.GetDim(0) * srcShape.GetDim(1), h = srcShape.GetDim(2);
    minValue = static_cast<uint32_t>(rows * 32 * 2);
    maxValue = static_cast<uint32_t>(rows * h * (typeSize < 4 ? 4 : typeSize) * 2 + minValue);
}
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize, const bool isReuseSource,
                                     LayerNormTiling& t) {
    (void)isReuseSource;
    t = LayerNormTiling{};
    t.bLength = static_cast<uint32_t>(srcShape.GetDim(0));
    t.sLength = static_cast<uint32_t>(srcShape.GetDim(1));
    t.hLength = static_cast<uint32_t>(srcShape.GetDim(2));
    t.originalHLength = srcShape.GetDimNum() > 3 ? static_cast<uint32_t>(srcShape.GetDim(3)) : t.hLength;
    t.inputXSize = t.bLength * t.sLength * t.hLength;
    t.meanVarSize = t.bLength * t.sLength;
    t.tmpBufSize = stackBufferSize / (typeSize ? typeSize : 1);
    t.lastDimValueBack = t.originalHLength ? 1.0f / static_cast<float>(t.originalHLength) : 0.0f;
}
}  // namespace AscendC
