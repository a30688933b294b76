"""The aclrtlaunch_<kernel>.h an NPU host includes (transformer/emulator/launch_header.py):
one per kernel, the kernel's GM parameters taken as void* and converted back to the kernel's
types, scalars kept, launched with ICPU_RUN_KF; the folder build puts them on the include
path of a host that includes one (the public printf / assert samples run that way)."""

from __future__ import annotations

from pathlib import Path

from transformer.emulator.launch_header import kernel_signatures, launch_header, write_launch_headers

KERNELS = '''#include "kernel_operator.h"
// extern "C" __global__ __aicore__ void commented_out(GM_ADDR x)
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, __gm__ uint8_t *y, GM_ADDR z, uint32_t n)
{
}
extern "C" __global__ __aicore__ void empty_custom()
{
}
'''


def test_signatures_and_header_text(tmp_path: Path) -> None:
    k = tmp_path / "add_custom.cpp"
    k.write_text(KERNELS)
    sigs = kernel_signatures([k])
    assert sigs == {"add_custom": [("GM_ADDR", "x"), ("__gm__ uint8_t *", "y"), ("GM_ADDR", "z"), ("uint32_t", "n")],
                    "empty_custom": []}
    text = launch_header("add_custom", sigs["add_custom"])
    assert "inline uint32_t aclrtlaunch_add_custom(uint32_t blockDim, aclrtStream stream, void* x, void* y, void* z, uint32_t n)" in text
    assert ("ICPU_RUN_KF(add_custom, blockDim, reinterpret_cast<GM_ADDR>(x), reinterpret_cast<__gm__ uint8_t *>(y), "
            "reinterpret_cast<GM_ADDR>(z), n);") in text
    assert "#define ACLRT_LAUNCH_KERNEL(kernel) aclrtlaunch_##kernel" in text
    assert "ICPU_RUN_KF(empty_custom, blockDim);" in launch_header("empty_custom", [])
    files = write_launch_headers([k], tmp_path / "gen")
    assert [f.name for f in files] == ["aclrtlaunch_add_custom.h", "aclrtlaunch_empty_custom.h"]
