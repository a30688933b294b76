// Two-phase multi-core kernel ordered by SyncAll (software form, 8 blocks).
// Phase 1: block b writes x[b-slice] * 2 to the GM workspace `work`.
// Phase 2: after SyncAll, block b writes work[b-slice] + work[(7 - b)-slice] to z: every
// block reads a slice another block produced, so without the barrier the result is wrong.
#include "kernel_operator.h"

constexpr int32_t BLOCKS = 8;
constexpr int32_t SLICE = 64;  // floats per block

class KernelSyncAll {
public:
    __aicore__ inline KernelSyncAll() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR work, GM_ADDR z, GM_ADDR syncWs) {
        xGm.SetGlobalBuffer((__gm__ float*)x, BLOCKS * SLICE);
        workGm.SetGlobalBuffer((__gm__ float*)work, BLOCKS * SLICE);
        zGm.SetGlobalBuffer((__gm__ float*)z, BLOCKS * SLICE);
        syncGm.SetGlobalBuffer((__gm__ int32_t*)syncWs, BLOCKS * 8);
        pipe.InitBuffer(inQueue, 2, SLICE * sizeof(float));
        pipe.InitBuffer(outQueue, 1, SLICE * sizeof(float));
        pipe.InitBuffer(syncBuf, BLOCKS * 32);
    }
    __aicore__ inline void Process() {
        int32_t b = AscendC::GetBlockIdx();
        // phase 1
        AscendC::LocalTensor<float> in = inQueue.AllocTensor<float>();
        AscendC::DataCopy(in, xGm[b * SLICE], SLICE);
        inQueue.EnQue(in);
        in = inQueue.DeQue<float>();
        AscendC::LocalTensor<float> out = outQueue.AllocTensor<float>();
        AscendC::Muls(out, in, 2.0f, SLICE);
        outQueue.EnQue(out);
        inQueue.FreeTensor(in);
        out = outQueue.DeQue<float>();
        AscendC::DataCopy(workGm[b * SLICE], out, SLICE);
        outQueue.FreeTensor(out);
        AscendC::SyncAll(syncGm, syncBuf.Get<int32_t>());
        // phase 2
        AscendC::LocalTensor<float> a = inQueue.AllocTensor<float>();
        AscendC::LocalTensor<float> c = inQueue.AllocTensor<float>();
        AscendC::DataCopy(a, workGm[b * SLICE], SLICE);
        AscendC::DataCopy(c, workGm[(BLOCKS - 1 - b) * SLICE], SLICE);
        inQueue.EnQue(a);
        inQueue.EnQue(c);
        a = inQueue.DeQue<float>();
        c = inQueue.DeQue<float>();
        AscendC::LocalTensor<float> s = outQueue.AllocTensor<float>();
        AscendC::Add(s, a, c, SLICE);
        outQueue.EnQue(s);
        inQueue.FreeTensor(a);
        inQueue.FreeTensor(c);
        s = outQueue.DeQue<float>();
        AscendC::DataCopy(zGm[b * SLICE], s, SLICE);
        outQueue.FreeTensor(s);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::TBuf<AscendC::TPosition::VECCALC> syncBuf;
    AscendC::GlobalTensor<float> xGm, workGm, zGm;
    AscendC::GlobalTensor<int32_t> syncGm;
};

extern "C" __global__ __aicore__ void syncall_custom(GM_ADDR x, GM_ADDR work, GM_ADDR z, GM_ADDR syncWs) {
    KernelSyncAll op;
    op.Init(x, work, z, syncWs);
    op.Process();
}
