"""The learned cost model: predict a candidate's measured time from features of its plan.

Why: the analytic estimate (`estimate.py`) is a prior that cannot see some costs (loop
order, tile overheads, how the pipes really overlap). Every measurement in the tuning DB is
a labelled example; a model over plan-level features, refitted as measurements arrive,
ranks thousands of unmeasured candidates for the price of their features (no compile).

Features (`features`, `FEATURE_NAMES`), all computed without compiling:
- from the estimate: log2 of each pipe's cycles (MTE2, MTE3, MTE1, V, M, S, FIX), of the
  estimated time and of the GM roofline; the bound as a one-hot;
- from the kernel: nests, `@pipeline` loops and their stages, `@cores` split, `@gemm` /
  `@conv` / `@flash` flags and their blocks (log2), copies, on-chip bytes per scope (log2),
  tiles per core (the staging loops' trips over the cores), loop count, the largest
  innermost trip (log2);
- from the pipeline: which passes it uses.

Model (`CostModel`): log(measured) = log(estimate) + a gradient-boosted ensemble of small
regression trees (numpy, written here: depth 3, shrinkage 0.1) fitted on the residual; with
fewer than `MIN_FIT` examples the model is the prior. So it starts as the estimate and learns
where the estimate is wrong. `spearman` gives the rank correlation used to judge it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from .. import ir

if TYPE_CHECKING:
    from ..targets import Target
    from .db import TuningDB
    from .space import Candidate

PIPES = ("MTE2", "MTE3", "MTE1", "V", "M", "S", "FIX")
BOUNDS = ("MTE2", "MTE3", "MTE1", "V", "M", "S", "FIX", "HBM")
SCOPES = ("ub", "l1", "l0a", "l0b", "l0c")
PASSES = ("fuse", "online_softmax", "round_operand", "flash_attention", "interchange", "layout", "gemm",
          "conv_gemm", "tile", "unroll", "double_buffer", "multicore")
FEATURE_NAMES: tuple[str, ...] = (
    tuple(f"log2 {p} cycles" for p in PIPES) + ("log2 estimate us", "log2 roofline us")
    + tuple(f"bound {b}" for b in BOUNDS)
    + ("nests", "pipeline loops", "pipeline stages", "cores", "gemm", "conv", "flash", "log2 block m", "log2 block n",
       "log2 block k", "copies", "log2 tiles per core", "loops", "log2 innermost trip")
    + tuple(f"log2 {s} bytes" for s in SCOPES)
    + tuple(f"pass {p}" for p in PASSES))
MIN_FIT = 4


def _l2(x: float) -> float:
    return math.log2(x + 1.0)


def features(kernel: ir.Kernel, target: "Target", passes: Sequence[str] = ()) -> np.ndarray:
    """The feature vector of a candidate kernel (FEATURE_NAMES order)."""
    from .estimate import estimate

    try:
        e = estimate(kernel, target)
        pipes, t, roof, bound = e.pipes, e.time_us, e.roofline_us, e.bound
    except Exception:  # an estimate failure is a feature too: very slow
        pipes, t, roof, bound = {}, 1e9, 0.0, ""
    f: list[float] = [_l2(float(pipes.get(p, 0.0))) for p in PIPES] + [_l2(t), _l2(roof)]
    f += [1.0 if bound == b else 0.0 for b in BOUNDS]
    f += _structure(kernel, target)
    names = {p.split("{", 1)[0] for p in passes}
    f += [1.0 if p in names else 0.0 for p in PASSES]
    return np.array(f, dtype=float)


def _structure(kernel: ir.Kernel, target: "Target") -> list[float]:
    from passes import _rewrite as R

    sizes = kernel.size_values()
    nests = [s for s in kernel.body if isinstance(s, ir.For)]
    loops = [lp for s in nests for lp in ir.iter_loops([s])]
    pipe = [lp for lp in loops if lp.annotation("pipeline") is not None]
    stages = sum(int(lp.annotation("pipeline").get("stages") or 2) for lp in pipe)  # type: ignore[union-attr]
    cores = max([int(a.get("n") or target.cores) for lp in loops if (a := lp.annotation("cores")) is not None] or [0])
    ann = {n: next((a for s in nests if (a := s.annotation(n)) is not None), None) for n in ("gemm", "conv", "flash")}
    blk = ann["gemm"] or ann["conv"] or ann["flash"]

    def b(key: str) -> float:
        v = blk.get(key) if blk is not None else None
        return _l2(float(v)) if isinstance(v, (int, float)) or (isinstance(v, str) and v.isdigit()) else 0.0

    copies = sum(1 for s in ir.iter_stmts(kernel.body) if isinstance(s, ir.Copy))
    # the staging loops: those holding a copy directly; their trips over the cores
    tiles = 0.0
    for s in nests:
        trips = 1
        for lp in ir.iter_loops([s]):
            if any(isinstance(x, ir.Copy) for x in lp.body):
                trips = max(trips, int(R.loop_extent(lp, sizes) or 1))
        tiles += trips
    inner = [int(R.loop_extent(lp, sizes) or 1) for lp in loops if not any(isinstance(x, ir.For) for x in lp.body)]
    by_scope = {s: 0 for s in SCOPES}
    for d in kernel.buffers:
        if d.kind == "local" and d.scope in by_scope:
            n = 1
            for dim in d.shape:
                n *= int(R.eval_const(dim, sizes) or 1)
            by_scope[d.scope] += n * ir.DTYPE_BYTES.get(d.dtype, 4)
    return [float(len(nests)), float(len(pipe)), float(stages), float(cores), float(ann["gemm"] is not None),
            float(ann["conv"] is not None), float(ann["flash"] is not None), b("m"), b("n") or b("q"), b("k") or b("g"),
            float(copies), _l2(tiles / max(1, int(target.cores))), float(len(loops)), _l2(max(inner or [1]))] + \
        [_l2(float(by_scope[s])) for s in SCOPES]


# ---- a small gradient-boosted tree ensemble ---------------------------------------------


@dataclass
class _Tree:
    """A regression tree as nested tuples: (feature, threshold, left, right) or a leaf value."""

    root: Any

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.array([self._one(self.root, x) for x in X])

    @staticmethod
    def _one(node: Any, x: np.ndarray) -> float:
        while isinstance(node, tuple):
            f, thr, left, right = node
            node = left if x[f] <= thr else right
        return float(node)


def _grow(X: np.ndarray, r: np.ndarray, depth: int, min_leaf: int) -> Any:
    """The split of least squared error (every feature, midpoints of its sorted values)."""
    if depth == 0 or len(r) < 2 * min_leaf:
        return float(r.mean())
    best: tuple[float, int, float] | None = None
    base = float(((r - r.mean()) ** 2).sum())
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        xs, rs = X[order, f], r[order]
        csum, csq = np.cumsum(rs), np.cumsum(rs ** 2)
        n = len(rs)
        i = np.arange(min_leaf, n - min_leaf + 1)  # rows left of the split
        if len(i) == 0:
            continue
        left = csq[i - 1] - csum[i - 1] ** 2 / i
        right = (csq[-1] - csq[i - 1]) - (csum[-1] - csum[i - 1]) ** 2 / (n - i)
        err = np.where(xs[i - 1] < xs[np.minimum(i, n - 1)], left + right, np.inf)  # no split between equal values
        j = int(np.argmin(err))
        if np.isfinite(err[j]) and (best is None or err[j] < best[0] - 1e-12):
            best = (float(err[j]), f, float((xs[i[j] - 1] + xs[i[j]]) / 2))
    if best is None or best[0] >= base - 1e-12:
        return float(r.mean())
    _, f, thr = best
    m = X[:, f] <= thr
    return (f, thr, _grow(X[m], r[m], depth - 1, min_leaf), _grow(X[~m], r[~m], depth - 1, min_leaf))


@dataclass
class CostModel:
    """log time = log prior + boosted trees on the residual (see the module docstring)."""

    rounds: int = 60
    depth: int = 3
    rate: float = 0.1
    min_leaf: int = 2
    trees: list[_Tree] = field(default_factory=list)
    bias: float = 0.0
    n: int = 0

    PRIOR = FEATURE_NAMES.index("log2 estimate us")

    def _prior(self, X: np.ndarray) -> np.ndarray:
        return (2.0 ** X[:, self.PRIOR] - 1.0).clip(min=1e-9)

    def fit(self, X: np.ndarray, y_us: np.ndarray) -> "CostModel":
        """Fit on features X and measured times (us)."""
        self.trees, self.n = [], len(y_us)
        if self.n < MIN_FIT:
            self.bias = 0.0
            return self
        resid = np.log(np.asarray(y_us, dtype=float)) - np.log(self._prior(X))
        self.bias = float(resid.mean())
        r = resid - self.bias
        for _ in range(self.rounds):
            t = _Tree(_grow(X, r, self.depth, self.min_leaf))
            step = t.predict(X)
            if not np.any(step):
                break
            self.trees.append(t)
            r = r - self.rate * step
        return self

    def predict_log(self, X: np.ndarray) -> np.ndarray:
        """Predicted log(time in us) for each row."""
        out = np.log(self._prior(X)) + self.bias
        for t in self.trees:
            out = out + self.rate * t.predict(X)
        return out

    def predict_us(self, X: np.ndarray) -> np.ndarray:
        return np.exp(self.predict_log(X))


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); nan for fewer than 2 points."""
    if len(a) < 2:
        return float("nan")

    def ranks(v: Sequence[float]) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        order = np.argsort(v, kind="stable")
        r = np.empty(len(v))
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            r[order[i:j + 1]] = (i + j) / 2.0
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


