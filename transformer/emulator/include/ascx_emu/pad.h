// ascx emulator: the high-level `Pad` / `UnPad` APIs with their tiling (`PadTiling`,
// `UnPadTiling`; host `GetPadMaxMinTmpSize`, `PadTilingFunc`, `GetUnPadMaxMinTmpSize`,
// `UnPadTilingFunc`), written from the public API pages "Pad", "Pad Tiling", "UnPad" and
// "UnPad Tiling". Clean-room (Apache-2.0).
//
// Pad: a height x width tensor in UB, of which the first `oriWidth` columns of each row are
// data, becomes a height x (leftPad + oriWidth + rightPad) tensor, the pad columns set to
// padValue; the new width must be 32 B aligned (the page's two cases: 16 x 15 half padded by
// one column to 16 x 16; 16 x 16 with two redundant columns refilled). UnPad drops leftPad
// columns before and rightPad after each row of a height x width tensor, the rows packed.
// The shapes come from the tiling (srcHeight, srcWidth, srcOriWidth: our struct, filled by
// our tiling functions; the device's fields are not public), so host and kernel agree. The
// emulator needs no temporary buffer (any sharedTmpBuffer is accepted); the tmp-size
// functions report one padded row (min) and the whole padded tensor (max). Priced as the
// vector copy of the result plus a Duplicate of the pad columns (Pad).
#pragma once
#include <cstddef>
#include <cstring>

#include "highlevel.h"
#include "tiling_save.h"

namespace AscendC {
namespace tiling {
struct PadTiling {
    uint32_t srcHeight = 0, srcWidth = 0, srcOriWidth = 0, tmpBufSize = 0;
    size_t GetDataSize() const { return sizeof(*this); }
    void SaveToBuffer(void* buf, size_t capacity) const { ascx_emu::tiling_save(this, sizeof(*this), buf, capacity); }
};
struct UnPadTiling {
    uint32_t srcHeight = 0, srcWidth = 0, tmpBufSize = 0, reserved = 0;
    size_t GetDataSize() const { return sizeof(*this); }
    void SaveToBuffer(void* buf, size_t capacity) const { ascx_emu::tiling_save(this, sizeof(*this), buf, capacity); }
};
}  // namespace tiling
using tiling::PadTiling;
using tiling::UnPadTiling;

struct PadParams {
    uint16_t leftPad = 0, rightPad = 0;
    int32_t padValue = 0;
};
struct UnPadParams {
    uint16_t leftPad = 0, rightPad = 0;
};

// ---------------------------------------------------------------- host side
namespace detail {
inline void pad_hw_(const ge::Shape& s, uint32_t& h, uint32_t& w) {
    w = s.GetDimNum() ? static_cast<uint32_t>(s.GetDim(s.GetDimNum() - 1)) : 0;
    h = w ? static_cast<uint32_t>(s.GetShapeSize() / w) : 0;
}
inline uint32_t padded_row_bytes_(uint32_t w, uint32_t typeSize) { return (w * typeSize + 31u) / 32u * 32u; }
}  // namespace detail
inline void GetPadMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue, uint32_t& minValue) {
    uint32_t h, w;
    detail::pad_hw_(srcShape, h, w);
    minValue = detail::padded_row_bytes_(w, typeSize);
    maxValue = h * minValue;
}
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                          PadTiling& tiling) {
    (void)typeSize;
    uint32_t h, w, oh, ow;
    detail::pad_hw_(srcShape, h, w);
    detail::pad_hw_(oriSrcShape, oh, ow);
    tiling = PadTiling{};
    tiling.srcHeight = h, tiling.srcWidth = w, tiling.srcOriWidth = ow, tiling.tmpBufSize = stackBufferSize;
}
template <class Platform>
inline void GetUnPadMaxMinTmpSize(const Platform& ascendcPlatform, const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                  uint32_t& minValue) {
    (void)ascendcPlatform;
    GetPadMaxMinTmpSize(srcShape, typeSize, maxValue, minValue);
}
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize, UnPadTiling& tiling) {
    (void)typeSize;
    uint32_t h, w;
    detail::pad_hw_(srcShape, h, w);
    tiling = UnPadTiling{};
    tiling.srcHeight = h, tiling.srcWidth = w, tiling.tmpBufSize = stackBufferSize;
}

// ---------------------------------------------------------------- kernel side
namespace detail {
template <typename T> inline void pad_types_(const char* api, SrcLoc loc) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Pad / UnPad take int16_t, uint16_t, half, int32_t, uint32_t or float");
    (void)api, (void)loc;
}
}  // namespace detail

