"""Ascend 910B4 (Atlas A2, split: 20 AIC + 40 AIV at 1500 MHz, 32 GiB, L2 96 MiB).

Shared A2 numbers: `_a2.py`.
"""

from ._a2 import A2, make_a2
from ._base import GiB, MiB, assumed, doc

TARGET = make_a2(
    "ascend910b4",
    "Atlas A2 / Ascend 910B4: split cube (AIC) and vector (AIV) cores, 1:2",
    {
        "aic_cores": doc(20, A2 + ": cores 910B3/B4, quoted platform ini"),
        "aiv_cores": doc(40, A2 + ": cores 910B3/B4, quoted platform ini"),
        "clock_mhz": doc(1500, A2 + ": B4 at 1500 MHz, quoted platform ini"),
        "l2_bytes": doc(96 * MiB, A2 + ": B4 L2 96 MiB, quoted platform ini"),
        "hbm_bandwidth_gbps": assumed(800, "third party (ascend-facts.md): about 0.8 TB/s"),
    },
    gm_bytes=doc(32 * GiB, A2 + ": B4 32 GiB, quoted platform ini"),
)
