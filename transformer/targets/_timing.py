"""Timing-model parameters of the Atlas A2 / 910B family, as facts (cycles per unit).

Why facts: the pipe-level model (`transformer/timing/`) prices each instruction as a sum of
parameter x feature (per-instruction start-up, bytes, repeats, fractals ...).  Every such
parameter is a chip number, so it lives here with its provenance; `--target-file` overrides
(calibration) replace them like any other fact.  Most are third-party measurements or
assumptions (status `assumed`, the source says which): judge the model by how it ranks
variants and calibrate it against `msprof` data.  Table with uncertainties: docs/timing.md.
"""

from __future__ import annotations

from ._base import Fact, assumed, doc

TP = "third party (ascend-facts.md: an open pipe-level cost model of A2/A3)"
ASSUMED = "assumed (ascend-facts.md: timing parameters)"
FACTS_MD = "ascend-facts.md"


def timing_facts() -> dict[str, Fact]:
    """The model's parameters for an A2 core; names start with `timing_`."""
    return {
        # scalar unit
        "timing_s_issue_cycles": assumed(1, ASSUMED + ": in-order scalar, ~1 simple op per cycle; "
                                         "one issue slot per API call"),
        "timing_s_local_access_cycles": assumed(20, ASSUMED + ": GetValue/SetValue on UB cost tens of "
                                                "cycles (address arithmetic and loop overhead folded in)"),
        "timing_s_gm_access_cycles": assumed(200, "assumed: a scalar GM access is an uncached HBM "
                                             "round trip (hundreds of cycles); not in facts"),
        # vector unit
        "timing_v_instr_cycles": assumed(6, TP + ": head ~6 cycles per vector instruction"),
        "timing_v_repeat_cycles": doc(1, "vendor peak (hicann/catlass docs/en/1_Practice/evaluation/"
                                      "bottleneck_analysis_and_optimization.md): 11.06 TOPS fp16 = 48 AIV x "
                                      "1.8 GHz x 128 lanes, one 256 B repeat per cycle per AIV (was 2, third party)"),
        "timing_v_transc_repeat_cycles": assumed(2, TP + ": Exp/Ln/Sqrt/Rsqrt/Div are value-"
                                                 "dependent; assumed 2x the add slope (extra 2/repeat)"),
        "timing_v_reduce_instr_cycles": assumed(10, "assumed: reductions pay an extra head for "
                                                "their reduction tree; not in facts"),
        "timing_v_cast_instr_cycles": assumed(26, TP + ": Cast head ~14 and tail ~18 vs head 6 "
                                              "(extra 8 + 18)"),
        "timing_v_count_tail_cycles": assumed(16, TP + ": count form pays a ~16-cycle floor when "
                                              "bytes are not a multiple of 256"),
        "timing_v_bank_beat_cycles": doc(1, "Ascend C best practices, 'Avoiding Bank Conflicts in the "
                                         "Unified Buffer': the vector unit reads and writes one 32 B row per "
                                         "bank group per beat (instruction cycle); conflicting accesses queue "
                                         "a beat each (8 blocks in one group: 8 beats a repeat)"),
        # cube unit
        "timing_m_instr_cycles": assumed(10, "assumed: Mmad issue / pipeline fill; not in facts"),
        "timing_m_fractal_cycles": assumed(1, "ascend-facts.md: one 16x16x16 fp16 fractal per cycle "
                                           "per AIC (the usual assumption)"),
        "timing_m_fractal_f32_cycles": assumed(2, "assumed: fp32 (16x16x8 fractal) at a quarter of "
                                               "the fp16 MAC rate; not in facts"),
        # data movement (per core)
        "timing_mte2_instr_cycles": assumed(100, "assumed: DMA start-up latency; not in facts"),
        "timing_mte2_ub_byte_cycles": assumed(1 / 58.6, TP + ": GM->UB ~100.9 GiB/s per core "
                                              "(~58.6 B/cycle)"),
        "timing_mte2_l1_byte_cycles": assumed(1 / 78, TP + ": GM->L1 ~135 GiB/s per core (~78 B/cycle)"),
        "timing_mte2_block_cycles": assumed(4, "assumed: per-burst cost of a strided DataCopy; not in facts"),
        "timing_mte2_unaligned_byte_cycles": assumed(0.4 / 58.6, "documented 1.4x (ascend-facts.md: 512 B-"
                                                     "aligned GM copies ~1.4x faster than 32 B-aligned) "
                                                     "x the GM->UB byte cost"),
        "timing_mte3_instr_cycles": assumed(100, "assumed: DMA start-up latency; not in facts"),
        "timing_mte3_byte_cycles": assumed(1 / 109, TP + ": UB->GM ~188 GiB/s per core (~109 B/cycle)"),
        "timing_mte3_block_cycles": assumed(4, "assumed: per-burst cost of a strided DataCopy; not in facts"),
        "timing_mte3_unaligned_byte_cycles": assumed(0.4 / 109, "documented 1.4x (ascend-facts.md) x "
                                                     "the UB->GM byte cost"),
        "timing_mte1_instr_cycles": assumed(20, "assumed: LoadData start-up; not in facts"),
        "timing_mte1_l0a_byte_cycles": assumed(1 / 256, TP + ": L1->L0A ~256 B/cycle (the ini says 512)"),
        "timing_mte1_l0b_byte_cycles": assumed(1 / 128, TP + ": L1->L0B ~128 B/cycle"),
        "timing_fix_instr_cycles": assumed(20, "assumed: Fixpipe start-up; not in facts"),
        "timing_fix_byte_cycles": assumed(1 / 41, TP + ": L0C->GM ~70 GiB/s per core (~41 B/cycle)"),
        # synchronisation and launch
        "timing_sync_latency_cycles": assumed(20, ASSUMED + ": a SetFlag/WaitFlag round trip costs "
                                              "tens of cycles"),
        "timing_xcore_latency_cycles": assumed(200, ASSUMED + ": cross-core flags through GM cost more"),
        "timing_launch_cycles": assumed(10900, "third party (ascend-facts.md: a vendor FA model counts "
                                        "~10,900 cycles launch)"),
        "timing_launch_mix_cycles": assumed(0, "assumed: a MIX_MODE launch costs what others do (no "
                                            "separate figure)"),
        "timing_l2_bytes_per_cycle": assumed(110 * 24, "assumed: the ini's L2 read rate (110 B/cycle) "
                                             "once per AIC (24): every GM byte crosses L2 at this aggregate rate"),
        "timing_block_dispatch_cycles": assumed(2000, "third party (ascend-facts.md: ~2,000 cycles per "
                                                "block dispatch)"),
    }


__all__ = ["timing_facts"]
