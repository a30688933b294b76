"""Ascend 910B3 (Atlas A2, split: 20 AIC + 40 AIV).  Shared A2 numbers: `_a2.py`.

Clock, L2 and HBM of the B3 are not in the facts: they are assumed equal to the B2's.
"""

from ._a2 import A2, make_a2
from ._base import GiB, MiB, assumed, doc

TARGET = make_a2(
    "ascend910b3",
    "Atlas A2 / Ascend 910B3: split cube (AIC) and vector (AIV) cores, 1:2",
    {
        "aic_cores": doc(20, A2 + ": cores 910B3/B4, quoted platform ini"),
        "aiv_cores": doc(40, A2 + ": cores 910B3/B4, quoted platform ini"),
        "clock_mhz": assumed(1800, "assumed: B3 clock not in facts; B2's 1800 MHz"),
        "l2_bytes": assumed(192 * MiB, "assumed: B3 L2 not in facts; B2's 192 MiB"),
        "hbm_bandwidth_gbps": assumed(1600, "assumed: B3 HBM not in facts; B2's ~1.6 TB/s"),
    },
    gm_bytes=assumed(64 * GiB, "assumed: 64 GiB HBM; not in facts"),
)
