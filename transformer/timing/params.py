"""The timing model's parameters, read from the target table: `PIPE_FEATURES`,
`model_parameters`, and the parameter file handed to the emulator.

Why linear: a pipe's busy cycles are sum(parameter x feature) over its instructions, where
the features are what the emulator counts while the kernel runs (instructions, bytes,
repeats, fractals, bursts ...).  Calibration (`ascx calibrate`) fits the parameters against
measured per-pipe busy times with a linear solve, and a `--target-file` override of the
facts changes the model without touching code.  Every parameter is a `timing_*` fact in
`transformer/targets/` with its status and source (docs/timing.md lists them).
"""

from __future__ import annotations

from ..targets import Target

#: Changes whenever the model's arithmetic changes (part of every profile, and of caches).
MODEL_VERSION = "ascx-pipe-4"

#: pipe -> feature (as counted by the emulator, `ascx_emu/timing.h`) -> target fact name.
PIPE_FEATURES: dict[str, dict[str, str]] = {
    "S": {
        "issue": "timing_s_issue_cycles",
        "local_access": "timing_s_local_access_cycles",
        "gm_access": "timing_s_gm_access_cycles",
    },
    "V": {
        "instr": "timing_v_instr_cycles",
        "repeat": "timing_v_repeat_cycles",
        "transc_repeat": "timing_v_transc_repeat_cycles",
        "reduce_instr": "timing_v_reduce_instr_cycles",
        "cast_instr": "timing_v_cast_instr_cycles",
        "count_tail": "timing_v_count_tail_cycles",
        "bank_beat": "timing_v_bank_beat_cycles",
    },
    "M": {
        "instr": "timing_m_instr_cycles",
        "fractal": "timing_m_fractal_cycles",
        "fractal_f32": "timing_m_fractal_f32_cycles",
    },
    "MTE1": {
        "instr": "timing_mte1_instr_cycles",
        "l0a_byte": "timing_mte1_l0a_byte_cycles",
        "l0b_byte": "timing_mte1_l0b_byte_cycles",
    },
    "MTE2": {
        "instr": "timing_mte2_instr_cycles",
        "ub_byte": "timing_mte2_ub_byte_cycles",
        "l1_byte": "timing_mte2_l1_byte_cycles",
        "block": "timing_mte2_block_cycles",
        "unaligned_byte": "timing_mte2_unaligned_byte_cycles",
    },
    "MTE3": {
        "instr": "timing_mte3_instr_cycles",
        "byte": "timing_mte3_byte_cycles",
        "block": "timing_mte3_block_cycles",
        "unaligned_byte": "timing_mte3_unaligned_byte_cycles",
    },
    "FIX": {
        "instr": "timing_fix_instr_cycles",
        "byte": "timing_fix_byte_cycles",
    },
}

#: Latencies and whole-kernel parameters (not per-pipe busy time): name -> fact.
GLOBAL_FACTS: dict[str, str] = {
    "sync_latency": "timing_sync_latency_cycles",
    "xcore_latency": "timing_xcore_latency_cycles",
    "launch": "timing_launch_cycles",
    "launch_mix": "timing_launch_mix_cycles",
    "l2_bytes_per_cycle": "timing_l2_bytes_per_cycle",
    "block_dispatch": "timing_block_dispatch_cycles",
}


#: The UB bank layout facts handed to the emulator under their own names (`ascx_emu/timing.h`
#: bank_extra_beats): groups, banks per group, row bytes, rows per bank.
UB_BANK_FACTS: tuple[str, ...] = ("ub_bank_groups", "ub_banks_per_group", "ub_bank_row_bytes", "ub_bank_depth")


def core_counts(target: Target) -> tuple[int, int]:
    """(vector cores, cube cores): AIV/AIC on split chips; `cores` twice on coupled ones."""
    if target.has("aiv_cores") and target.has("aic_cores"):
        return int(target.value("aiv_cores")), int(target.value("aic_cores"))
    n = int(target.value("cores"))
    return n, n


def hbm_bytes_per_cycle(target: Target) -> float:
    """Aggregate HBM bandwidth in bytes per core-clock cycle (shared by all cores)."""
    return float(target.value("hbm_bandwidth_gbps")) * 1e9 / (float(target.value("clock_mhz")) * 1e6)


def model_parameters(target: Target) -> dict[str, float]:
    """Every parameter of the model for `target`, read through the Target (so fact overrides
    take effect): `"PIPE.feature"` -> cycles per unit, the latencies of `GLOBAL_FACTS`, and
    `clock_mhz`, `hbm_bytes_per_cycle`, `gm_align`, `aiv_cores`, `aic_cores`, `l2_bytes`, and
    the UB bank layout (`UB_BANK_FACTS`) where the target has it."""
    out: dict[str, float] = {}
    for pipe, feats in PIPE_FEATURES.items():
        for feat, fact in feats.items():
            out[f"{pipe}.{feat}"] = float(target.value(fact))
    for name, fact in GLOBAL_FACTS.items():
        out[name] = float(target.value(fact))
    aiv, aic = core_counts(target)
    out.update(clock_mhz=float(target.value("clock_mhz")), hbm_bytes_per_cycle=hbm_bytes_per_cycle(target),
               gm_align=float(target.value("gm_fast_alignment_bytes")), aiv_cores=float(aiv), aic_cores=float(aic),
               l2_bytes=float(target.value("l2_bytes")))
    # The UB bank layout (bank conflicts of vector instructions); a target without it has none.
    for name in UB_BANK_FACTS:
        if target.has(name):
            out[name] = float(target.value(name))
    return out


def params_text(target: Target) -> str:
    """The parameter file the emulator reads (`ASCX_TIMING_PARAMS`): `PIPE feature value`
    lines and `name value` lines."""
    lines = [f"# ascx timing parameters ({MODEL_VERSION}) for {target.name}"]
    for key, value in model_parameters(target).items():
        if "." in key:
            pipe, feat = key.split(".", 1)
            lines.append(f"{pipe} {feat} {value!r}")
        else:
            lines.append(f"{key} {value!r}")
    return "\n".join(lines) + "\n"