template <typename T>
inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams, const LocalTensor<uint8_t>& sharedTmpBuffer,
                PadTiling& tiling, ASCX_LOC) {
    const char* api = "Pad";
    detail::pad_types_<T>(api, loc);
    auto& c = ascx_emu::core(api, loc);
    (void)sharedTmpBuffer;
    ascx_emu::local_check_vec(api, dstTensor, loc);
    ascx_emu::local_check_vec(api, srcTensor, loc);
    const uint32_t h = tiling.srcHeight, w = tiling.srcWidth, ow = tiling.srcOriWidth ? tiling.srcOriWidth : tiling.srcWidth;
    if (h == 0 || w == 0) ascx_emu::fail(api, loc, "the tiling has no shape: fill it with PadTilingFunc(srcShape, oriSrcShape, ...)");
    if (ow > w) ascx_emu::fail(api, loc, "the original width %u is above the width %u", ow, w);
    const uint32_t dw = padParams.leftPad + ow + padParams.rightPad;
    if ((dw * sizeof(T)) % 32 != 0)
        ascx_emu::fail(api, loc, "leftPad %u + width %u + rightPad %u = %u elements of %s is not 32 B aligned (Pad pads rows to 32 B)",
                       padParams.leftPad, ow, padParams.rightPad, dw, ascx_emu::type_name<T>());
    if ((w * sizeof(T)) % 32 == 0 && ow == w && padParams.leftPad == 0 && padParams.rightPad == 0)
        ascx_emu::fail(api, loc, "the width %u is 32 B aligned and all data: nothing to pad (the page does not support it)", w);
    const T* s = srcTensor.Ptr(api, 0, static_cast<int64_t>(h) * w, loc);
    T* d = dstTensor.Ptr(api, 0, static_cast<int64_t>(h) * dw, loc);
    const int64_t db = static_cast<int64_t>(h) * dw * static_cast<int64_t>(sizeof(T));
    const int64_t pads = static_cast<int64_t>(h) * (padParams.leftPad + padParams.rightPad);
    ascx_emu::account(c, PIPE_V, api, loc, ascx_emu::tm::vec(ascx_emu::tm::VC_SIMPLE, static_cast<double>(detail::repeats_for<T>(db / sizeof(T))), true,
                                                           static_cast<double>(db)),
                      {ascx_emu::tm::R(srcTensor, static_cast<int64_t>(h) * w * static_cast<int64_t>(sizeof(T))), ascx_emu::tm::W(dstTensor, db)});
    if (pads) ascx_emu::account(c, PIPE_V, api, loc, ascx_emu::tm::vec(ascx_emu::tm::VC_SIMPLE, static_cast<double>(detail::repeats_for<T>(pads)), true,
                                                                     static_cast<double>(detail::nbytes<T>(pads))), {});
    if (ascx_emu::skip_data()) return;
    const T pv = static_cast<T>(static_cast<float>(padParams.padValue));
    std::vector<T> row(dw);
    for (uint32_t r = 0; r < h; ++r) {  // via a row copy: dst may overlap src (the page's in-place case)
        for (uint32_t j = 0; j < dw; ++j)
            row[j] = (j < padParams.leftPad || j >= padParams.leftPad + ow) ? pv : s[static_cast<size_t>(r) * w + (j - padParams.leftPad)];
        std::memcpy(d + static_cast<size_t>(r) * dw, row.data(), dw * sizeof(T));
    }
}
template <typename T>
inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams, PadTiling& tiling, ASCX_LOC) {
    Pad(dstTensor, srcTensor, padParams, LocalTensor<uint8_t>(), tiling, loc);
}

template <typename T>
inline void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams, LocalTensor<uint8_t>& sharedTmpBuffer,
                  UnPadTiling& tiling, ASCX_LOC) {
    const char* api = "UnPad";
    detail::pad_types_<T>(api, loc);
    auto& c = ascx_emu::core(api, loc);
    (void)sharedTmpBuffer;
    ascx_emu::local_check_vec(api, dstTensor, loc);
    ascx_emu::local_check_vec(api, srcTensor, loc);
    const uint32_t h = tiling.srcHeight, w = tiling.srcWidth;
    if (h == 0 || w == 0) ascx_emu::fail(api, loc, "the tiling has no shape: fill it with UnPadTilingFunc(srcShape, ...)");
    if (unPadParams.leftPad + unPadParams.rightPad >= w)
        ascx_emu::fail(api, loc, "leftPad %u + rightPad %u remove the whole width %u", unPadParams.leftPad, unPadParams.rightPad, w);
    const uint32_t dw = w - unPadParams.leftPad - unPadParams.rightPad;
    const T* s = srcTensor.Ptr(api, 0, static_cast<int64_t>(h) * w, loc);
    T* d = dstTensor.Ptr(api, 0, static_cast<int64_t>(h) * dw, loc);
    const int64_t db = static_cast<int64_t>(h) * dw * static_cast<int64_t>(sizeof(T));
    ascx_emu::account(c, PIPE_V, api, loc, ascx_emu::tm::vec(ascx_emu::tm::VC_SIMPLE, static_cast<double>(detail::repeats_for<T>(db / sizeof(T))), true,
                                                           static_cast<double>(db)),
                      {ascx_emu::tm::R(srcTensor, static_cast<int64_t>(h) * w * static_cast<int64_t>(sizeof(T))), ascx_emu::tm::W(dstTensor, db)});
    if (ascx_emu::skip_data()) return;
    for (uint32_t r = 0; r < h; ++r)  // forward and packed: a row never lands past its source
        std::memmove(d + static_cast<size_t>(r) * dw, s + static_cast<size_t>(r) * w + unPadParams.leftPad, dw * sizeof(T));
}
template <typename T>
inline void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams, UnPadTiling& tiling, ASCX_LOC) {
    LocalTensor<uint8_t> none;
    UnPad(dstTensor, srcTensor, unPadParams, none, tiling, loc);
}
}  // namespace AscendC

namespace optiling {
using PadTiling = ::AscendC::tiling::PadTiling;
using UnPadTiling = ::AscendC::tiling::UnPadTiling;
}  // namespace optiling
// The kernel-side tiling structs are global names too, as the generated kernel_tiling.h of a
// kernel-launch build gives them (the public Pad / UnPad samples write PadTiling unqualified in
// the kernel and in main.cpp); the same entities, so `using namespace AscendC` stays unambiguous.
using AscendC::tiling::PadTiling;
using AscendC::tiling::UnPadTiling;
