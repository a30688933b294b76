// A hand-written f16 add, z = x + y, in the classic double-buffered TQue style of the public
// Ascend C kernel-launch samples, written for ascx from the public API documentation (the
// baseline of bench/bench_kernels.py, issue 14):
//   - one block per vector core (blockDim = the core count given on the command line);
//   - each block owns one contiguous share of the 16 KiB tiles (8192 halves), the first
//     `tiles % blocks` blocks one tile more;
//   - per tile: CopyIn (AllocTensor, DataCopy GM -> UB, EnQue), Compute (DeQue, Add, EnQue,
//     FreeTensor), CopyOut (DeQue, DataCopy UB -> GM, FreeTensor), with two buffers per queue
//     so the load of tile t + 1 overlaps the add and the store of tile t.
//
//   ./add_tque [ELEMENTS [BLOCKS [DIR]]]
// ELEMENTS (default 4096 * 4096, a multiple of 16) halves; BLOCKS (default 48) blocks; with DIR,
// x and y are read from DIR/x.bin, DIR/y.bin (raw f16) and z is written to DIR/z.bin.
#include "kernel_operator.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace AscendC;

namespace {
constexpr int32_t BUFFER_NUM = 2;        // double buffering
constexpr int32_t TILE_LENGTH = 8192;    // halves per tile: 16 KiB
uint32_t g_total = 4096u * 4096u;        // elements of x, y and z (set by main before the launch)
}  // namespace

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t total)
    {
        total_ = total;
        const uint32_t tiles = (total + TILE_LENGTH - 1) / TILE_LENGTH;
        const uint32_t blocks = GetBlockNum(), block = GetBlockIdx();
        const uint32_t q = tiles / blocks, r = tiles % blocks;
        firstTile_ = block * q + (block < r ? block : r);
        tileCount_ = q + (block < r ? 1 : 0);
        xGm.SetGlobalBuffer((__gm__ half *)x, total);
        yGm.SetGlobalBuffer((__gm__ half *)y, total);
        zGm.SetGlobalBuffer((__gm__ half *)z, total);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileCount_; ++i) {
            const uint32_t tile = firstTile_ + i;
            const uint32_t offset = tile * TILE_LENGTH;
            const uint32_t length = total_ - offset < static_cast<uint32_t>(TILE_LENGTH) ? total_ - offset : TILE_LENGTH;
            CopyIn(offset, length);
            Compute(length);
            CopyOut(offset, length);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t offset, uint32_t length)
    {
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        DataCopy(xLocal, xGm[offset], length);
        DataCopy(yLocal, yGm[offset], length);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t length)
    {
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        Add(zLocal, xLocal, yLocal, length);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t offset, uint32_t length)
    {
        LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        DataCopy(zGm[offset], zLocal, length);
        outQueueZ.FreeTensor(zLocal);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<half> xGm, yGm, zGm;
    uint32_t total_ = 0, firstTile_ = 0, tileCount_ = 0;
};

extern "C" __global__ __aicore__ void add_tque(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KernelAdd op;
    op.Init(x, y, z, g_total);
    op.Process();
}

namespace {
bool read_file(const std::string &path, uint8_t *dst, size_t bytes)
{
    FILE *f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return false;
    const size_t got = std::fread(dst, 1, bytes, f);
    std::fclose(f);
    return got == bytes;
}

bool write_file(const std::string &path, const uint8_t *src, size_t bytes)
{
    FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    const size_t put = std::fwrite(src, 1, bytes, f);
    std::fclose(f);
    return put == bytes;
}
}  // namespace

int main(int argc, char **argv)
{
    if (argc > 1) g_total = static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10));
    const uint32_t blocks = argc > 2 ? static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)) : 48u;
    if (g_total == 0 || g_total % 16 != 0 || blocks == 0) {
        std::fprintf(stderr, "usage: %s [ELEMENTS (a multiple of 16) [BLOCKS [DIR]]]\n", argv[0]);
        return 2;
    }
    const size_t bytes = static_cast<size_t>(g_total) * sizeof(half);
    uint8_t *x = GmAlloc(bytes), *y = GmAlloc(bytes), *z = GmAlloc(bytes);
    const std::string dir = argc > 3 ? argv[3] : "";
    if (!dir.empty() && !(read_file(dir + "/x.bin", x, bytes) && read_file(dir + "/y.bin", y, bytes))) {
        std::fprintf(stderr, "cannot read %s/x.bin and %s/y.bin (%zu bytes each)\n", dir.c_str(), dir.c_str(), bytes);
        return 2;
    }
    SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_tque, blocks, x, y, z);
    const bool ok = dir.empty() || write_file(dir + "/z.bin", z, bytes);
    GmFree(x);
    GmFree(y);
    GmFree(z);
    return ok ? 0 : 2;
}
