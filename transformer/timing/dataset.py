"""The public-measurement dataset of the timing model: load it, and run each point on the model.

Why: the model's parameters are chip numbers, and most were third-party or assumed.  The
dataset (`transformer/timing/data/published.toml`) holds published timings of real kernels
on 910B chips (each with its source), and for each one how ascx reproduces the kernel: a
hand-written Ascend C source in `data/` with its arguments, or an example under a pipeline
at given sizes.  `ascx calibrate --dataset published` fits the model to the `fit` points
(`transformer.timing.calibrate`), and `bench/bench_calibration.py` reports model vs
published time for every point (docs/timing.md).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from ..targets import Target
    from .result import ProfileResult

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: The shipped datasets by name (`ascx calibrate --dataset NAME`).
BUILTIN = {"published": DATA / "published.toml"}

#: Published pipe names (msprof PTO instruction classes and pipes) -> the model's pipes.
PIPE_NAMES = {"M": "M", "MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3", "FIX": "FIX", "V": "V"}


class DatasetError(ValueError):
    """A dataset file that cannot be used (the message names the file and the point)."""


@dataclass(frozen=True)
class Point:
    """One published measurement and its ascx reproduction."""

    id: str
    family: str
    role: str  # "fit" (trains the calibration), "check" (validated only) or "holdout"
    chip: str
    target: str
    kernel: str
    shape: str
    dtype: str
    measured_us: float
    source: Mapping[str, str]
    ascx: Mapping[str, Any]
    pipe_ratios: Mapping[str, float] = field(default_factory=dict)
    tflops: float | None = None
    note: str = ""

    @property
    def cite(self) -> str:
        """`repo` `path` of the source."""
        return f"{self.source.get('repo', '?')} `{self.source.get('path', '?')}`"

    def how(self) -> str:
        """How ascx runs it, in one line."""
        a = self.ascx
        if a["kind"] == "source":
            return f"{a['file']} {' '.join(a['args'])}"
        sizes = " ".join(f"{k}={v}" for k, v in a.get("sizes", {}).items())
        return f"{a['example']} --passes '{a['pipeline']}' {sizes}"


_REQUIRED = ("id", "family", "role", "chip", "target", "kernel", "shape", "dtype", "measured_us", "source", "ascx")


def load_dataset(name_or_path: str | Path = "published") -> list[Point]:
    """The points of a builtin dataset (`published`) or of a TOML file in the same format."""
    path = BUILTIN.get(str(name_or_path), Path(name_or_path))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DatasetError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise DatasetError(f"{path}: not valid TOML: {e}") from None
    out: list[Point] = []
    seen: set[str] = set()
    for i, raw in enumerate(data.get("point", [])):
        where = f"{path}: point {raw.get('id', i + 1)}"
        missing = [k for k in _REQUIRED if k not in raw]
        if missing:
            raise DatasetError(f"{where}: missing {', '.join(missing)}")
        if raw["id"] in seen:
            raise DatasetError(f"{where}: duplicate id")
        seen.add(raw["id"])
        kind = raw["ascx"].get("kind")
        if kind == "source":
            if not (DATA / raw["ascx"]["file"]).is_file():
                raise DatasetError(f"{where}: no source {raw['ascx']['file']} in {DATA}")
        elif kind != "ir":
            raise DatasetError(f"{where}: ascx.kind must be `source` or `ir`, not {kind!r}")
        bad = [p for p in raw.get("pipe_ratios", {}) if p not in PIPE_NAMES]
        if bad:
            raise DatasetError(f"{where}: unknown pipe(s) {', '.join(bad)} in pipe_ratios")
        if not float(raw["measured_us"]) > 0:
            raise DatasetError(f"{where}: measured_us must be > 0")
        out.append(Point(id=raw["id"], family=raw["family"], role=raw["role"], chip=raw["chip"], target=raw["target"],
                         kernel=raw["kernel"], shape=raw["shape"], dtype=raw["dtype"],
                         measured_us=float(raw["measured_us"]), source=dict(raw["source"]), ascx=dict(raw["ascx"]),
                         pipe_ratios={PIPE_NAMES[k]: float(v) for k, v in raw.get("pipe_ratios", {}).items()},
                         tflops=raw.get("tflops"), note=str(raw.get("derived", raw.get("l2_hit", "")))))
    if not out:
        raise DatasetError(f"{path}: no [[point]] tables")
    return out


def profile_point(point: Point, target: "Target | str | None" = None, *, timeout: float | None = None) -> "ProfileResult":
    """Run `point`'s reproduction on the timing model (timing-only) and return its
    `ProfileResult`.  `target` (a Target or name) defaults to the point's own."""
    from ..targets import resolve_target
    from .profile import profile_kernel, profile_source

    tgt = resolve_target(target if target is not None else point.target)
    a = point.ascx
    if a["kind"] == "source":
        return profile_source(DATA / a["file"], tgt, args=[str(x) for x in a["args"]], timing_only=True, timeout=timeout)
    from ..driver import load, transform

    if not (EXAMPLES / a["example"]).is_file():  # examples/ ships with the source tree, not the wheel
        raise DatasetError(f"point {point.id}: reproduces through examples/{a['example']}, which is not next to "
                           f"this installation ({EXAMPLES}); run from a source checkout (`pip install -e .`)")
    loaded = load(str(EXAMPLES / a["example"]), {k: int(v) for k, v in a.get("sizes", {}).items()})
    kernel, _ = transform(loaded.kernel, a["pipeline"], tgt, source=loaded.source)
    return profile_kernel(kernel, tgt, timing_only=True, timeout=timeout, source_name=a["example"])


__all__ = ["BUILTIN", "DATA", "DatasetError", "Point", "load_dataset", "profile_point"]
