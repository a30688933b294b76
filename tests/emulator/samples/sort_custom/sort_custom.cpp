// Sort 64 float scores descending with their positions: Sort32 sorts two groups of 32, MrgSort
// merges them. Output: 64 (score, index) pairs of 8 bytes (score low, uint32 index high).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void sort_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> idxBuf, tmpBuf;
    pipe.InitBuffer(inQ, 1, 64 * sizeof(float));
    pipe.InitBuffer(outQ, 1, 64 * 8);
    pipe.InitBuffer(idxBuf, 64 * sizeof(uint32_t));
    pipe.InitBuffer(tmpBuf, 64 * 8);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 64);
    yGm.SetGlobalBuffer((__gm__ float*)y, 128);
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, xGm, 64);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<uint32_t> idx = idxBuf.Get<uint32_t>();
    for (uint32_t i = 0; i < 64; ++i) idx.SetValue(i, i);
    SetFlag<HardEvent::S_V>(0);  // scalar writes of the indices before the vector unit reads them
    WaitFlag<HardEvent::S_V>(0);
    LocalTensor<float> sorted = tmpBuf.Get<float>();
    Sort32(sorted, in, idx, 2);
    LocalTensor<float> out = outQ.AllocTensor<float>();
    MrgSortSrcList<float> lists(sorted, sorted[64], sorted, sorted);
    uint16_t lens[4] = {32, 32, 0, 0};
    MrgSort4Info info(lens, false, 0b0011, 1);
    MrgSort(out, lists, info);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<float>();
    DataCopy(yGm, out, 128);
    outQ.FreeTensor(out);
}
