"""Ascend 310P (coupled: cube and vector units in one AI core; UB 256 KiB, L1 1 MiB, L0C 256 KiB).

The facts document only the 310P's UB, L1 and L0C sizes and its coupled architecture.  The
Ascend C API limits (DataCopy, repeat, Mmad, InitBuffer) are documented for the API and taken
as such; everything else (cores, clock, bandwidths, L0A/L0B, per-core rates) is an assumption
to be corrected by a user with the hardware.
"""

from ._a2 import LIMITS, common_facts
from ._base import GiB, KiB, MiB, Fact, Scope, Target, assumed, doc

F = "ascend-facts.md: split architecture paragraph (310P coupled: UB 256 KiB, L1 1 MiB, L0C 256 KiB)"
API_LEVEL = {
    "cube_m", "cube_n", "cube_k_f16", "cube_k_i8", "vector_block_bytes",
    "vector_bytes_per_repeat", "vector_max_repeat", "max_buffers_per_kernel",
    "datacopy_granularity_bytes", "datacopy_max_block_count", "mmad_max_dim", "user_event_ids",
}


def _facts() -> dict[str, Fact]:
    facts: dict[str, Fact] = {}
    for key, f in common_facts().items():
        if key in API_LEVEL:
            facts[key] = f
        else:
            facts[key] = assumed(f.value, f"assumed: A2 value ({f.source})")
    facts.update({
        "cores": assumed(8, "assumed: 8 AI cores (310P3); not in facts"),
        "clock_mhz": assumed(1080, "assumed: 1080 MHz; not in facts"),
        "l2_bytes": assumed(16 * MiB, "assumed: placeholder; not in facts"),
        "hbm_bandwidth_gbps": assumed(204, "assumed: LPDDR4X ~204.8 GB/s; not in facts"),
        "max_queue_buffers_per_position": assumed(8, "assumed: A2 limit (" + LIMITS + ")"),
    })
    return facts


def _scopes() -> dict[str, Scope]:
    gm = assumed(24 * GiB, "assumed: 24 GiB device memory; not in facts")
    return {
        "gm": Scope("gm", gm, gm, doc(32, LIMITS + " (DataCopy 32 B granularity)"),
                    positions=("GM",), description="global memory (device DRAM)"),
        "ub": Scope("ub", doc(256 * KiB, F), doc(256 * KiB, F), doc(32, LIMITS),
                    positions=("VECIN", "VECOUT", "VECCALC", "CO2"),
                    description="unified buffer (shared by cube output and vector unit)"),
        "l1": Scope("l1", doc(1024 * KiB, F),
                    assumed(1024 * KiB - 128, "assumed: A2's 128 B reserve applies"),
                    doc(32, LIMITS), positions=("A1", "B1", "C1"), description="L1 buffer"),
        "l0a": Scope("l0a", assumed(64 * KiB, "assumed: A2 size; not in facts"),
                     assumed(64 * KiB, "assumed: A2 size; not in facts"), doc(512, LIMITS),
                     positions=("A2",), fractal=doc(512, LIMITS + " (LoadData 512 B fractals)"),
                     description="cube left operand"),
        "l0b": Scope("l0b", assumed(64 * KiB, "assumed: A2 size; not in facts"),
                     assumed(64 * KiB, "assumed: A2 size; not in facts"), doc(512, LIMITS),
                     positions=("B2",), fractal=doc(512, LIMITS + " (LoadData 512 B fractals)"),
                     description="cube right operand"),
        "l0c": Scope("l0c", doc(256 * KiB, F), doc(256 * KiB, F),
                     doc(1024, LIMITS + ": 64 B vs 1024 B in the Mmad page; conservative"),
                     positions=("CO1",),
                     fractal=doc(1024, "ascend-facts.md: 16x16 fp32 accumulator fractal"),
                     description="cube accumulator"),
    }


TARGET = Target(
    name="ascend310p",
    arch="coupled",
    description="Ascend 310P: coupled cube + vector AI cores",
    scopes=_scopes(),
    facts=_facts(),
)
TARGET.validate()
