// ascx emulator: stand-in for the kernel-side tiling struct header (SoftMaxTiling,
// LayerNormTiling are defined in ascx_emu/highlevel.h). Clean-room (Apache-2.0).
#pragma once
#include "../kernel_operator.h"
