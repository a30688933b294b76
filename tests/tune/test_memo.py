"""The process-wide memos (`transformer/tune/memo.py`): an equal
kernel is answered from the memo, another target object is not, and a caller changing a
result it was handed never changes what the memo hands out next."""

from __future__ import annotations

import dataclasses

from passes.base import parse_pipeline
from transformer.tune.estimate import estimate
from transformer.tune.space import apply_masked

from .conftest import small


class Counting:
    """A pass instance that counts its applications (and applies `fuse`)."""

    def __init__(self) -> None:
        self.inner = parse_pipeline("fuse")[0]
        self.calls = 0

    def to_text(self) -> str:
        return self.inner.to_text()

    def apply(self, kernel, target):
        self.calls += 1
        return self.inner.apply(kernel, target)


def test_an_equal_kernel_is_answered_from_the_memo_another_target_is_not(target):
    p = Counting()
    first = apply_masked(small("softmax", R=24, C=96), p, target)
    again = apply_masked(small("softmax", R=24, C=96), p, target)  # parsed again: an equal, distinct object
    assert first.kernel is not None and again is first and p.calls == 1
    other = dataclasses.replace(target)  # equal numbers, another object: never another target's answers
    apply_masked(small("softmax", R=24, C=96), p, other)
    assert p.calls == 2
    apply_masked(small("softmax", R=24, C=104), p, target)  # other sizes: another kernel
    assert p.calls == 3


def test_results_handed_out_are_copies(target):
    k = small("softmax", R=24, C=96)
    e = estimate(k, target)
    e.pipes["V"] = -1.0
    assert estimate(k, target).pipes.get("V") != -1.0
