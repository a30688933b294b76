// Row softmax of a float [64, 64] matrix with the SoftMax high-level API; 4 blocks of 16 rows.
// The host computes the SoftMaxTiling for one block's [16, 64] tile and passes it through GM.
#include "kernel_operator.h"

struct SoftmaxCustomTilingData {
    uint32_t rowsPerBlock;
    uint32_t cols;
    AscendC::SoftMaxTiling softmaxTilingData;
};

class KernelSoftmax {
public:
    __aicore__ inline KernelSoftmax() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxCustomTilingData& t) {
        tiling = t;
        uint32_t n = t.rowsPerBlock * t.cols;
        xGm.SetGlobalBuffer((__gm__ float*)x + n * AscendC::GetBlockIdx(), n);
        yGm.SetGlobalBuffer((__gm__ float*)y + n * AscendC::GetBlockIdx(), n);
        pipe.InitBuffer(inQueue, 1, n * sizeof(float));
        pipe.InitBuffer(outQueue, 1, n * sizeof(float));
        pipe.InitBuffer(sumBuf, t.rowsPerBlock * 32);
        pipe.InitBuffer(maxBuf, t.rowsPerBlock * 32);
    }
    __aicore__ inline void Process() {
        uint32_t n = tiling.rowsPerBlock * tiling.cols;
        AscendC::LocalTensor<float> in = inQueue.AllocTensor<float>();
        AscendC::DataCopy(in, xGm, n);
        inQueue.EnQue(in);
        in = inQueue.DeQue<float>();
        AscendC::LocalTensor<float> out = outQueue.AllocTensor<float>();
        AscendC::SoftMaxShapeInfo shape = {tiling.rowsPerBlock, tiling.cols, tiling.rowsPerBlock, tiling.cols};
        AscendC::SoftMax<float>(out, sumBuf.Get<float>(), maxBuf.Get<float>(), in, tiling.softmaxTilingData, shape);
        outQueue.EnQue(out);
        inQueue.FreeTensor(in);
        out = outQueue.DeQue<float>();
        AscendC::DataCopy(yGm, out, n);
        outQueue.FreeTensor(out);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::TBuf<AscendC::TPosition::VECCALC> sumBuf, maxBuf;
    AscendC::GlobalTensor<float> xGm, yGm;
    SoftmaxCustomTilingData tiling;
};

extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tilingGm) {
    SoftmaxCustomTilingData t;
    auto src = reinterpret_cast<__gm__ uint8_t*>(tilingGm);
    for (size_t i = 0; i < sizeof(t); i++) reinterpret_cast<uint8_t*>(&t)[i] = src[i];
    KernelSoftmax op;
    op.Init(x, y, t);
    op.Process();
}
