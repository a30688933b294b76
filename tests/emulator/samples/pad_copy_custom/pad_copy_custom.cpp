// Ragged rows: x is [24, 13] half (26-byte rows). Each of 3 blocks copies its 8 rows to UB with
// DataCopyPad (each row padded to 16 halves with 0 on the right), adds 1 to everything, and
// writes the 13 real columns back with DataCopyPad UB -> GM.
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t ROWS = 8, COLS = 13, PADDED = 16;

extern "C" __global__ __aicore__ void pad_copy_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inQ;
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(inQ, 1, ROWS * PADDED * sizeof(half));
    pipe.InitBuffer(outQ, 1, ROWS * PADDED * sizeof(half));
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + GetBlockIdx() * ROWS * COLS, ROWS * COLS);
    yGm.SetGlobalBuffer((__gm__ half*)y + GetBlockIdx() * ROWS * COLS, ROWS * COLS);
    LocalTensor<half> in = inQ.AllocTensor<half>();
    DataCopyExtParams rows(ROWS, COLS * sizeof(half), 0, 0, 0);
    DataCopyPad(in, xGm, rows, DataCopyPadExtParams<half>(true, 0, PADDED - COLS, half(0.0f)));
    inQ.EnQue(in);
    in = inQ.DeQue<half>();
    LocalTensor<half> out = outQ.AllocTensor<half>();
    Adds(out, in, half(1.0f), ROWS * PADDED);
    outQ.EnQue(out);
    inQ.FreeTensor(in);
    out = outQ.DeQue<half>();
    DataCopyPad(yGm, out, rows);
    outQ.FreeTensor(out);
}
