// ascx emulator: the graph-engine data types and formats named by op projects (`ge::DT_FLOAT16`,
// `ge::FORMAT_ND`) and by kernels comparing `ORIG_DTYPE_<NAME>` against them (`DT_FLOAT16` at
// global scope: the same enumerators, so `using namespace ge;` stays unambiguous).
// Clean-room (Apache-2.0); the names are the public API's, the values our own.
#pragma once
#include <cstddef>

namespace ge {
enum DataType {
    DT_FLOAT = 0, DT_FLOAT16, DT_INT8, DT_INT32, DT_UINT8, DT_INT16 = 6, DT_UINT16, DT_UINT32, DT_INT64, DT_UINT64,
    DT_DOUBLE, DT_BOOL, DT_BF16 = 27, DT_UNDEFINED = 28
};
enum Format { FORMAT_NCHW = 0, FORMAT_NHWC, FORMAT_ND = 2, FORMAT_NC1HWC0 = 3, FORMAT_FRACTAL_Z = 4, FORMAT_FRACTAL_NZ = 29 };
inline size_t DataTypeSize(DataType t) {
    switch (t) {
        case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
        case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
        case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
        case DT_INT64: case DT_UINT64: case DT_DOUBLE: return 8;
        default: return 0;
    }
}
}  // namespace ge

using ge::DT_BF16; using ge::DT_BOOL; using ge::DT_DOUBLE; using ge::DT_FLOAT; using ge::DT_FLOAT16; using ge::DT_INT16;
using ge::DT_INT32; using ge::DT_INT64; using ge::DT_INT8; using ge::DT_UINT16; using ge::DT_UINT32; using ge::DT_UINT64;
using ge::DT_UINT8;
