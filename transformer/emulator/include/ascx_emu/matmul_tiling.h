// ascx emulator: the host Matmul tiling API (`matmul_tiling::MatmulApiTiling`,
// `MultiCoreMatmulTiling`, reached through tiling/tiling_api.h), written from the public API
// reference. Clean-room (Apache-2.0). It fills a TCubeTiling that the emulated Matmul accepts.
//
// The split is the emulator's own (the device's tiling algorithm is not public): the cores of
// SetDim are shared as mDim x nDim blocks of C minimising the largest block, ties split along M
// (K is never split, as documented); singleCoreM/N round up to 16; baseM <= 128, baseN <= 256 (16-aligned, within
// L0C in float), baseK the largest multiple of C0 (32 B of the input type) that keeps a base
// block of A and of B within half of L0A / L0B (double buffered); SetFixSplit overrides base
// sizes, SetSingleShape the single-core shape. Memory sizes come from the platform
// (ASCX_EMU_<SCOPE>_BYTES, the target table's).
#pragma once
#include <algorithm>
#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"
#include "../tiling/platform/platform_ascendc.h"
#include "ge_types.h"

namespace matmul_tiling {
enum class TPosition { GM = 0, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
using DataType = ge::DataType;
enum class MatrixTraverse { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };

class MatmulApiTilingBase {
public:
    MatmulApiTilingBase() = default;
    explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC& p) {
        uint64_t v = 0;
        p.GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, v), l0a_ = static_cast<int64_t>(v);
        p.GetCoreMemSize(platform_ascendc::CoreMemType::L0_B, v), l0b_ = static_cast<int64_t>(v);
        p.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, v), l0c_ = static_cast<int64_t>(v);
    }
    virtual ~MatmulApiTilingBase() = default;
    int32_t SetAType(TPosition, CubeFormat, DataType t, bool isTrans = false) { a_ = t, transA_ = isTrans; return 0; }
    int32_t SetBType(TPosition, CubeFormat, DataType t, bool isTrans = false) { b_ = t, transB_ = isTrans; return 0; }
    int32_t SetCType(TPosition, CubeFormat, DataType t) { c_ = t; return 0; }
    int32_t SetBiasType(TPosition, CubeFormat, DataType) { return 0; }
    int32_t SetShape(int32_t m, int32_t n, int32_t k) { m_ = m, n_ = n, k_ = k; return 0; }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t k) { return SetOrgShape(m, n, k, k); }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t ka, int32_t kb) { om_ = m, on_ = n, oka_ = ka, okb_ = kb; return 0; }
    int32_t SetBias(bool isBias = false) { bias_ = isBias; return 0; }
    int32_t EnableBias(bool isBias = false) { return SetBias(isBias); }
    int32_t SetBufferSpace(int32_t l1 = -1, int32_t l0c = -1, int32_t ub = -1, int32_t bt = -1) {
        (void)l1, (void)ub, (void)bt;
        if (l0c > 0) l0c_ = l0c;
        return 0;
    }
    int32_t SetFixSplit(int32_t baseM = -1, int32_t baseN = -1, int32_t baseK = -1) { fm_ = baseM, fn_ = baseN, fk_ = baseK; return 0; }
    int32_t SetTraverse(MatrixTraverse t) { order_ = t == MatrixTraverse::FIRSTN ? 1 : 0; return 0; }
    int32_t SetSingleShape(int32_t m = -1, int32_t n = -1, int32_t k = -1) { sm_ = m, sn_ = n, sk_ = k; return 0; }
    template <typename... X> int32_t SetMatmulConfigParams(X...) { return 0; }
    template <typename... X> int32_t SetDequantType(X...) { return 0; }

    // 0 on success, -1 when the shape is missing or cannot be tiled.
    int64_t GetTiling(TCubeTiling& t) {
        if (m_ <= 0 || n_ <= 0 || k_ <= 0) return -1;
        const int32_t M = m_, N = n_, K = k_;
        int32_t mDim = 1, nDim = 1;
        split(M, N, mDim, nDim);
        int32_t sm = sm_ > 0 ? sm_ : std::min(M, align(ceil_div(M, mDim), 16));
        int32_t sn = sn_ > 0 ? sn_ : std::min(N, align(ceil_div(N, nDim), 16));
        const int32_t sk = sk_ > 0 ? sk_ : K;
        const int64_t esa = static_cast<int64_t>(ge::DataTypeSize(a_)), esb = static_cast<int64_t>(ge::DataTypeSize(b_));
        if (esa == 0 || esb == 0) return -1;
        const int32_t c0 = static_cast<int32_t>(32 / esa);
        int32_t bm = fm_ > 0 ? fm_ : std::min(128, align(sm, 16));
        int32_t bn = fn_ > 0 ? fn_ : std::min(256, align(sn, 16));
        while (static_cast<int64_t>(bm) * bn * 4 > l0c_ && bn > 16) bn -= 16;
        int32_t bk = fk_;
        if (bk <= 0) {
            bk = align(sk, c0);
            const int64_t cap = std::min((l0a_ / 2) / (bm * esa), (l0b_ / 2) / (bn * esb));
            bk = static_cast<int32_t>(std::min<int64_t>(bk, cap / c0 * c0));
            if (bk <= 0) return -1;
        }
        t = TCubeTiling{};
        t.M = om_ > 0 ? om_ : M, t.N = on_ > 0 ? on_ : N, t.Ka = oka_ > 0 ? oka_ : K, t.Kb = okb_ > 0 ? okb_ : K;
        t.singleCoreM = sm, t.singleCoreN = sn, t.singleCoreK = sk;
        t.baseM = bm, t.baseN = bn, t.baseK = bk;
        t.usedCoreNum = ceil_div(M, sm) * ceil_div(N, sn);
        t.depthA1 = t.depthB1 = 1, t.stepM = t.stepN = 1, t.stepKa = t.stepKb = 1;
        t.isBias = bias_ ? 1 : 0, t.iterateOrder = order_;
        t.dbL0A = t.dbL0B = 2, t.dbL0C = 1;
        return 0;
    }

