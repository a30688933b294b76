"""A Gym-style environment over the tuner's search space, for RL agents.

    from transformer.tune.env import TuneEnv
    env = TuneEnv(kernel, target)                       # measurer: default_measurer()
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        legal = [a for a, ok in enumerate(info["action_mask"]) if ok]
        obs, reward, done, truncated, info = env.step(rng.choice(legal))   # a random policy
    print(info["pipeline"], info["time_us"], reward)

An episode optimises one kernel at its sizes on one target. It walks the staged space of
`space.py`: at each stage the actions are 0 = skip this stage and 1..n = the legal, fitting
instances of the stage's pass (`info["actions"]` names them; `info["action_mask"]` marks
them among `MAX_ACTIONS` slots — masked actions are never legal). The episode ends after
the last stage; the final kernel is then measured and the reward is the latency gain
`(baseline - time) / baseline` (the baseline is the untransformed kernel, measured at the
first reset), or `FAILURE_REWARD` when the measurement fails. Intermediate rewards are 0.

Observation (float32 vector, `OBS_NAMES`): stage progress, passes applied, top-level
nests, deepest nest, on-chip buffers, staged (`@pipeline`) loops, `@cores` loops, log2 of
GM bytes and of arithmetic operations, and the analytic estimate's bound (one-hot over the
pipes and HBM) and per-pipe utilisation.

With `gymnasium` installed, `TuneEnv` is a `gymnasium.Env` that passes
`gymnasium.utils.env_checker.check_env`: `reset(seed=...)` seeds `np_random`, the
`observation_space` is a Box and the `action_space` a `MaskedDiscrete`: a Discrete whose
`sample()` without a mask draws among the actions legal in the current state (so the
checker and a random agent never draw a masked action), and the env exposes
`action_masks()` as maskable RL agents (sb3-contrib's MaskablePPO) expect. Without
gymnasium the same class works as plain Python.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from .. import ir
from .estimate import PIPES, estimate
from .measure import Measurement, Measurer
from .measurers import default_measurer
from .space import DEFAULT_STAGES, Node, SearchSpace
from ..targets import Target

MAX_ACTIONS = 64
FAILURE_REWARD = -1.0
OBS_HIGH = 1e6
BOUNDS = (*PIPES, "HBM")
OBS_NAMES: tuple[str, ...] = (
    "stage", "passes", "nests", "depth", "locals", "pipelined", "multicore", "log2_gm_bytes", "log2_ops",
    *(f"bound_{b}" for b in BOUNDS), *(f"util_{p}" for p in PIPES))

try:  # the gymnasium API when available
    import gymnasium as _gym
    from gymnasium import spaces as _spaces

    _Base: Any = _gym.Env

    class MaskedDiscrete(_spaces.Discrete):
        """Discrete(n) whose `sample()` with no mask draws among the actions
        `legal()` allows now (an explicit mask is honoured as Discrete does)."""

        def __init__(self, n: int, legal: Any, seed: int | None = None) -> None:
            super().__init__(n, seed=seed)
            self._legal = legal

        def sample(self, mask: Any = None, probability: Any = None) -> Any:
            if mask is None and probability is None:
                mask = self._legal().astype(np.int8)
            return super().sample(mask=mask, probability=probability)
except ImportError:  # plain Python otherwise
    _gym = None
    _Base = object


def features(kernel: ir.Kernel, target: Target) -> dict[str, float]:
    """Structure and cost features of a kernel (the observation without the stage)."""
    depth = 0
    pipelined = cores = 0
    ops = 0.0

    def walk(stmts: tuple[ir.Stmt, ...], d: int, mult: float) -> None:
        nonlocal depth, pipelined, cores, ops
        for s in stmts:
            if isinstance(s, ir.For):
                depth = max(depth, d + 1)
                pipelined += any(a.name == "pipeline" for a in s.annotations)
                cores += any(a.name == "cores" for a in s.annotations)
                from passes import _rewrite as R

                walk(s.body, d + 1, mult * max(1, R.loop_extent(s, kernel.size_values()) or 1))
            elif isinstance(s, ir.Assign):
                from .estimate import _ops

                ops += mult * max(1, _ops(s.value))

    walk(kernel.body, 0, 1.0)
    from ..affine import eval_int

    sizes = kernel.size_values()
    gm = sum(math.prod(eval_int(d, sizes) for d in t.shape) * ir.DTYPE_BYTES[t.dtype]
             for t in (*kernel.inputs, *kernel.outputs))
    e = estimate(kernel, target)
    busy = sum(e.pipes.values()) or 1.0
    out = {"nests": float(sum(isinstance(s, ir.For) for s in kernel.body)), "depth": float(depth),
           "locals": float(sum(b.kind == "local" for b in kernel.buffers)), "pipelined": float(pipelined),
           "multicore": float(cores), "log2_gm_bytes": math.log2(max(1, gm)), "log2_ops": math.log2(max(1.0, ops))}
    for b in BOUNDS:
        out[f"bound_{b}"] = 1.0 if e.bound == b else 0.0
    for p in PIPES:
        out[f"util_{p}"] = e.pipes.get(p, 0.0) / busy
    return out


class TuneEnv(_Base):  # type: ignore[misc]
    """reset() -> (obs, info); step(action) -> (obs, reward, terminated, truncated, info)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, kernel: ir.Kernel, target: Target, measurer: Measurer | None = None,
                 stages: tuple[str, ...] = DEFAULT_STAGES) -> None:
        self.kernel = kernel
        self.target = target
        self.measurer = measurer or default_measurer()
        self.space = SearchSpace(kernel, target, stages)
        self.node: Node = self.space.root()
        self.options: list[Any] = []
        self.baseline: Measurement | None = None
        self.measured: dict[str, Measurement] = {}
        if _gym is not None:
            self.action_space = MaskedDiscrete(MAX_ACTIONS, self.action_masks)
            # every feature is a non-negative count, share, one-hot or log2 (of < 2^64)
            self.observation_space = _spaces.Box(0.0, OBS_HIGH, (len(OBS_NAMES),), np.float32)

    # ---- the API ------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if _gym is not None:
            super().reset(seed=seed)  # seeds self.np_random
            if seed is not None:
                self.action_space.seed(seed)
        if self.baseline is None:
            self.baseline = self._measure(self.space.reach(self.space.root()))
        self.node = self.space.root()
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not 0 <= int(action) < len(self.options):
            raise ValueError(f"action {action} is masked here (legal: 0..{len(self.options) - 1})")
        self.node = self.node.child(self.options[int(action)])
        if not self.node.done:
            return self._observe(), 0.0, False, False, self._info()
        cand = self.space.reach(self.node)
        m = self._measure(cand)
        base = self.baseline.time_us if self.baseline and self.baseline.ok else None
        if not m.ok or not base:
            reward = FAILURE_REWARD
        else:
            reward = (base - (m.time_us or base)) / base
        info = self._info() | {"pipeline": cand.pipeline, "time_us": m.time_us, "error": m.error}
        return self._observe(), float(reward), True, False, info

    def action_masks(self) -> np.ndarray:
        """The legal actions of the current state (bool, MAX_ACTIONS slots; none once the
        episode has ended: `reset` first)."""
        mask = np.zeros(MAX_ACTIONS, dtype=bool)
        mask[: len(self.options)] = True
        return mask

    # ---- helpers ----------------------------------------------------------------------
    def _measure(self, cand: Any) -> Measurement:
        if cand.key not in self.measured:
            self.measured[cand.key] = self.measurer.measure(cand.kernel, self.target)
        return self.measured[cand.key]

    def _observe(self) -> np.ndarray:
        f = features(self.node.kernel, self.target)
        f["stage"] = self.node.stage / max(1, len(self.space.stages))
        f["passes"] = float(len(self.node.passes))
        return np.array([f[n] for n in OBS_NAMES], dtype=np.float32)

    def _info(self) -> dict[str, Any]:
        self.options = [None, *self.node.actions()][:MAX_ACTIONS] if not self.node.done else []
        return {"action_mask": self.action_masks(), "actions": ["skip"] + [o.text for o in self.options[1:]],
                "stage": self.space.stages[self.node.stage] if not self.node.done else None,
                "passes": ",".join(self.node.passes)}


def random_episode(env: TuneEnv, rng: random.Random) -> tuple[str, float, dict[str, Any]]:
    """One episode of the random policy (the documented example loop)."""
    _, info = env.reset()
    done = False
    reward = 0.0
    while not done:
        legal = [a for a, ok in enumerate(info["action_mask"]) if ok]
        _, reward, done, _, info = env.step(rng.choice(legal))
    return info["pipeline"], reward, info
