// ascx emulator: stand-in for the host tiling header sample hosts include for the high-level
// API tiling functions (SoftMaxTilingFunc, GetLayerNormNDTilingInfo, ge::Shape). They live in
// ascx_emu/highlevel.h. Clean-room (Apache-2.0).
#pragma once
#include "../kernel_operator.h"
#include "../ascx_emu/matmul_tiling.h"  // matmul_tiling::MultiCoreMatmulTiling ...
