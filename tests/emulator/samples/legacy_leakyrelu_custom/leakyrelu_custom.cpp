// LeakyRelu on half, older sample style: 4 blocks, tiling values as constants, one queue
// per direction, the kernel written with `using namespace AscendC`.
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t TOTAL_LENGTH = 4 * 1024;
constexpr int32_t BLOCK_DIM = 4;
constexpr int32_t BLOCK_LENGTH = TOTAL_LENGTH / BLOCK_DIM;
constexpr int32_t TILE_LENGTH = 256;
constexpr float ALPHA = 0.125f;

class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y) {
        ASSERT(GetBlockNum() == BLOCK_DIM, "blockDim must be %d", BLOCK_DIM);
        xGm.SetGlobalBuffer((__gm__ half*)x + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
        yGm.SetGlobalBuffer((__gm__ half*)y + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
        pipe.InitBuffer(inQueue, 1, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(outQueue, 1, TILE_LENGTH * sizeof(half));
    }
    __aicore__ inline void Process() {
        for (int32_t i = 0; i < BLOCK_LENGTH / TILE_LENGTH; i++) {
            LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
            DataCopy(xLocal, xGm[i * TILE_LENGTH], TILE_LENGTH);
            inQueue.EnQue(xLocal);
            LocalTensor<half> in = inQueue.DeQue<half>();
            LocalTensor<half> out = outQueue.AllocTensor<half>();
            LeakyRelu(out, in, static_cast<half>(ALPHA), TILE_LENGTH);
            outQueue.EnQue(out);
            inQueue.FreeTensor(in);
            LocalTensor<half> yLocal = outQueue.DeQue<half>();
            DataCopy(yGm[i * TILE_LENGTH], yLocal, TILE_LENGTH);
            outQueue.FreeTensor(yLocal);
        }
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    GlobalTensor<half> xGm, yGm;
};

extern "C" __global__ __aicore__ void leakyrelu_custom(GM_ADDR x, GM_ADDR y) {
    KernelLeakyRelu op;
    op.Init(x, y);
    op.Process();
}

#ifndef __CCE_KT_TEST__
void leakyrelu_custom_do(uint32_t blockDim, void* l2ctrl, void* stream, uint8_t* x, uint8_t* y) {
    leakyrelu_custom<<<blockDim, l2ctrl, stream>>>(x, y);
}
#endif
