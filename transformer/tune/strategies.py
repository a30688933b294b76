"""Search strategies: which candidate to measure next.

Every strategy sees the same `SearchSpace` (masked: legal, fitting candidates only) and the
history of measurements, proposes one unmeasured candidate at a time, and logs each
decision with its reason (`decisions`, stored in the DB by the tuner).

- `random`: uniform over the enumerated candidates, else a random walk down the staged tree.
- `grid`: depth-first order of the staged tree (skip before apply).
- `tpe`: Optuna's TPE sampler over the conditional (define-by-run) stage choices; needs
  `optuna` (`pip install optuna`; a bench-only dependency).
- `agent`: price candidates with the analytic estimate first (no compile), measure the most
  promising by a lower confidence bound of a model fitted on every measurement
  (log measured = log estimate + per-pass corrections, ridge regression), warm-start from
  the DB (this problem's past evaluations; the best pipelines of the same kernel at the
  nearest sizes), and keep exploring (every fourth proposal is drawn at random among the
  better-priced half of what is unmeasured).
"""

from __future__ import annotations

import heapq
import json
import math
import random
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from .estimate import estimate
from .measure import Measurement
from .space import Candidate, Node, SearchSpace, kernel_key
from ..targets import Target

if TYPE_CHECKING:
    from .knobs import KnobSpace

STRATEGIES = ("agent", "random", "grid", "tpe")
Decision = tuple[str, str, dict[str, Any]]  # (kind, pipeline, detail)


class Strategy:
    name = ""

    def __init__(self, space: SearchSpace, seed: int | None = None) -> None:
        self.space = space
        self.rng = random.Random(seed)
        self.seed = seed
        self.decisions: list[Decision] = []
        self.seen: dict[str, Measurement] = {}

    def decide(self, kind: str, cand: Candidate | None, **detail: Any) -> None:
        self.decisions.append((kind, cand.pipeline if cand else "", detail))

    def observe(self, cand: Candidate, m: Measurement) -> None:
        """A measurement is known (new, from the DB, or from a warm start)."""
        self.seen[cand.key] = m

    def propose(self, busy: set[str]) -> Candidate | None:
        """The next candidate to measure, not in `self.seen` nor `busy`; None = exhausted."""
        raise NotImplementedError


class RandomSearch(Strategy):
    name = "random"

    def __init__(self, space: SearchSpace, seed: int | None = None, *, knobs: "KnobSpace | None" = None) -> None:
        super().__init__(space, seed)
        self.knobs = knobs

    def propose(self, busy: set[str]) -> Candidate | None:
        if self.knobs is not None:  # uniform over the knob space (pruned points drawn again)
            for _ in range(256):
                c, _ = self.knobs.realize(self.knobs.random_point(self.rng))
                if c is not None and c.key not in self.seen and c.key not in busy:
                    self.decide("random", c, how="random point of the knob space")
                    return c
            return None
        if self.space.complete:
            free = [c for c in self.space.candidates if c.key not in self.seen and c.key not in busy]
            if not free:
                return None
            c = self.rng.choice(free)
            self.decide("random", c, pool=len(free))
            return c
        for _ in range(64):
            c = self.space.walk(lambda node, opts: self.rng.randrange(len(opts)))
            if c.key not in self.seen and c.key not in busy:
                self.decide("random", c, how="random walk")
                return c
        return None


class GridSearch(Strategy):
    name = "grid"

    def __init__(self, space: SearchSpace, seed: int | None = None) -> None:
        super().__init__(space, seed)
        self._it: Iterator[Candidate] = iter(list(space.candidates)) if space.complete else space.iter_dfs()

    def propose(self, busy: set[str]) -> Candidate | None:
        for c in self._it:
            if c.key not in self.seen and c.key not in busy:
                self.decide("grid", c)
                return c
        return None


