// y = 1.5 * x + y in place on GM (x half, y float: the mixed-precision Axpy), 4 blocks of 512.
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void axpy_custom(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> xQ, yQ;
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(xQ, 1, 512 * sizeof(half));
    pipe.InitBuffer(yQ, 1, 512 * sizeof(float));
    GlobalTensor<half> xGm;
    GlobalTensor<float> yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + GetBlockIdx() * 512, 512);
    yGm.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * 512, 512);
    LocalTensor<half> xl = xQ.AllocTensor<half>();
    LocalTensor<float> yl = yQ.AllocTensor<float>();
    DataCopy(xl, xGm, 512);
    DataCopy(yl, yGm, 512);
    xQ.EnQue(xl);
    yQ.EnQue(yl);
    xl = xQ.DeQue<half>();
    yl = yQ.DeQue<float>();
    Axpy(yl, xl, half(1.5f), 512);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(yGm, yl, 512);
    xQ.FreeTensor(xl);
    yQ.FreeTensor(yl);
}
