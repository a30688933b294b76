// Older host-program style: the NPU branch is hidden behind __CCE_KT_TEST__ (defined in
// CPU-debug builds), results are printed through aclFloat16ToFloat, checks use ASSERT.
#include "data_utils.h"
#ifndef __CCE_KT_TEST__
#include "acl/acl.h"
extern void leakyrelu_custom_do(uint32_t blockDim, void* l2ctrl, void* stream, uint8_t* x, uint8_t* y);
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void leakyrelu_custom(GM_ADDR x, GM_ADDR y);
#endif

int32_t main(int32_t argc, char* argv[]) {
    (void)argc;
    (void)argv;
    uint32_t blockDim = 4;
    size_t byteSize = 4 * 1024 * sizeof(aclFloat16);
#ifdef __CCE_KT_TEST__
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(byteSize);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(byteSize);
    ASSERT(ReadFile("./input/input_x.bin", byteSize, x, byteSize));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(leakyrelu_custom, blockDim, x, y);
    PrintHalf(y, 8);
    ASSERT(aclFloat16ToFloat(aclFloatToFloat16(-2.0f)) == -2.0f);
    WriteFile("./output/output_y.bin", y, byteSize);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
#else
    // NPU branch (not compiled in CPU-debug builds): device buffers, launch, copy back.
    uint8_t *xd = nullptr, *yd = nullptr;
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtMalloc((void**)&xd, byteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void**)&yd, byteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    leakyrelu_custom_do(blockDim, nullptr, nullptr, xd, yd);
    CHECK_ACL(aclFinalize());
#endif
    return 0;
}