class TPESearch(Strategy):
    """Optuna TPE over the stage choices (conditional parameters named by stage and node)."""

    name = "tpe"

    def __init__(self, space: SearchSpace, seed: int | None = None, *, knobs: "KnobSpace | None" = None) -> None:
        super().__init__(space, seed)
        self.knobs = knobs
        try:
            import optuna
        except ImportError as e:
            raise ImportError("strategy `tpe` needs optuna: pip install optuna") from e
        import warnings

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.optuna = optuna
        with warnings.catch_warnings():  # multivariate/group are marked experimental
            warnings.simplefilter("ignore")
            sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=5, multivariate=True, group=True)
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.trials: dict[str, list[Any]] = {}

    def _ask(self) -> tuple[Any, Candidate | None]:
        trial = self.study.ask()
        if self.knobs is not None:  # one categorical parameter per knob
            pt = tuple(k.domain.index(trial.suggest_categorical(k.name, list(k.domain))) for k in self.knobs.knobs)
            return trial, self.knobs.realize(pt)[0]

        def choose(node: Node, opts: list[Any]) -> int:
            names = ["skip"] + [o.text for o in opts[1:]]
            pname = f"s{node.stage}:{kernel_key(node.kernel, self.space.target)[:10]}"
            return names.index(trial.suggest_categorical(pname, names))

        return trial, self.space.walk(choose)

    def observe(self, cand: Candidate, m: Measurement) -> None:
        super().observe(cand, m)
        for trial in self.trials.pop(cand.key, []):
            self.study.tell(trial, _objective(m))

    def propose(self, busy: set[str]) -> Candidate | None:
        for _ in range(64):
            trial, c = self._ask()
            if c is None:  # a pruned point: as bad as a failure
                self.study.tell(trial, 50.0)
                continue
            if c.key in self.seen:
                self.study.tell(trial, _objective(self.seen[c.key]))  # known: free feedback
                continue
            self.trials.setdefault(c.key, []).append(trial)
            if c.key in busy:
                continue
            self.decide("tpe", c, trial=trial.number)
            return c
        return None


def _objective(m: Measurement) -> float:
    # failures are bad, not fatal: a large finite value keeps TPE's density estimate sane
    return math.log(m.time_us) if m.ok and m.time_us else 50.0