# ---- the DB as a training set ------------------------------------------------------------


def dataset_from_db(db: "TuningDB", model_version: str, target: "Target", limit: int = 400,
                    exclude_source: str | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(X, times in us, candidate keys) of the successful evaluations of `model_version` on
    `target` in `db` (every kernel and size: the transfer across shapes and kernels),
    the newest `limit`; each rebuilt from its run's source text and its pipeline."""
    from ..parser import parse
    from .space import SearchSpace

    # a `--shapes` run's rows are weighted times over several sizes, not one kernel's: left out
    runs = {r["source"]: r["source_text"] for r in db.runs() if r.get("source_text") and r["target"] == target.name
            and not str(r.get("strategy") or "").endswith("(shapes)")}
    spaces: dict[str, SearchSpace] = {}
    X, y, keys = [], [], []
    seen: set[str] = set()
    rows = [e for e in db.evaluations(None, model_version, target=target.name) if e.measurement.ok
            and e.measurement.time_us and e.source != exclude_source]
    for e in reversed(rows):
        if len(X) >= limit:
            break
        if e.candidate in seen or e.source not in runs:
            continue
        seen.add(e.candidate)
        if e.source not in spaces:
            try:
                spaces[e.source] = SearchSpace(parse(runs[e.source] or "", "<db>"), target)
            except Exception:
                continue
        c = spaces[e.source].candidate_for(e.pipeline)
        if c is None:
            continue
        X.append(features(c.kernel, target, c.passes))
        y.append(float(e.measurement.time_us or 0.0))
        keys.append(e.candidate)
    if not X:
        return np.zeros((0, len(FEATURE_NAMES))), np.zeros(0), []
    return np.array(X), np.array(y), keys


def candidate_features(cands: Iterable["Candidate"], target: "Target", cache: dict[str, np.ndarray]) -> np.ndarray:
    """Features of each candidate (cached by key)."""
    out = []
    for c in cands:
        if c.key not in cache:
            cache[c.key] = features(c.kernel, target, c.passes)
        out.append(cache[c.key])
    return np.array(out) if out else np.zeros((0, len(FEATURE_NAMES)))
