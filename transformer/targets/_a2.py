"""Numbers shared by the Atlas A2 / Ascend 910B family (NPU arch 2201, "dav-c220").

Why a shared module: the 910B1..B4 variants have the same core micro-architecture (same UB,
L1, L0 sizes, same cube and vector units, same Ascend C limits) and differ in core counts,
clock, L2 and HBM.  Each variant module (`ascend910b1.py`, ...) calls `make_a2` with its own
facts; everything else is here, once.  Sources refer to `docs/ascend-facts.md`.
"""

from __future__ import annotations

from ._base import KiB, Fact, Scope, Target, assumed, doc
from ._timing import timing_facts

A2 = "ascend-facts.md: Atlas A2 table"
INI = "ascend-facts.md: quoted platform ini (per-core rate; units undocumented)"
LIMITS = "ascend-facts.md: Alignment and limits"
UB_BANKS = ("Ascend C best practices, 'Avoiding Bank Conflicts in the Unified Buffer' (hiascend "
            "atlas_ascendc_best_practices_10_0025, Atlas A2/A3)")


def a2_scopes(gm_bytes: Fact) -> dict[str, Scope]:
    """The A2 memory scopes; `gm_bytes` is the variant's HBM capacity."""
    return {
        "gm": Scope("gm", gm_bytes, gm_bytes, doc(32, LIMITS + " (DataCopy 32 B granularity)"),
                    positions=("GM", "CO2"), description="global memory (HBM)"),
        "ub": Scope("ub", doc(192 * KiB, A2), doc(192 * KiB, A2 + " (API temp reserve is "
                    "requested separately: api_temp_bytes)"), doc(32, LIMITS),
                    positions=("VECIN", "VECOUT", "VECCALC"),
                    description="unified buffer of a vector core (AIV)"),
        "l1": Scope("l1", doc(512 * KiB, A2), doc(512 * KiB - 128, A2 + " (128 B reserved)"),
                    doc(32, LIMITS), positions=("A1", "B1", "C1"),
                    description="L1 buffer of a cube core (AIC)"),
        "l0a": Scope("l0a", doc(64 * KiB, A2), doc(64 * KiB, A2), doc(512, LIMITS),
                     positions=("A2",), fractal=doc(512, LIMITS + " (LoadData 512 B fractals)"),
                     description="cube left operand (Zz fractals)"),
        "l0b": Scope("l0b", doc(64 * KiB, A2), doc(64 * KiB, A2), doc(512, LIMITS),
                     positions=("B2",), fractal=doc(512, LIMITS + " (LoadData 512 B fractals)"),
                     description="cube right operand (Zn fractals)"),
        "l0c": Scope("l0c", doc(128 * KiB, A2), doc(128 * KiB, A2),
                     doc(1024, LIMITS + ": 64 B vs 1024 B in the Mmad page; conservative"),
                     positions=("CO1",),
                     fractal=doc(1024, A2 + ": 16x16 fp32 accumulator fractal"),
                     description="cube accumulator (Nz fractals)"),
        "bt": Scope("bt", doc(1 * KiB, A2), doc(1 * KiB, A2),
                    doc(64, "cce intrinsic page copy_cbuf_to_bt: the bias-table destination is 64 B "
                        "aligned, lenBurst in 64 B"),
                    positions=("C2",),
                    description="bias table"),
        "fb": Scope("fb", doc(7 * KiB, A2), doc(7 * KiB, A2),
                    assumed(64, "assumed: fixpipe buffer granularity not in facts"),
                    positions=("C2PIPE2GM",), description="fixpipe buffer"),
    }


def common_facts() -> dict[str, Fact]:
    """Facts identical on every A2 variant."""
    return {
        "l2_read_bytes_per_cycle": doc(110, INI),
        "l2_write_bytes_per_cycle": doc(86, INI),
        "mte2_gm_to_ub_bytes_per_cycle": doc(32, INI + ": ddr 32"),
        "mte2_gm_to_l1_bytes_per_cycle": assumed(32, "assumed: same as ini ddr rate (32)"),
        "mte1_l1_to_l0a_bytes_per_cycle": doc(512, INI + ": L1->L0A 512"),
        "mte1_l1_to_l0b_bytes_per_cycle": assumed(512, "assumed: same as L1->L0A (512)"),
        "mte3_ub_to_gm_bytes_per_cycle": doc(64, INI + ": UB->L2 64"),
        "fix_l0c_to_gm_bytes_per_cycle": assumed(64, "assumed: same as UB->L2 (64); "
                                                 "not in facts"),
        "cube_m": doc(16, A2 + ": cube unit 16x16x16 fp16"),
        "cube_n": doc(16, A2 + ": cube unit 16x16x16 fp16"),
        "cube_k_f16": doc(16, A2 + ": cube unit 16x16x16 fp16"),
        "cube_k_i8": doc(32, A2 + ": cube unit int8 16x32x16"),
        "cube_fractals_per_cycle": assumed(1, A2 + ": one fractal per cycle is the usual "
                                           "assumption"),
        "cube_macs_per_cycle_f16": assumed(16 * 16 * 16, "assumed: 16x16x16 x one fractal "
                                           "per cycle"),
        "vector_block_bytes": doc(32, A2 + ": vector repeat = 8 blocks x 32 B"),
        "vector_bytes_per_repeat": doc(256, A2 + ": vector repeat = 8 blocks x 32 B"),
        "vector_repeats_per_cycle": assumed(1, A2 + ": one repeat per cycle assumed"),
        "vector_max_repeat": doc(255, LIMITS + ": repeatTimes <= 255"),
        # UB banks (the timing model's bank conflicts, docs/timing.md "UB banks")
        "ub_bank_groups": doc(16, UB_BANKS + ": 16 bank groups of 3 banks"),
        "ub_banks_per_group": doc(3, UB_BANKS + ": 48 banks, 3 per group (bank15, bank31, bank47 "
                                  "form a group)"),
        "ub_bank_row_bytes": doc(32, UB_BANKS + ": a bank row is 32 B"),
        "ub_bank_depth": doc(128, UB_BANKS + ": a bank is 128 rows (4 KB)"),
        "max_queue_buffers_per_position": doc(8, LIMITS + ": InitBuffer, 8 queue buffers per "
                                              "TPosition on A2"),
        "max_buffers_per_kernel": doc(64, LIMITS + ": InitBuffer, 64 buffers per kernel"),
        "datacopy_granularity_bytes": doc(32, LIMITS + ": DataCopy count*sizeof(T) % 32 == 0"),
        "datacopy_max_block_count": doc(4095, LIMITS + ": DataCopyParams blockCount <= 4095"),
        "mmad_max_dim": doc(4095, LIMITS + ": Mmad m, n, k <= 4095"),
        "user_event_ids": doc(6, "ascend-facts.md: Pipes (event ids 0-5 free for users)"),
        "gm_fast_alignment_bytes": doc(512, A2 + ": 512 B-aligned GM copies ~1.4x faster"),
        "api_temp_bytes": doc(8 * KiB, A2 + ": top 8 KiB of UB for Compare/Select-style APIs"),
        **timing_facts(),
    }


def make_a2(name: str, description: str, variant: dict[str, Fact], gm_bytes: Fact) -> Target:
    """An A2 target: common facts overridden by the variant's own (`variant` wins)."""
    from ._calibrated import apply

    facts = common_facts()
    facts.update(variant)
    facts = apply(name, facts)
    t = Target(name=name, arch="split", description=description, scopes=a2_scopes(gm_bytes),
               facts=facts)
    t.validate()
    return t
