// Host program of syncall_custom (CPU-debug branch only; the NPU launch is not part of it).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void syncall_custom(GM_ADDR x, GM_ADDR work, GM_ADDR z, GM_ADDR syncWs);

int32_t main() {
    const uint32_t blockDim = 8;
    const size_t bytes = 8 * 64 * sizeof(float);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* work = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* z = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* syncWs = (uint8_t*)AscendC::GmAlloc(blockDim * 32);  // zeroed, as SyncAll requires
    if (!ReadFile("./input/input_x.bin", bytes, x, bytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(syncall_custom, blockDim, x, work, z, syncWs);
    WriteFile("./output/output_z.bin", z, bytes);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)work);
    AscendC::GmFree((void*)z);
    AscendC::GmFree((void*)syncWs);
    return 0;
}
