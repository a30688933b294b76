// Every block first Fills its slice of y with its block index (Fill on GM, before InitBuffer),
// waits for all blocks (SyncAll, as the Fill documentation advises), then atomically adds x
// to the whole of y: y = blockIdx-of-slice + 8 * x. 8 blocks.
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t SLICE = 64, BLOCKS = 8;

extern "C" __global__ __aicore__ void fill_gm_custom(GM_ADDR x, GM_ADDR y) {
    GlobalTensor<float> xGm, yGm, mine;
    xGm.SetGlobalBuffer((__gm__ float*)x, SLICE * BLOCKS);
    yGm.SetGlobalBuffer((__gm__ float*)y, SLICE * BLOCKS);
    mine.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * SLICE, SLICE);
    Fill(mine, SLICE, static_cast<float>(GetBlockIdx()));
    SyncAll();
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, SLICE * BLOCKS * sizeof(float));
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, xGm, SLICE * BLOCKS);
    SetFlag<HardEvent::MTE2_MTE3>(0);  // the copy out (MTE3) reads what the copy in (MTE2) wrote
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    SetAtomicAdd<float>();
    DataCopy(yGm, in, SLICE * BLOCKS);
    SetAtomicNone();
    inQ.FreeTensor(in);
}
