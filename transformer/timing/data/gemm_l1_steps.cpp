// Blocked fp16 -> fp32 GEMM on the cube, written for the ascx calibration dataset
// (transformer/timing/data/published.toml) to reproduce the *structure* of the published
// hand-written kernels it is compared with: the tile shapes and the load pattern, not their code.
//
//   ./gemm_l1_steps M N K BM BN CORES
//
// Each AIC takes C tiles (BM x BN) round robin. Per K step of 256 it loads A (BM x 256) and
// B (256 x BN) from GM into L1 (Nd2Nz, one burst per row: no reuse across C tiles), then
// runs four sub-steps of K = 64: L1 -> L0A / L0B (LoadData) and one Mmad each; C
// accumulates in L0C and leaves through Fixpipe. L1 and L0A/L0B are double buffered, L0C is
// single buffered. A ragged last column of tiles (N not a multiple of BN) is narrower.
// Timing-only runs (the dataset's) skip the arithmetic; GM buffers are never initialised.
#include "kernel_operator.h"

#include <cstdlib>

using namespace AscendC;

namespace {
int32_t g_m = 0, g_n = 0, g_k = 0, g_bm = 128, g_bn = 256;
constexpr int32_t KL1 = 256;  // K extent of one L1 step
constexpr int32_t KL0 = 64;   // K extent of one L0 sub-step
}  // namespace

extern "C" __global__ __aicore__ void gemm_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    const int32_t M = g_m, N = g_n, K = g_k, BM = g_bm, BN = g_bn;
    TPipe pipe;
    TQue<TPosition::A1, 2> qa1;
    TQue<TPosition::B1, 2> qb1;
    TQue<TPosition::A2, 2> qa2;
    TQue<TPosition::B2, 2> qb2;
    TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa1, 2, BM * KL1 * 2);
    pipe.InitBuffer(qb1, 2, KL1 * BN * 2);
    pipe.InitBuffer(qa2, 2, BM * KL0 * 2);
    pipe.InitBuffer(qb2, 2, KL0 * BN * 2);
    pipe.InitBuffer(qc, 1, BM * BN * 4);
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half *)a, static_cast<uint64_t>(M) * K);
    bGm.SetGlobalBuffer((__gm__ half *)b, static_cast<uint64_t>(K) * N);
    cGm.SetGlobalBuffer((__gm__ float *)c, static_cast<uint64_t>(M) * N);
    const int32_t tn = (N + BN - 1) / BN;
    const int32_t tiles = (M / BM) * tn;
    for (int32_t tile = static_cast<int32_t>(GetBlockIdx()); tile < tiles; tile += static_cast<int32_t>(GetBlockNum())) {
        const int32_t i = tile / tn, j = tile % tn;
        const int32_t n = (j + 1) * BN <= N ? BN : N - j * BN;  // a multiple of 16 (checked in main)
        LocalTensor<float> acc = qc.AllocTensor<float>();
        for (int32_t k = 0; k < K / KL1; ++k) {
            LocalTensor<half> a1 = qa1.AllocTensor<half>();
            DataCopy(a1, aGm[static_cast<uint64_t>(i) * BM * K + static_cast<uint64_t>(k) * KL1],
                     Nd2NzParams(1, BM, KL1, 0, K, BM, 1, 0));
            qa1.EnQue(a1);
            LocalTensor<half> b1 = qb1.AllocTensor<half>();
            DataCopy(b1, bGm[static_cast<uint64_t>(k) * KL1 * N + static_cast<uint64_t>(j) * BN],
                     Nd2NzParams(1, KL1, n, 0, N, KL1, 1, 0));
            qb1.EnQue(b1);
            a1 = qa1.DeQue<half>();
            b1 = qb1.DeQue<half>();
            for (int32_t s = 0; s < KL1 / KL0; ++s) {
                LocalTensor<half> a2 = qa2.AllocTensor<half>();
                for (int32_t kb = 0; kb < KL0 / 16; ++kb) {
                    LoadData(a2[kb * 256], a1[(s * (KL0 / 16) + kb) * BM * 16],
                             LoadData2DParams(0, BM / 16, 1, 0, KL0 / 16 - 1, false, 0));
                }
                qa2.EnQue(a2);
                LocalTensor<half> b2 = qb2.AllocTensor<half>();
                for (int32_t kb = 0; kb < KL0 / 16; ++kb) {
                    LoadData(b2[kb * (n / 16) * 256], b1[(s * (KL0 / 16) + kb) * 256],
                             LoadData2DParams(0, n / 16, KL1 / 16, 0, 0, true, 0));
                }
                qb2.EnQue(b2);
                a2 = qa2.DeQue<half>();
                b2 = qb2.DeQue<half>();
                MmadParams p(BM, n, KL0, false, 0, false, false, false);
                p.cmatrixInitVal = (k == 0 && s == 0);
                Mmad(acc, a2, b2, p);
                qa2.FreeTensor(a2);
                qb2.FreeTensor(b2);
            }
            qa1.FreeTensor(a1);
            qb1.FreeTensor(b1);
        }
        qc.EnQue(acc);
        acc = qc.DeQue<float>();
        FixpipeParamsV220 fp(n, BM, BM, N, false);
        Fixpipe(cGm[static_cast<uint64_t>(i) * BM * N + static_cast<uint64_t>(j) * BN], acc, fp);
        qc.FreeTensor(acc);
    }
}

int main(int argc, char** argv)
{
    if (argc != 7) {
        std::fprintf(stderr, "usage: %s M N K BM BN CORES\n", argv[0]);
        return 2;
    }
    g_m = std::atoi(argv[1]);
    g_n = std::atoi(argv[2]);
    g_k = std::atoi(argv[3]);
    g_bm = std::atoi(argv[4]);
    g_bn = std::atoi(argv[5]);
    const int cores = std::atoi(argv[6]);
    if (g_m % g_bm || g_k % KL1 || g_n % 16 || g_bm % 16 || g_bn % 16 || cores < 1) {
        std::fprintf(stderr, "error: M %% BM, K %% %d, N %% 16 and BM, BN %% 16 must be 0\n", KL1);
        return 2;
    }
    uint8_t* a = GmAlloc(static_cast<size_t>(g_m) * g_k * 2);
    uint8_t* b = GmAlloc(static_cast<size_t>(g_k) * g_n * 2);
    uint8_t* c = GmAlloc(static_cast<size_t>(g_m) * g_n * 4);
    SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(gemm_kernel, cores, a, b, c);
    GmFree(a);
    GmFree(b);
    GmFree(c);
    return 0;
}
