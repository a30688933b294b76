"""The property test: random sequences of legal pass instances, drawn from every
registered pass's `space()` (the agent's action space), applied to every example. Each
result must compute the same outputs as the original under the reference interpreter
(dtype tolerances) and must round-trip through print/parse.

At least SEQUENCES_PER_EXAMPLE * len(examples) >= 300 sequences per run. The seed is fresh
each run and printed on failure; set ASCX_PROPERTY_SEED to replay one, and ASCX_PROPERTY_PASSES=a,b to draw
from some passes only (for bisecting; the default is the whole registry).
"""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest

from passes.base import registry
from passes_testutil import SMALL_SIZES, equivalent, example, roundtrips

SEQUENCES_PER_EXAMPLE = 40
MAX_LENGTH = 4
EXAMPLE_NAMES = sorted(SMALL_SIZES)

assert SEQUENCES_PER_EXAMPLE * len(EXAMPLE_NAMES) >= 300


def _seed() -> int:
    env = os.environ.get("ASCX_PROPERTY_SEED")
    return int(env) if env else int(np.random.SeedSequence().entropy % (2**32))


def _passes():
    """Every registered pass, or those named in ASCX_PROPERTY_PASSES (comma-separated),
    to bisect a failure."""
    only = os.environ.get("ASCX_PROPERTY_PASSES")
    reg = registry()
    names = [n.strip() for n in only.split(",")] if only else sorted(reg)
    return [(n, reg[n]) for n in names]


def legal_actions(kernel):
    out = []
    for name, cls in _passes():
        out.extend(cls.space(kernel, None))
    return out


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_random_pass_sequences(name: str) -> None:
    seed = _seed()
    rng = random.Random(seed)
    original = example(name)
    t0 = time.perf_counter()
    applied_total = 0
    for n in range(SEQUENCES_PER_EXAMPLE):
        k = original
        seq = []
        for _ in range(rng.randint(1, MAX_LENGTH)):
            actions = legal_actions(k)
            if not actions:
                break
            p = rng.choice(actions)
            seq.append(p.to_text())
            try:
                k = p.apply(k, None)
            except Exception as e:  # a pass refused (or crashed on) an instance its own space offered
                pytest.fail(f"{name}: `{','.join(seq)}` failed: {type(e).__name__}: {e} "
                            f"(ASCX_PROPERTY_SEED={seed}, sequence {n})")
        applied_total += len(seq)
        pipeline = ",".join(seq)
        assert roundtrips(k), f"{name}: `{pipeline}` does not round-trip (ASCX_PROPERTY_SEED={seed})"
        problems = equivalent(original, k, trials=1, seed=rng.randrange(2**32))
        assert not problems, f"{name}: `{pipeline}` changed the result: {problems} (ASCX_PROPERTY_SEED={seed})"
    assert applied_total > 0
    print(f"{name}: {SEQUENCES_PER_EXAMPLE} sequences, {applied_total} passes, {time.perf_counter() - t0:.1f}s, seed {seed}")
