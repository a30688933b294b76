// ascx emulator: stand-in for the high-level Matmul header. The high-level Matmul is not
// emulated: declaring a matmul::Matmul object is a compile-time error that names it (see
// ascx_emu/unsupported.h). Clean-room (Apache-2.0).
#pragma once
#include "../kernel_operator.h"
