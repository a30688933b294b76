"""Profile a kernel on the emulator's pipe-level timing model: `profile_kernel`,
`profile_source`, and `parse_summary` (emulator summary JSON -> `ProfileResult`).

How: emit Ascend C (for an IR kernel), compile it against the emulator (cached by content
hash: `transformer.emulator.compile_source`), run it once with the model's parameters in
`ASCX_TIMING_PARAMS` (written from the target table by `params.params_text`) and read the
summary the emulator writes to `ASCX_PROFILE`.  The accounting runs inside the emulator
while the kernel executes (`ascx_emu/timing.h`); timing-only mode skips the arithmetic and
gives the same cycles.  Sync hazards are collected (not fatal) and returned in the result.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .params import MODEL_VERSION, core_counts, model_parameters, params_text
from .result import PIPES, Hazard, HotLine, PipeStats, ProfileResult
from ..emulator import MIX_AIV_PER_BLOCK
from ..targets import Target


class ProfileError(RuntimeError):
    """The profiled program failed (non-zero exit other than a hazard report)."""


def _ir_line(origin: str | None) -> str | None:
    if not origin:
        return None
    m = re.search(r"<- (\S+)", origin)
    return m.group(1) if m else None


def parse_summary(summary: Mapping[str, Any], target: Target, *, kernel: str, line_map: Mapping[int, str] | None = None,
                  min_gm_bytes: float | None = None, details: Mapping[str, Any] | None = None) -> ProfileResult:
    """A `ProfileResult` from the emulator's summary JSON.

    `line_map`: emitted line -> origin (codegen's template map) for the IR line of hot lines.
    `min_gm_bytes`: the kernel's compulsory GM traffic for the roofline (default: the GM
    bytes the run moved)."""
    p = model_parameters(target)
    clock = p["clock_mhz"]
    aiv, aic = core_counts(target)
    cycles = float(summary["cycles"])
    launches = summary.get("launches", [])
    cores = [c for l in launches for c in l["cores"]]
    # per core kind and pipe: the busiest core of that kind
    pipes: list[PipeStats] = []
    for kind in ("aiv", "aic"):
        kc = [c for c in cores if c["kind"].lower() == kind]
        if not kc:
            continue
        for pipe in PIPES:
            best = max(kc, key=lambda c: c["busy"].get(pipe, 0.0))
            busy = float(best["busy"].get(pipe, 0.0))
            if busy <= 0 and pipe != "S":
                continue
            pipes.append(PipeStats(pipe, kind, busy, busy / cycles if cycles > 0 else 0.0,
                                   {k: float(v) for k, v in best["features"].get(pipe, {}).items()}))
    # roofline: GM traffic at HBM bandwidth, cube work at the cube rate, vector work at the
    # vector rate, each spread over every core of its kind (model parameters = peak rates)
    tot = {pipe: {} for pipe in PIPES}  # summed features over all cores
    gm_bytes = 0.0
    for c in cores:
        gm_bytes += float(c.get("gm_bytes", 0.0))
        for pipe, feats in c["features"].items():
            for k, v in feats.items():
                tot[pipe][k] = tot[pipe].get(k, 0.0) + float(v)
    hbm = (min_gm_bytes if min_gm_bytes is not None else gm_bytes) / p["hbm_bytes_per_cycle"]
    cube = (tot["M"].get("fractal", 0.0) * p["M.fractal"] + tot["M"].get("fractal_f32", 0.0) * p["M.fractal_f32"]) / aic
    vec = (tot["V"].get("repeat", 0.0) * p["V.repeat"]) / aiv
    roof_cycles = max(hbm, cube, vec)
    # the bound: HBM when the shared-bandwidth time dominates, else the busiest pipe of the
    # critical core
    bound = "HBM"
    crit = max(cores, key=lambda c: c["end"]) if cores else None
    makespan = max((l["makespan"] for l in launches), default=0.0)
    hbm_cycles = max((l["hbm_cycles"] for l in launches), default=0.0)
    l2_cycles = max((l.get("l2_cycles", 0.0) for l in launches), default=0.0)
    if crit is not None and makespan >= max(hbm_cycles, l2_cycles):
        bound = max(crit["busy"], key=lambda k: crit["busy"][k])
    elif l2_cycles > hbm_cycles:
        bound = "L2"
    scalar_share = float(crit["scalar_cycles"]) / crit["end"] if crit and crit["end"] > 0 else 0.0
    hot = []
    for h in summary.get("hot", [])[:20]:
        line = h["line"]
        origin = None
        if line_map is not None:
            try:
                origin = line_map.get(int(line.rsplit(":", 1)[1]))
            except ValueError:
                origin = None
        hot.append(HotLine(line, _ir_line(origin), h["pipe"], float(h["cycles"])))
    hazards = tuple(Hazard(h["kind"], h["buffer"], int(h["core"]), h["first_pipe"], h["first_line"], h["second_pipe"],
                           h["second_line"]) for h in summary.get("hazards", []))
    used = 0
    for l in launches:
        per_block = 1 + MIX_AIV_PER_BLOCK if l["mode"] == "MIX" else 1  # one AIC and its AIV
        used = max(used, min(l["block_dim"], l["slots"]) * per_block)
    det = {
        "timing_only": bool(summary.get("timing_only")),
        "launches": [{k: l.get(k) for k in ("name", "mode", "block_dim", "slots", "cycles", "makespan", "hbm_cycles", "gm_bytes",
                                            "footprint_bytes", "hbm_bytes", "l2_cycles", "l2_miss", "launch_cycles")} for l in launches],
        "roofline_cycles": {"hbm": hbm, "cube": cube, "vector": vec},
        "gm_bytes": gm_bytes,
        # every pipe's busy cycles summed over every core of every launch: the same
        # accounting as the hot lines' cycles (`instr` adds one cost to both), so a line's
        # share of it is within [0, 1] (`timing.explain`)
        "busy_cycles_all_cores": sum(float(v) for c in cores for v in c["busy"].values()),
        "cores_run": len(cores),
        "clock_mhz": clock,
        "launch_cycles": p["launch"],
        "critical_core": ({"name": crit["name"], "kind": crit["kind"], "end": crit["end"], "busy": crit["busy"]}
                          if crit is not None else None),
        "cores_available": {"aiv": aiv, "aic": aic},
    }
    det.update(details or {})
    return ProfileResult(kernel=kernel, target=target.name, backend="emulator", cycles=cycles, time_us=cycles / clock,
                         roofline_us=roof_cycles / clock, bound=bound, cores_used=used, pipes=tuple(pipes),
                         hazards=hazards, hot_lines=tuple(hot), scalar_share=scalar_share, model_version=MODEL_VERSION,
                         details=det)


#: A run's time limit when the caller gives none (`ascx profile --timeout` has its own default).
DEFAULT_TIMEOUT_S = 3600.0


def run_profiled(binary: Path, target: Target, args: Sequence[str] = (), *, timing_only: bool = False, timeout: float | None = None,
                 trace: str | Path | None = None, cwd: Path | None = None,
                 progress: Callable[[float], None] | None = None) -> tuple[dict[str, Any], Any]:
    """Run `binary` with the timing model; returns (summary JSON, RunResult).

    `timeout` in seconds (default `DEFAULT_TIMEOUT_S`; 0 or less: no limit) and a host that
    cannot reserve the kernel's GM raise `ResourceError`; `progress` is called with the
    elapsed seconds every second while the binary runs."""
    import subprocess

    from ..diagnostics import ResourceError
    from ..emulator import host_resource_error, run_binary

    limit = DEFAULT_TIMEOUT_S if timeout is None else (timeout if timeout > 0 else None)
    with tempfile.TemporaryDirectory(prefix="ascx-profile-") as tmp:
        params = Path(tmp) / "params.txt"
        params.write_text(params_text(target))
        out = Path(tmp) / "profile.json"
        env = {"ASCX_TIMING_PARAMS": str(params), "ASCX_PROFILE": str(out), "ASCX_HAZARDS": "report",
               "ASCX_TIMING_ONLY": "1" if timing_only else "0"}
        if trace is not None:
            env["ASCX_TIMELINE"] = str(Path(trace).resolve())
        try:
            r = run_binary(binary, list(args), env=env, timeout=limit, cwd=cwd, progress=progress)
        except subprocess.TimeoutExpired:
            raise ResourceError(f"the profiled run did not finish within the time limit of {limit:g} s (stopped)",
                                hint="raise the limit with --timeout SECONDS (--timeout 0: none), or profile at smaller "
                                     "sizes (--size NAME=INT); scalar fallbacks are the usual slow part (ascx emit "
                                     "--explain lists them)") from None
        refused = host_resource_error(r)
        if refused is not None:
            raise refused
        if r.returncode != 0 or not out.is_file():
            raise ProfileError(f"the profiled program failed (exit {r.returncode}):\n" + (r.stderr.strip() or r.stdout.strip())[:4000])
        return json.loads(out.read_text()), r


def _write_inputs(plan: Any, directory: Path) -> None:
    """Zero-filled inputs for a full run (sparse files: nothing written). A timing-only run
    reads none (`--no-data`: the model's cycles do not depend on the data, emitted kernels
    have no data-dependent control flow)."""
    for p in plan.inputs:
        with open(directory / f"{p.name}.bin", "wb") as f:
            f.truncate(p.nbytes)


def profile_kernel(kernel: Any, target: Target | str, *, timing_only: bool | None = None, timeout: float | None = None,
                   source_name: str | None = None, trace: str | Path | None = None, emitted: Any = None,
                   progress: Callable[[float], None] | None = None, at_sizes: bool = False) -> ProfileResult:
    """Emit `kernel` for `target`, compile (cached), run on the emulator with the pipe-level
    model and return its profile. `timing_only` (default True) skips the arithmetic and the
    data: the harness runs with `--no-data`, GM stays reserved, untouched, zero (not for a
    kernel with data-dependent indices: it runs with zero inputs, every gathered row row 0). `timeout`
    and `progress`: see `run_profiled`. `at_sizes`: `emitted` is a run-time-size kernel (one
    build for every shape) run, timing-only, at the sizes of `kernel` (on its command line)."""
    from ..codegen import compile_emitted, emit_ascendc
    from ..targets import resolve_target

    tgt = resolve_target(target)
    em = emitted or emit_ascendc(kernel, tgt, source_name=source_name or "")
    binary = compile_emitted(em)
    _, tmap = em.combined()
    plan = em.plan
    # a kernel that indexes through a tensor has data-dependent addresses: it runs with its
    # (zero) data, so every gathered index is 0 and in bounds (a timing-only run leaves UB
    # unwritten and would address through whatever it holds)
    from ..gathers import kernel_has_gathers

    only = (True if timing_only is None else timing_only) and not (hasattr(kernel, "body") and kernel_has_gathers(kernel))
    with tempfile.TemporaryDirectory(prefix="ascx-profile-data-") as tmp:
        if not only:
            _write_inputs(plan, Path(tmp))
        if at_sizes and not only:
            raise ValueError("a run-time-size kernel profiles at other sizes timing-only")
        from ..codegen import size_args

        extra = size_args(plan, kernel.size_values()) if at_sizes else []
        summary, _ = run_profiled(binary, tgt, (["--no-data"] if only else [tmp]) + extra, timing_only=only,
                                  timeout=timeout, trace=trace, progress=progress)
    min_gm = float(sum(p.nbytes for p in plan.params if p.role != "workspace"))
    if at_sizes:  # the GM traffic's floor at the run's sizes, not at the default's
        from ..ir import DTYPE_BYTES, eval_int_expr

        at = kernel.size_values()
        min_gm = float(sum(math.prod(eval_int_expr(d, at) for d in t.shape) * DTYPE_BYTES[t.dtype]
                           for t in (*kernel.inputs, *kernel.outputs)))
    return parse_summary(summary, tgt, kernel=plan.name, line_map=tmap, min_gm_bytes=min_gm,
                         details={"kind": plan.kind, "block_dim": plan.block_dim, "source": source_name or "",
                                  # every costly line (the emulator's 40 hottest), for per-nest attribution
                                  "hot_all": [(h["line"], h["pipe"], float(h["cycles"])) for h in summary.get("hot", [])]})


#: User code is compiled with the usual warnings, shown but not fatal (no -Werror).
_USER_WARNINGS = ("-Wall", "-Wextra")


def profile_source(cpp_path: str | Path, target: Target | str, *, args: Sequence[str] = (), timeout: float | None = None,
                   timing_only: bool = False, trace: str | Path | None = None,
                   extra_flags: Sequence[str] = (), progress: Callable[[float], None] | None = None) -> ProfileResult:
    """Profile hand-written Ascend C on the same model: a `.cpp` with its own `main`, or a
    sample folder (the `.cpp` defining `main` plus its kernel files, run in the folder, which
    it reads `input/` from: `transformer.emulator.folder`).

    User code is built without `-Werror` (public samples warn, e.g. on unused parameters);
    the compiler's warnings are in `details["warnings"]`. The default runs the arithmetic
    too: hand-written hosts often check their own results, which a timing-only run (the
    arithmetic skipped) would fail. `extra_flags` go to g++ (`-D` macros, `-DASCX_EMU_NO_AUTO_SYNC=1`).
    `timeout` and `progress`: see `run_profiled`."""
    from ..emulator import build_warnings, compile_source
    from ..emulator.folder import build_folder, make_output_dir
    from ..targets import resolve_target

    tgt = resolve_target(target)
    path = Path(cpp_path)
    scope = {s.upper(): int(tgt.scope(s).physical_bytes) for s in ("ub", "l1", "l0a", "l0b", "l0c")}
    cwd = None
    if path.is_dir():
        _, binary = build_folder(path, scope_bytes=scope, warnings_as_errors=False, extra_flags=(*_USER_WARNINGS, *extra_flags))
        cwd = path
        make_output_dir(path)
        kernel = path.resolve().name
    else:
        binary = compile_source(path, scope_bytes=scope, warnings_as_errors=False, extra_flags=(*_USER_WARNINGS, *extra_flags),
                                name=re.sub(r"\W", "_", path.stem) or "kernel")
        kernel = path.stem
    try:
        summary, _ = run_profiled(binary, tgt, args, timing_only=timing_only, timeout=timeout, trace=trace, cwd=cwd,
                                  progress=progress)
    except ProfileError as e:
        if timing_only:
            raise ProfileError(f"{e}\n(a timing-only run skips the arithmetic, so a program that checks its own "
                               "results fails; profile without --timing-only)") from None
        raise
    return parse_summary(summary, tgt, kernel=kernel, details={"source": str(path), "warnings": build_warnings(binary)})


__all__ = ["ProfileError", "parse_summary", "profile_kernel", "profile_source", "run_profiled"]