protected:
    virtual void split(int32_t, int32_t, int32_t& mDim, int32_t& nDim) { mDim = nDim = 1; }
    static int32_t ceil_div(int32_t a, int32_t b) { return b > 0 ? (a + b - 1) / b : 0; }
    static int32_t align(int32_t a, int32_t b) { return ceil_div(a, b) * b; }
    DataType a_ = ge::DT_FLOAT16, b_ = ge::DT_FLOAT16, c_ = ge::DT_FLOAT;
    bool transA_ = false, transB_ = false, bias_ = false;
    int32_t m_ = 0, n_ = 0, k_ = 0, om_ = 0, on_ = 0, oka_ = 0, okb_ = 0, sm_ = -1, sn_ = -1, sk_ = -1;
    int32_t fm_ = -1, fn_ = -1, fk_ = -1, order_ = 0;
    int64_t l0a_ = ASCX_EMU_L0A_BYTES, l0b_ = ASCX_EMU_L0B_BYTES, l0c_ = ASCX_EMU_L0C_BYTES;
};

class MatmulApiTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
};

class MultiCoreMatmulTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
    int32_t SetDim(int32_t dim) { dim_ = dim > 0 ? dim : 1; return 0; }
    int32_t GetSingleShape(int32_t& m, int32_t& n, int32_t& k) {
        TCubeTiling t;
        if (GetTiling(t) != 0) return -1;
        m = t.singleCoreM, n = t.singleCoreN, k = t.singleCoreK;
        return 0;
    }
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) {
        split(m_, n_, mDim, nDim);
        dim = mDim * nDim;
        return 0;
    }

protected:
    // mDim x nDim <= dim blocks of C (at most one per 16 rows / columns), the largest block smallest.
    void split(int32_t M, int32_t N, int32_t& mDim, int32_t& nDim) override {
        int64_t best = -1;
        for (int32_t md = 1; md <= dim_; ++md) {
            const int32_t nd = dim_ / md;
            if (md > ceil_div(M, 16) || nd > ceil_div(N, 16) || nd < 1) continue;
            const int64_t area = static_cast<int64_t>(std::min(M, align(ceil_div(M, md), 16))) * std::min(N, align(ceil_div(N, nd), 16));
            // a tie goes to the split along M (whole rows of C per core, as the public samples'
            // offsets expect: 13_matmulleakyrelu's 1024 x 640 on 2 cores is 512 x 640 each)
            if (best < 0 || area <= best) best = area, mDim = md, nDim = nd;
        }
        if (best < 0) mDim = nDim = 1;
    }
    int32_t dim_ = 1;
};
using BatchMatmulTiling = MultiCoreMatmulTiling;
}  // namespace matmul_tiling
