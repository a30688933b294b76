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
}  // namespace optiling
#endif
