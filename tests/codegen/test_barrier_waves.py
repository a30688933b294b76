"""Cross-block barriers against blockDim, waves and cores (issue 29, item 15).

A barrier between phases waits for every block of the launch; the chip runs the blocks
beyond its cores in later waves, which start only when blocks of the first wave end, so a
launch with a barrier must fit in one wave (`spread.one_wave` caps the workers of its
phases, `spread.launch_shape` picks the mode and blockDim). The emulator's side (a barrier
over more blocks than the chip runs at once is an error; a core waiting while others
still work is not a hang) is in tests/emulator/test_negative.py."""

from __future__ import annotations

import itertools
import random

import pytest

from transformer.lower.lower import lower_kernel
from transformer.lower.spread import launch_shape, one_wave

from .conftest import apply, check_emitted, kernel_text

# three phases handing data through GM temps (two barriers), more rows than cores
THREE = """
kernel three(X: f32[N, M]) -> (Y: f32[N, M]) {
  size N = 128
  size M = 16
  temp t: f32[N, M]
  temp u: f32[N, M]
  a: for i in 0..N {
    for j in 0..M { t[i, j] = X[i, j] * 2.0 }
  }
  b: for i in 0..N {
    for j in 0..M { u[N - 1 - i, j] = t[i, j] + 1.0 }
  }
  c: for i in 0..N {
    for j in 0..M { Y[i, j] = u[N - 1 - i, j] + t[i, j] }
  }
}
"""


def test_launch_with_a_barrier_is_one_wave_for_any_blocks_and_cores() -> None:
    """Over chips of 1..32 AIC groups with 1 or 2 AIV each and phases of every kind and
    width (some above the chip, as `@cores(N)` asks): with a barrier the launch needs one
    wave (blockDim <= groups), every phase's workers exist in it, and no phase loses workers
    it could have had; without one, nothing is capped."""
    rng = random.Random(29)
    for groups, ratio in itertools.product(range(1, 33), (1, 2)):
        vec_cap, cube_cap = groups * ratio, groups
        for _ in range(30):
            kinds = [rng.choice(("vec", "cube")) for _ in range(rng.randint(1, 4))]
            workers = [rng.randint(1, 4 * vec_cap) for _ in kinds]
            for barrier in (True, False):
                capped = one_wave(workers, kinds, barrier, vec_cap, cube_cap)
                mode, blocks = launch_shape(capped, kinds, barrier, ratio)
                per_block = {"vec": ratio if mode == "MIX_MODE" else 1, "cube": 1}
                for n, k, got in zip(workers, kinds, capped):
                    assert got <= blocks * per_block[k], (groups, ratio, kinds, workers, capped, mode, blocks)
                    cap = vec_cap if k == "vec" else cube_cap
                    assert got == (min(n, cap) if barrier else n)
                if barrier:
                    waves = -(-blocks // groups)
                    assert waves == 1, (groups, ratio, kinds, workers, capped, mode, blocks)
                    if "cube" in kinds or max(capped) > 1:
                        assert mode in ("MIX_MODE", "AIC_MODE")


def test_explicit_cores_above_the_chip_are_capped_when_phases_need_a_barrier() -> None:
    # `@cores(128)` on 48 AIV (24 AIC groups): blockDim 64 was 3 waves; the barrier hung on the chip
    plan = lower_kernel(apply(kernel_text(THREE), "multicore{a=128}"))
    assert plan.mode == "MIX_MODE" and plan.block_dim == 24, plan.summary()
    assert [p.cores for p in plan.phases] == [48, 48, 48]
    assert "128 workers capped at 48" in plan.phases[0].spread


def test_explicit_cores_stay_without_a_barrier() -> None:
    k = kernel_text(THREE.replace("u[N - 1 - i, j] = t[i, j] + 1.0", "u[i, j] = X[i, j] + 1.0")
                    .replace("Y[i, j] = u[N - 1 - i, j] + t[i, j]", "Y[i, j] = X[i, j] - 1.0"))
    plan = lower_kernel(apply(k, "multicore{a=128}"))
    assert plan.mode == "AIV_MODE" and plan.block_dim == 128 and plan.phases[0].cores == 128


@pytest.mark.slow
def test_capped_phases_with_barriers_match_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    # a short deadlock timeout: cores without rows wait at the barriers while others work
    monkeypatch.setenv("ASCX_EMU_DEADLOCK_TIMEOUT", "0.5")
    k = kernel_text(THREE)
    check_emitted(apply(k, "multicore{a=128}"), k, what="three phases, @cores(128) capped to one wave")
