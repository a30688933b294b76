"""The Gym-style environment: masked actions, observations, reward = latency gain."""

from __future__ import annotations

import random

import numpy as np
import pytest

from transformer.tune.env import MAX_ACTIONS, OBS_NAMES, TuneEnv, random_episode

from .conftest import FakeMeasurer, small


def test_random_policy_episodes(target):
    env = TuneEnv(small("softmax", R=32, C=64), target, FakeMeasurer(), stages=("fuse", "tile", "double_buffer"))
    obs, info = env.reset(seed=0)
    assert obs.shape == (len(OBS_NAMES),) and obs.dtype == np.float32
    assert info["action_mask"].shape == (MAX_ACTIONS,) and info["action_mask"][0]  # skip is always legal
    assert info["stage"] == "fuse" and "fuse" in info["actions"]
    rng = random.Random(1)
    seen = set()
    for _ in range(6):
        pipeline, reward, info = random_episode(env, rng)
        seen.add(pipeline)
        base = env.baseline.time_us
        assert reward == pytest.approx((base - info["time_us"]) / base)
        assert env.space.candidate_for(pipeline) is not None  # legal and fitting
    assert len(seen) > 1


def test_a_masked_action_is_refused(target):
    env = TuneEnv(small("add", M=16, N=64), target, FakeMeasurer())
    _, info = env.reset()
    n = int(info["action_mask"].sum())
    with pytest.raises(ValueError, match="masked"):
        env.step(n)


def test_skipping_everything_is_the_baseline_with_zero_reward(target):
    env = TuneEnv(small("add", M=16, N=64), target, FakeMeasurer())
    env.reset()
    done, reward, info = False, None, {}
    while not done:
        _, reward, done, _, info = env.step(0)
    assert info["pipeline"] == "" and reward == 0.0


def test_gymnasium_check_env_passes(target):
    gym = pytest.importorskip("gymnasium", reason="gymnasium is in the test extra (pip install -e '.[test]')")
    from gymnasium.utils.env_checker import check_env

    env = TuneEnv(small("add", M=16, N=64), target, FakeMeasurer())
    assert isinstance(env, gym.Env)
    check_env(env, skip_render_check=True)
    # the action space never samples a masked action, whatever the state
    _, info = env.reset(seed=3)
    for _ in range(20):
        a = env.action_space.sample()
        assert info["action_mask"][a]
        _, _, done, _, info = env.step(a)
        if done:
            _, info = env.reset()
    # the same seed, the same draws
    env.reset(seed=5)
    first = [int(env.action_space.sample()) for _ in range(5)]
    env.reset(seed=5)
    assert [int(env.action_space.sample()) for _ in range(5)] == first