class Agent(Strategy):
    """Model-priced, measurement-corrected search (see the module docstring)."""

    name = "agent"
    EXPLORE_EVERY = 4
    PRICE_EXPANSIONS = 60
    KAPPA = 1.0

    # the evolutionary search over the knob space (`knobs.py`): random points first, then
    # children (mutations and crossovers of the best) ranked by the cost model
    EVO_INIT = 16
    EVO_INIT_GENERATIONS = 1
    EVO_CHILDREN = 8
    EVO_PARENTS = 8

    def __init__(self, space: SearchSpace, seed: int | None = None, *, prior: Callable[[Candidate], float] | None = None,
                 warm: list[str] | None = None, knobs: "KnobSpace | None" = None,
                 examples: "tuple[Any, Any] | None" = None) -> None:
        super().__init__(space, seed)
        self.prior_fn = prior or (lambda c: _estimate_us(c, space.target))
        self.priced: dict[str, float] = {}
        self.warm = list(warm or [])
        self.step = 0
        self.knobs = knobs
        self.examples = examples  # (X, times) of other problems' measurements in the DB: transfer
        self.feats: dict[str, Any] = {}
        self._model: tuple[Callable[[Candidate], float], float] | None = None
        self._price()
        if knobs is not None:
            self._evolve_init()

    # ---- pricing ----------------------------------------------------------------------
    def _p(self, c: Candidate) -> float:
        if c.key not in self.priced:
            self.priced[c.key] = self.prior_fn(c)
        return self.priced[c.key]

    def _price(self) -> None:
        """Estimate every enumerated candidate; on a lazy space, best-first expansion of
        the staged tree by the estimate (PRICE_EXPANSIONS nodes)."""
        if self.space.complete:
            for c in self.space.candidates:
                self._p(c)
        else:
            # ties in the estimate are broken by the order nodes were pushed (a counter), so
            # the same space and seed always price the same candidates (never by `id()`)
            # the leading `space.eager` stages (the precision options `--allow` opens) are
            # expanded in full first: their kernels are priced badly until the passes after
            # them apply (P rounded to f16 is slower until `flash_attention` uses it), so
            # best-first search alone would never look past them
            root = self.space.root()
            frontier = [root]
            for _ in range(self.space.eager):
                frontier = [ch for node in frontier if not node.done
                            for ch in [node.child(None), *map(node.child, node.actions())]]
            heap: list[tuple[float, int, Node]] = [(self._p(self.space.reach(nd)), i, nd) for i, nd in enumerate(frontier)]
            heapq.heapify(heap)
            pushed = len(heap)
            n = 0
            seen: set[tuple[str, int]] = set()
            while heap and n < self.PRICE_EXPANSIONS:
                _, _, node = heapq.heappop(heap)
                k = (kernel_key(node.kernel, self.space.target), node.stage)
                if node.done or k in seen:
                    continue
                seen.add(k)
                n += 1
                for st in [None, *node.actions()]:
                    ch = node.child(st)
                    heapq.heappush(heap, (self._p(self.space.reach(ch)), pushed, ch))
                    pushed += 1
        ranked = sorted(self.priced.items(), key=lambda kv: kv[1])
        self.decide("price", None, candidates=len(ranked),
                    top=[(self.space.by_key[k].pipeline, round(v, 3)) for k, v in ranked[:5]])

    # ---- the evolutionary search over the knobs --------------------------------------------
    def _add_point(self, point: Any) -> Candidate | None:
        assert self.knobs is not None
        c, _ = self.knobs.realize(point)
        if c is not None:
            self._p(c)
        return c

    def _evolve_init(self) -> None:
        assert self.knobs is not None
        n0 = len(self.priced)
        self._add_point(self.knobs.default())
        for _ in range(self.EVO_INIT):
            self._add_point(self.knobs.random_point(self.rng))
        for _ in range(self.EVO_INIT_GENERATIONS):
            self._generation(self._p)
        self.decide("evolve", None, knobs=len(self.knobs.knobs), size=self.knobs.size, priced=len(self.priced) - n0,
                    pruned=len(self.knobs.pruned))

    def _generation(self, score: Callable[[Candidate], float]) -> int:
        """One generation: EVO_CHILDREN children of the EVO_PARENTS best points by `score`
        (measured times where known); returns how many new candidates it reached."""
        assert self.knobs is not None
        pts = [(p, c) for p, c in self.knobs._points.items() if c is not None]
        if not pts:
            return 0

        def key(pc: tuple[Any, Candidate]) -> float:
            m = self.seen.get(pc[1].key)
            if m is not None:
                return math.log(m.time_us) if m.ok and m.time_us else math.inf
            return score(pc[1])

        best: dict[str, Any] = {}
        for p, c in sorted(pts, key=key):
            best.setdefault(c.key, p)
            if len(best) >= self.EVO_PARENTS:
                break
        parents = list(best.values())
        before = len(self.priced)
        for _ in range(self.EVO_CHILDREN):
            a = self.rng.choice(parents)
            child = self.knobs.crossover(a, self.rng.choice(parents), self.rng) if self.rng.random() < 0.3 else a
            self._add_point(self.knobs.mutate(child, self.rng, 1 + (self.rng.random() < 0.3)))
        return len(self.priced) - before

    # ---- the learned correction ---------------------------------------------------------
    def _fit(self) -> tuple[Callable[[Candidate], float], float]:
        """The learned cost model (`costmodel.py`) on every measurement of this run and the
        DB's other problems; below `MIN_FIT` examples, the ridge correction of the prior."""
        import numpy as np

        from .costmodel import MIN_FIT, CostModel, candidate_features

        pts = [(self.space.by_key[k], m) for k, m in self.seen.items() if k in self.space.by_key and m.ok and m.time_us]
        if len(pts) + (0 if self.examples is None else len(self.examples[1])) >= MIN_FIT and len(pts) >= 2:
            X = candidate_features([c for c, _ in pts], self.space.target, self.feats)
            y = np.array([m.time_us for _, m in pts])
            if self.examples is not None and len(self.examples[1]):
                X, y = np.vstack([X, self.examples[0]]), np.concatenate([y, self.examples[1]])
            model = CostModel().fit(X, y)
            resid = np.log(y) - model.predict_log(X)
            sigma = float(np.sqrt(np.mean(resid ** 2) + 0.01))
            return _Predictor(model, self.space.target, self.feats), sigma
        return self._fit_ridge()

    def _fit_ridge(self) -> tuple[Callable[[Candidate], float], float]:
        """Predict log(measured) from log(estimate) + pass indicators (ridge)."""
        import numpy as np

        pts = [(self.space.by_key[k], m) for k, m in self.seen.items() if k in self.space.by_key and m.ok]
        names = sorted({n for c, _ in pts for n in c.features()})

        def phi(c: Candidate) -> list[float]:
            f = c.features()
            return [1.0, math.log(max(self._p(c), 1e-9))] + [f.get(n, 0.0) for n in names]

        if len(pts) < 3:
            return (lambda c: math.log(max(self._p(c), 1e-9))), 1.0
        X = np.array([phi(c) for c, _ in pts])
        y = np.array([math.log(m.time_us) for _, m in pts])
        lam = np.eye(X.shape[1]) * 0.3
        lam[1, 1] = 0.0
        prior_w = np.zeros(X.shape[1])
        prior_w[1] = 1.0  # shrink toward "the estimate is right up to a constant"
        w = np.linalg.solve(X.T @ X + lam, X.T @ y + lam @ prior_w)
        resid = y - X @ w
        sigma = float(np.sqrt(np.mean(resid ** 2) + 0.01))
        return (lambda c: float(np.dot(phi(c), w))), sigma

    def propose(self, busy: set[str]) -> Candidate | None:
        self.step += 1
        while self.warm:
            c = self.space.candidate_for(self.warm.pop(0))
            if c is not None and c.key not in self.seen and c.key not in busy:
                self._p(c)
                self.decide("warm", c, why="best pipeline of this kernel at the nearest sizes in the DB")
                return c
        free = [self.space.by_key[k] for k in self.priced if k not in self.seen and k not in busy]
        if not free and self.knobs is not None:
            self._generation(self._p)
            free = [self.space.by_key[k] for k in self.priced if k not in self.seen and k not in busy]
        if not free:
            return None
        if self.step % self.EXPLORE_EVERY == 0 and len(free) > 1:
            free.sort(key=self._p)
            c = self.rng.choice(free[: max(1, len(free) // 2)])
            self.decide("explore", c, estimate_us=round(self._p(c), 3), pool=len(free) // 2)
            return c
        predict, sigma = self._fit()
        if self.knobs is not None:  # children of the best, ranked by the model just fitted
            self._generation(predict)
            free = [self.space.by_key[k] for k in self.priced if k not in self.seen and k not in busy]
        if isinstance(predict, _Predictor):
            predict.prime(free)  # one batched prediction for every unmeasured candidate
        measured_feats = {frozenset(self.space.by_key[k].features()) for k in self.seen if k in self.space.by_key}

        def lcb(c: Candidate) -> float:
            novel = frozenset(c.features()) not in measured_feats
            return predict(c) - self.KAPPA * sigma * (1.5 if novel else 0.5)

        c = min(free, key=lcb)
        self.decide("exploit", c, estimate_us=round(self._p(c), 3), predicted_us=round(math.exp(predict(c)), 3),
                    sigma=round(sigma, 3))
        return c


class _Predictor:
    """The fitted cost model as `candidate -> predicted log time`, memoised, with one
    batched prediction for many candidates (`prime`)."""

    def __init__(self, model: Any, target: Target, feats: dict[str, Any]) -> None:
        self.model, self.target, self.feats = model, target, feats
        self.memo: dict[str, float] = {}

    def prime(self, cands: list[Candidate]) -> None:
        from .costmodel import candidate_features

        todo = [c for c in cands if c.key not in self.memo]
        if todo:
            for c, v in zip(todo, self.model.predict_log(candidate_features(todo, self.target, self.feats))):
                self.memo[c.key] = float(v)

    def __call__(self, c: Candidate) -> float:
        if c.key not in self.memo:
            self.prime([c])
        return self.memo[c.key]


def _estimate_us(c: Candidate, target: Target) -> float:
    try:
        return estimate(c.kernel, target).time_us
    except Exception:
        return math.inf


def make_strategy(name: str, space: SearchSpace, seed: int | None = None, **kw: Any) -> Strategy:
    if name == "agent":
        return Agent(space, seed, **kw)
    cls = {"random": RandomSearch, "grid": GridSearch, "tpe": TPESearch}.get(name)
    if cls is None:
        raise ValueError(f"unknown strategy `{name}` (known: {', '.join(STRATEGIES)})")
    if cls is GridSearch:
        return cls(space, seed)  # the staged tree's depth-first order (the knob space has no useful order)
    return cls(space, seed, **{k: v for k, v in kw.items() if k == "knobs"})


def nearest_pipelines(rows: list[tuple[dict[str, int], str, float]], sizes: Mapping[str, int], k: int = 3) -> list[str]:
    """The `k` fastest pipelines at the nearest other sizes (log-distance) among rows
    (sizes, pipeline, time_us) of the same kernel and target."""
    return nearest_sizes(rows, sizes, k)[1]


def nearest_sizes(rows: list[tuple[dict[str, int], str, float]], sizes: Mapping[str, int],
                  k: int = 3) -> tuple[dict[str, int], list[str]]:
    """(the nearest other sizes, their `k` fastest pipelines); ({}, []) when none."""
    by_sizes: dict[str, list[tuple[float, str]]] = {}
    for sz, p, t in rows:
        if dict(sz) == dict(sizes):
            continue
        by_sizes.setdefault(json.dumps(sorted(sz.items())), []).append((t, p))
    if not by_sizes:
        return {}, []

    def dist(key: str) -> float:
        sz = dict(json.loads(key))
        return sum(abs(math.log(max(1, sz.get(n, 1))) - math.log(max(1, v))) for n, v in sizes.items())

    best = min(by_sizes, key=lambda key: (dist(key), key))
    return dict(json.loads(best)), [p for _, p in sorted(by_sizes[best])[:k]]
