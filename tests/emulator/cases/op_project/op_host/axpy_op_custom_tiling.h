// Tiling data of AxpyOpCustom (z = x + alpha * y), in the public op-project layout.
#ifndef AXPY_OP_CUSTOM_TILING_H
#define AXPY_OP_CUSTOM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AxpyOpTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(uint32_t, tileLength);
TILING_DATA_FIELD_DEF(float, alpha);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 2, pad);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AxpyOpCustom, AxpyOpTilingData)

// Tiling key 2 (lengths that do not split into whole tiles) has a class of its own.
BEGIN_TILING_DATA_DEF(AxpyOpKey2TilingData)
TILING_DATA_FIELD_DEF(float, fill);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AxpyOpCustom_2, AxpyOpKey2TilingData)
}  // namespace optiling
#endif
