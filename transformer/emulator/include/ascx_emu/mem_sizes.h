// ascx emulator: the local memory sizes the headers are built with, in bytes (defaults: the
// default target of the target table, Ascend 910B / Atlas A2; `ascx emulator --cflags --target T`
// overrides them with -D; a test keeps the defaults in step with the table). Shared by the
// runtime (capacity checks) and the host platform header. Written for ascx (Apache-2.0).
#pragma once
#ifndef ASCX_EMU_UB_BYTES
#define ASCX_EMU_UB_BYTES (192 * 1024)
#endif
#ifndef ASCX_EMU_L1_BYTES
#define ASCX_EMU_L1_BYTES (512 * 1024)
#endif
#ifndef ASCX_EMU_L0A_BYTES
#define ASCX_EMU_L0A_BYTES (64 * 1024)
#endif
#ifndef ASCX_EMU_L0B_BYTES
#define ASCX_EMU_L0B_BYTES (64 * 1024)
#endif
#ifndef ASCX_EMU_L0C_BYTES
#define ASCX_EMU_L0C_BYTES (128 * 1024)
#endif
#ifndef ASCX_EMU_BT_BYTES
#define ASCX_EMU_BT_BYTES (1 * 1024)
#endif
