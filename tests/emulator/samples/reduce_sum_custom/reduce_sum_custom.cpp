// Row sums of x [32, 200] (float; rows not a multiple of 32 B): 4 blocks of 8 rows. Each row is
// loaded with DataCopyPad (zero padding to 208 floats), reduced with the count-form ReduceSum,
// the 8 sums of a block gathered in UB and written with one DataCopyPad.
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t ROWS_PER_BLOCK = 8, COLS = 200, PADDED = 208;

extern "C" __global__ __aicore__ void reduce_sum_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> inQ;
    TBuf<TPosition::VECCALC> work, sums;
    pipe.InitBuffer(inQ, 2, PADDED * sizeof(float));
    pipe.InitBuffer(work, PADDED * sizeof(float));
    pipe.InitBuffer(sums, 32 + ROWS_PER_BLOCK * sizeof(float));
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * ROWS_PER_BLOCK * COLS, ROWS_PER_BLOCK * COLS);
    yGm.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * ROWS_PER_BLOCK, ROWS_PER_BLOCK);
    LocalTensor<float> acc = sums.Get<float>();
    for (uint32_t r = 0; r < ROWS_PER_BLOCK; ++r) {
        LocalTensor<float> row = inQ.AllocTensor<float>();
        DataCopyPad(row, xGm[r * COLS], DataCopyExtParams(1, COLS * sizeof(float), 0, 0, 0), DataCopyPadExtParams<float>(true, 0, 8, 0.0f));
        inQ.EnQue(row);
        row = inQ.DeQue<float>();
        LocalTensor<float> one = acc[8];  // scratch slot for the scalar result
        ReduceSum(one, row, work.Get<float>(), PADDED);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        acc.SetValue(r, one.GetValue(0));
        inQ.FreeTensor(row);
    }
    SetFlag<HardEvent::S_MTE3>(0);
    WaitFlag<HardEvent::S_MTE3>(0);
    DataCopyPad(yGm, acc, DataCopyExtParams(1, ROWS_PER_BLOCK * sizeof(float), 0, 0, 0));
}
