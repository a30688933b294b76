"""Ascend 910B2 (Atlas A2, split: 24 AIC + 48 AIV at 1800 MHz).  The default target.

Shared A2 numbers: `_a2.py`.
"""

from ._a2 import A2, make_a2
from ._base import GiB, MiB, assumed, doc

TARGET = make_a2(
    "ascend910b2",
    "Atlas A2 / Ascend 910B2: split cube (AIC) and vector (AIV) cores, 1:2",
    {
        "aic_cores": doc(24, A2 + ": cores 910B1/B2, quoted platform ini"),
        "aiv_cores": doc(48, A2 + ": cores 910B1/B2, quoted platform ini"),
        "clock_mhz": doc(1800, A2 + ": clock 910B2, quoted platform ini"),
        "l2_bytes": doc(192 * MiB, A2 + ": L2 192 MiB (B1/B2), quoted"),
        "hbm_bandwidth_gbps": assumed(1600, "third party (ascend-facts.md): about 1.5-1.6 TB/s"),
    },
    gm_bytes=assumed(64 * GiB, "assumed: 64 GiB HBM; not in facts"),
)
