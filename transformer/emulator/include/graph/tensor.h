// ascx emulator: stand-in for the graph tensor header that host tiling files of public samples
// include for `ge::Shape` (the Pad / UnPad samples' abs_pad_tiling.cpp); the class lives with
// the high-level API tiling helpers in ascx_emu/highlevel.h. Clean-room (Apache-2.0).
#pragma once
#include "../kernel_operator.h"
