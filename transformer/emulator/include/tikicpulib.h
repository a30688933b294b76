// ascx emulator: stand-in for the CPU-debug harness header that host programs of public
// Ascend C samples include under ASCENDC_CPU_DEBUG. It only pulls in kernel_operator.h,
// which provides ICPU_RUN_KF, GmAlloc, GmFree and AscendC::SetKernelMode.
#pragma once
#include "kernel_operator.h"
