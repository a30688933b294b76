// ascx emulator: stand-in for the ACL runtime header that sample hosts include (usually from
// their data_utils.h). Clean-room (Apache-2.0), written from the public AscendCL documentation:
// it provides what a CPU-debug build touches (aclFloat16 and its conversions, aclError,
// ACL_SUCCESS, data-type names) plus host-memory versions of the aclrt* calls an NPU branch
// names, so a host program compiles and links unchanged. There is no device: aclrtMalloc
// allocates host memory, aclrtMemcpy copies host memory, streams are dummies.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "../ascx_emu/types.h"

typedef int aclError;
typedef uint16_t aclFloat16;
typedef void* aclrtStream;
typedef void* aclrtContext;
typedef void* aclrtEvent;

constexpr aclError ACL_SUCCESS = 0;
constexpr aclError ACL_ERROR_NONE = 0;  // the older name of ACL_SUCCESS (public samples' CHECK_ACL)
constexpr aclError ACL_ERROR_INVALID_PARAM = 100000;
constexpr aclError ACL_ERROR_BAD_ALLOC = 200000;

typedef enum {
    ACL_DT_UNDEFINED = -1, ACL_FLOAT = 0, ACL_FLOAT16 = 1, ACL_INT8 = 2, ACL_INT32 = 3, ACL_UINT8 = 4,
    ACL_INT16 = 6, ACL_UINT16 = 7, ACL_UINT32 = 8, ACL_INT64 = 9, ACL_UINT64 = 10, ACL_DOUBLE = 11,
    ACL_BOOL = 12, ACL_BF16 = 27
} aclDataType;

typedef enum { ACL_MEM_MALLOC_HUGE_FIRST = 0, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY } aclrtMemMallocPolicy;
typedef enum {
    ACL_MEMCPY_HOST_TO_HOST = 0, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE
} aclrtMemcpyKind;

// binary16 <-> float, round to nearest even (the emulator's half conversion).
inline float aclFloat16ToFloat(aclFloat16 v) { return ascx_emu::f16_to_f32(v); }
inline aclFloat16 aclFloatToFloat16(float v) { return ascx_emu::f32_to_f16_rne(v); }
inline size_t aclDataTypeSize(aclDataType t) {
    switch (t) {
        case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
        case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
        case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
        case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: return 8;
        default: return 0;
    }
}

inline aclError aclInit(const char*) { return ACL_SUCCESS; }
inline aclError aclFinalize() { return ACL_SUCCESS; }
inline aclError aclrtSetDevice(int32_t) { return ACL_SUCCESS; }
inline aclError aclrtResetDevice(int32_t) { return ACL_SUCCESS; }
inline aclError aclrtGetDeviceCount(uint32_t* n) { if (n) *n = 1; return ACL_SUCCESS; }
inline aclError aclrtCreateContext(aclrtContext* c, int32_t) { if (c) *c = nullptr; return ACL_SUCCESS; }
inline aclError aclrtDestroyContext(aclrtContext) { return ACL_SUCCESS; }
inline aclError aclrtCreateStream(aclrtStream* s) { if (s) *s = nullptr; return ACL_SUCCESS; }
inline aclError aclrtDestroyStream(aclrtStream) { return ACL_SUCCESS; }
inline aclError aclrtSynchronizeStream(aclrtStream) { return ACL_SUCCESS; }
inline aclError aclrtSynchronizeDevice() { return ACL_SUCCESS; }
inline aclError aclrtMalloc(void** p, size_t size, aclrtMemMallocPolicy) {
    if (!p) return ACL_ERROR_INVALID_PARAM;
    *p = std::calloc(size ? size : 1, 1);
    return *p ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
inline aclError aclrtMallocHost(void** p, size_t size) { return aclrtMalloc(p, size, ACL_MEM_MALLOC_HUGE_FIRST); }
inline aclError aclrtFree(void* p) { std::free(p); return ACL_SUCCESS; }
inline aclError aclrtFreeHost(void* p) { std::free(p); return ACL_SUCCESS; }
inline aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind) {
    if (count > destMax || (count && (!dst || !src))) return ACL_ERROR_INVALID_PARAM;
    if (count) std::memmove(dst, src, count);
    return ACL_SUCCESS;
}
inline aclError aclrtMemset(void* dst, size_t destMax, int32_t value, size_t count) {
    if (count > destMax || (count && !dst)) return ACL_ERROR_INVALID_PARAM;
    if (count) std::memset(dst, value, count);
    return ACL_SUCCESS;
}
inline const char* aclGetRecentErrMsg() { return ""; }
