// ascx emulator: the header public kernels include for ListTensorDesc / TensorDesc
// (ascx_emu/list_tensor.h; kernel_operator.h includes it too). Clean-room (Apache-2.0).
#pragma once
#include "kernel_operator.h"
