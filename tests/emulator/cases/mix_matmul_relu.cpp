// Mix-mode kernel (910B split architecture): per block, the AIC computes C = A x B
// (32x32x32 fp16 -> fp32) into a GM workspace and signals the two AIVs with a cross-core
// flag; each AIV waits, then applies relu(2 * C) to its 16 rows and writes the output.
// The AIVs then signal back and the AIC waits, so flags are balanced. Prints the outputs.
#include "kernel_operator.h"
#include <cstdio>

using namespace AscendC;

constexpr int M = 32, K = 32, N = 32;

extern "C" __global__ __aicore__ void mix_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR out) {
    int64_t group = GetBlockIdx() / GetTaskRation();
    GlobalTensor<half> aG, bG;
    GlobalTensor<float> wG, oG;
    aG.SetGlobalBuffer((__gm__ half*)a + group * M * K, M * K);
    bG.SetGlobalBuffer((__gm__ half*)b, K * N);
    wG.SetGlobalBuffer((__gm__ float*)ws + group * M * N, M * N);
    oG.SetGlobalBuffer((__gm__ float*)out + group * M * N, M * N);
    TPipe pipe;
    if ASCEND_IS_AIC {
        TQue<TPosition::A1, 1> qa1;
        TQue<TPosition::B1, 1> qb1;
        TQue<TPosition::A2, 1> qa2;
        TQue<TPosition::B2, 1> qb2;
        TQue<TPosition::CO1, 1> qc;
        pipe.InitBuffer(qa1, 1, M * K * 2);
        pipe.InitBuffer(qb1, 1, K * N * 2);
        pipe.InitBuffer(qa2, 1, M * K * 2);
        pipe.InitBuffer(qb2, 1, K * N * 2);
        pipe.InitBuffer(qc, 1, M * N * 4);
        LocalTensor<half> a1 = qa1.AllocTensor<half>();
        LocalTensor<half> b1 = qb1.AllocTensor<half>();
        DataCopy(a1, aG, Nd2NzParams(1, M, K, 0, K, M, 1, 0));
        DataCopy(b1, bG, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
        qa1.EnQue(a1);
        qb1.EnQue(b1);
        a1 = qa1.DeQue<half>();
        b1 = qb1.DeQue<half>();
        LocalTensor<half> a2 = qa2.AllocTensor<half>();
        LocalTensor<half> b2 = qb2.AllocTensor<half>();
        for (int kb = 0; kb < K / 16; ++kb) {
            LoadData(a2[kb * 256], a1[kb * M * 16], LoadData2DParams(0, M / 16, 1, 0, K / 16 - 1, false, 0));
            LoadData(b2[kb * (N / 16) * 256], b1[kb * 256], LoadData2DParams(0, N / 16, K / 16, 0, 0, true, 0));
        }
        qa1.FreeTensor(a1);
        qb1.FreeTensor(b1);
        qa2.EnQue(a2);
        qb2.EnQue(b2);
        a2 = qa2.DeQue<half>();
        b2 = qb2.DeQue<half>();
        LocalTensor<float> c1 = qc.AllocTensor<float>();
        MmadParams mp;
        mp.m = M; mp.n = N; mp.k = K;
        Mmad(c1, a2, b2, mp);
        qa2.FreeTensor(a2);
        qb2.FreeTensor(b2);
        qc.EnQue(c1);
        c1 = qc.DeQue<float>();
        FixpipeParamsV220 fp;
        fp.nSize = N; fp.mSize = M; fp.srcStride = M; fp.dstStride = N;
        Fixpipe(wG, c1, fp);
        qc.FreeTensor(c1);
        CrossCoreSetFlag<2, PIPE_FIX>(3);
        CrossCoreWaitFlag(4);
    }
    if ASCEND_IS_AIV {
        TQue<TPosition::VECIN, 1> qin;
        TQue<TPosition::VECOUT, 1> qout;
        const int rows = M / 2, len = rows * N;
        pipe.InitBuffer(qin, 1, len * 4);
        pipe.InitBuffer(qout, 1, len * 4);
        CrossCoreWaitFlag(3);
        int64_t off = GetSubBlockIdx() * len;
        LocalTensor<float> x = qin.AllocTensor<float>();
        DataCopy(x, wG[off], len);
        qin.EnQue(x);
        x = qin.DeQue<float>();
        LocalTensor<float> y = qout.AllocTensor<float>();
        Muls(y, x, 2.0f, len);
        Relu(y, y, len);
        qout.EnQue(y);
        qin.FreeTensor(x);
        y = qout.DeQue<float>();
        DataCopy(oG[off], y, len);
        qout.FreeTensor(y);
        CrossCoreSetFlag<2, PIPE_MTE3>(4);
    }
}

int main() {
    const int G = 2;
    uint8_t* a = GmAlloc(G * M * K * 2);
    uint8_t* b = GmAlloc(K * N * 2);
    uint8_t* ws = GmAlloc(G * M * N * 4);
    uint8_t* out = GmAlloc(G * M * N * 4);
    half* ah = reinterpret_cast<half*>(a);
    half* bh = reinterpret_cast<half*>(b);
    for (int i = 0; i < G * M * K; ++i) ah[i] = half(static_cast<float>((i * 3) % 17) * 0.25f - 2.0f);
    for (int i = 0; i < K * N; ++i) bh[i] = half(static_cast<float>((i * 11) % 7) - 3.0f);
    SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(mix_kernel, G, a, b, ws, out);
    std::printf("a");
    for (int i = 0; i < G * M * K; ++i) std::printf(" %.9g", static_cast<double>(static_cast<float>(ah[i])));
    std::printf("\nb");
    for (int i = 0; i < K * N; ++i) std::printf(" %.9g", static_cast<double>(static_cast<float>(bh[i])));
    std::printf("\nout");
    float* o = reinterpret_cast<float*>(out);
    for (int i = 0; i < G * M * N; ++i) std::printf(" %.9g", static_cast<double>(o[i]));
    std::printf("\n");
    GmFree(a); GmFree(b); GmFree(ws); GmFree(out);
    return 0;
}
