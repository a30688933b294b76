// GM -> UB -> GM streaming copy on the vector cores, written for the ascx calibration dataset
// (transformer/timing/data/published.toml): the device-to-device copy and empty-kernel points.
//
//   ./stream_copy BYTES BLOCKS
//
// Each of BLOCKS AIV blocks copies its share of BYTES (a multiple of 32 * BLOCKS) in chunks
// of 32 KiB through two UB buffers (ping-pong on MTE2 -> MTE3 and MTE3 -> MTE2 flags).
// BYTES = 0 gives an empty kernel: launch and dispatch only.
#include "kernel_operator.h"

#include <cstdlib>

using namespace AscendC;

namespace {
uint64_t g_bytes = 0;
constexpr uint32_t CHUNK = 32 * 1024;
}  // namespace

extern "C" __global__ __aicore__ void copy_kernel(GM_ADDR x, GM_ADDR y)
{
    const uint64_t share = g_bytes / GetBlockNum();
    if (share == 0) return;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * CHUNK);
    LocalTensor<half> ub = buf.Get<half>();
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half *)(x + GetBlockIdx() * share), share / 2);
    yGm.SetGlobalBuffer((__gm__ half *)(y + GetBlockIdx() * share), share / 2);
    const uint64_t chunks = (share + CHUNK - 1) / CHUNK;
    for (uint64_t i = 0; i < chunks; ++i) {
        const int slot = static_cast<int>(i % 2);
        const uint32_t len = static_cast<uint32_t>(i + 1 < chunks ? CHUNK : share - i * CHUNK);
        if (i >= 2) WaitFlag<HardEvent::MTE3_MTE2>(slot);
        DataCopy(ub[slot * CHUNK / 2], xGm[i * CHUNK / 2], len / 2);
        SetFlag<HardEvent::MTE2_MTE3>(slot);
        WaitFlag<HardEvent::MTE2_MTE3>(slot);
        DataCopy(yGm[i * CHUNK / 2], ub[slot * CHUNK / 2], len / 2);
        SetFlag<HardEvent::MTE3_MTE2>(slot);
    }
    for (uint64_t i = chunks > 2 ? chunks - 2 : 0; i < chunks; ++i) WaitFlag<HardEvent::MTE3_MTE2>(static_cast<int>(i % 2));
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s BYTES BLOCKS\n", argv[0]);
        return 2;
    }
    g_bytes = std::strtoull(argv[1], nullptr, 10);
    const int blocks = std::atoi(argv[2]);
    if (blocks < 1 || g_bytes % (32ull * blocks)) {
        std::fprintf(stderr, "error: BYTES must be a multiple of 32 * BLOCKS\n");
        return 2;
    }
    uint8_t* x = GmAlloc(g_bytes ? g_bytes : 32);
    uint8_t* y = GmAlloc(g_bytes ? g_bytes : 32);
    ICPU_RUN_KF(copy_kernel, blocks, x, y);
    GmFree(x);
    GmFree(y);
    return 0;
}
