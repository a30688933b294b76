// ascx emulator: user-facing header. A clean-room host (CPU) implementation of a subset
// of the Ascend C basic API, written for the ascx project from the public documentation.
// Build any kernel with:  g++ $(ascx emulator --cflags) kernel.cpp -o k && ./k
// See docs/emulator.md for the supported API, semantics, trace format and failure modes.
#pragma once
#ifndef ASCX_EMULATOR
#define ASCX_EMULATOR 1
#endif
#include "ascx_emu/types.h"
#include "ascx_emu/runtime.h"
#include "ascx_emu/ops.h"
#include "ascx_emu/ops_extra.h"
#include "ascx_emu/ops_more.h"
#include "ascx_emu/list_tensor.h"
#include "ascx_emu/highlevel.h"
#include "ascx_emu/pad.h"
#include "ascx_emu/unsupported.h"
#include "ascx_emu/multicore.h"
#include "ascx_emu/harness.h"
#include "ascx_emu/opkernel.h"
#include "securec.h"

// The 2023 samples name the API namespace tik2: an alias, nothing more.
namespace tik2 = AscendC;
