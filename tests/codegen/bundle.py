"""Several emitted kernels in ONE C++ build (tests only): a g++ run per kernel is most of the
cost of a codegen test (about 3 s of CPU each, more under sanitizers), so the operator tests
build every example once, together.

Each kernel's translation unit (kernel + harness, `Emitted.combined`) goes into a namespace of
its own with its `main` renamed; the `#define`s and `#include`s (the same for every emitted
kernel: checked) are hoisted to the top, where the headers' include guards make the copies
inside the namespaces no-ops. A new `main` runs the kernel named by its first argument, so one
binary serves every kernel: `./bundle NAME DATA_DIR` (or `NAME --no-data`). Every run is the
emulator's as for a single kernel, sync-hazard check included (a hazard exits with status 4).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

_PRE = re.compile(r"^\s*#\s*(define|include)\b")


@dataclass(frozen=True)
class Bundle:
    binary: Path
    emitted: dict[str, Any]  # kernel name -> Emitted
    line_maps: dict[str, dict[int, str]]  # kernel name -> {bundle line -> origin}


def bundle_source(emitted: Mapping[str, Any]) -> tuple[str, dict[str, dict[int, str]]]:
    """The one translation unit for `emitted` (name -> Emitted) and each kernel's line map."""
    hoisted: list[str] = []
    parts: list[str] = []
    maps: dict[str, dict[int, str]] = {}
    for i, (name, em) in enumerate(emitted.items()):
        text, tmap = em.combined()
        lines = text.splitlines()
        for ln in (ln for ln in lines if _PRE.match(ln)):
            if ln not in hoisted:
                if i > 0 and ln.lstrip().startswith("#define"):
                    raise ValueError(f"{name}: a #define the first kernel lacks cannot be bundled: {ln}")
                hoisted.append(ln)
        parts.append((name, lines, tmap))  # type: ignore[arg-type]
    out = hoisted + [""]
    for name, lines, tmap in parts:  # type: ignore[misc]
        out.append(f"namespace ascx_bundle_{name} {{")
        base = len(out)  # bundle line (1-based) of kernel line k is base + k
        for ln in lines:
            ln = re.sub(r"^int32_t main\(", "int32_t bundled_main(", ln)
            out.append("" if _PRE.match(ln) else ln)  # blank keeps the line numbers
        out.append(f"}}  // namespace ascx_bundle_{name}")
        maps[name] = {base + k: o for k, o in tmap.items()}
    out += ["", "int32_t main(int32_t argc, char *argv[])", "{",
            "    const std::string which = argc > 1 ? argv[1] : \"\";"]
    for name, _, _ in parts:  # type: ignore[misc]
        out.append(f"    if (which == \"{name}\") {{ return ascx_bundle_{name}::bundled_main(argc - 1, argv + 1); }}")
    out += ["    std::fprintf(stderr, \"usage: bundle KERNEL DIR|--no-data\\n\");", "    return 2;", "}", ""]
    return "\n".join(out), maps


def build_bundle(emitted: Mapping[str, Any], *, sanitize: bool = False, optimize: str = "-O0") -> Bundle:
    """Compile every kernel of `emitted` (name -> Emitted, one target) into one binary."""
    from transformer.emulator import compile_source

    scopes = {repr(em.plan.scope_bytes) for em in emitted.values()}
    if len(scopes) != 1:
        raise ValueError(f"kernels for different memory sizes cannot share a build: {scopes}")
    text, maps = bundle_source(emitted)
    scope = next(iter(emitted.values())).plan.scope_bytes
    binary = compile_source(text, sanitize=sanitize, optimize=optimize, scope_bytes=scope, name="bundle")
    return Bundle(binary, dict(emitted), maps)


def build_cases(cases: Mapping[str, Any], *, sanitize: bool = True) -> Bundle:
    """One build of several transformed kernels (case name -> `ir.Kernel`, or `(kernel,
    target)` for a kernel emitted for another target of the same memory sizes): each is
    emitted under its case name (an emitted entry point is `extern "C"`: two kernels of one
    name cannot share a translation unit), so a parametrised test builds once for all its cases."""
    import dataclasses

    from transformer.codegen import emit_ascendc

    emitted = {}
    for name, case in cases.items():
        k, target = case if isinstance(case, tuple) else (case, None)
        emitted[name] = emit_ascendc(dataclasses.replace(k, name=name), target)
    return build_bundle(emitted, sanitize=sanitize)


def check_bundled(b: Bundle, name: str, reference: Any, what: str = "") -> None:
    """Kernel `name` of the bundle matches the interpreter running `reference` on fresh random
    inputs (the seed, from OS entropy, is printed on failure), as `check_emitted` does for a
    kernel built alone; a sanitizer report or a sync hazard fails the run."""
    from transformer.interp import compare_outputs, random_inputs, run

    from .conftest import fresh_seed

    seed = fresh_seed()
    inputs = random_inputs(reference, np.random.default_rng(seed))
    expected = run(reference, inputs)
    diffs = compare_outputs(reference, expected, run_bundled(b, name, inputs))
    bad = [d.describe() for d in diffs if not d.ok]
    assert diffs and not bad, f"{what or name}: emitted code differs from the interpreter (seed {seed}): {bad}"


def run_bundled(b: Bundle, name: str, inputs: Mapping[str, np.ndarray], *, sizes: Mapping[str, int] | None = None,
                out_shapes: Mapping[str, tuple[int, ...]] | None = None) -> dict[str, np.ndarray]:
    """Run kernel `name` of the bundle on `inputs`; its outputs by name (a failed run, a
    sanitizer report or a sync hazard raises `EmulatorRunError`). A run-time-size kernel
    runs at `sizes` (the IR's names, on its command line); its outputs have `out_shapes`."""
    from transformer.codegen import EmulatorRunError, _from_bytes, _to_bytes, size_args
    from transformer.emulator import run_binary

    plan = b.emitted[name].plan
    with tempfile.TemporaryDirectory(prefix="ascx-bundle-") as tmp:
        d = Path(tmp)
        for p in plan.inputs:
            (d / f"{p.name}.bin").write_bytes(_to_bytes(np.asarray(inputs[p.name]), p.dtype))
        r = run_binary(b.binary, [name, str(d), *size_args(plan, sizes)], timeout=300)
        if r.returncode != 0:
            raise EmulatorRunError(f"bundled kernel `{name}` failed (exit {r.returncode}):\n"
                                   + (r.stderr.strip() or r.stdout.strip())[:4000])
        return {p.name: _from_bytes((d / f"{p.name}.bin").read_bytes(), p.dtype, (out_shapes or {}).get(p.name, p.shape))
                for p in plan.outputs}


def profile_bundled(b: Bundle, name: str, target: Any) -> Any:
    """The timing-only profile of kernel `name` of the bundle (`ProfileResult`, hot lines mapped
    back to the kernel's origins), as `profile_kernel` gives for the kernel built alone."""
    from transformer.timing.profile import parse_summary, run_profiled

    plan = b.emitted[name].plan
    summary, _ = run_profiled(b.binary, target, [name, "--no-data"], timing_only=True)
    min_gm = float(sum(p.nbytes for p in plan.params if p.role != "workspace"))
    return parse_summary(summary, target, kernel=plan.name, line_map=b.line_maps[name], min_gm_bytes=min_gm,
                         details={"hot_all": [(h["line"], h["pipe"], float(h["cycles"])) for h in summary.get("hot", [])]})
