"""Issue 14 acceptance: the plan of every documented pipeline (examples/README.md, read by
tests/documented.py), at its small test sizes and at the example's own sizes, has no V->S
round trip per element of a result (a dot product reduced one score at a time) and no
scalar fallback (KNOWN_FALLBACKS is empty: a fallback that must stay would be listed there). Lowering only: no C++ compile."""

from __future__ import annotations

import pytest

from documented import ROWS, SMALL
from transformer.lower import lower_kernel

from .conftest import apply, example

# No documented pipeline has a scalar fallback left (conv2d's layout transpose is a Gather,
# its channel sum over NHWC a 2-D tile reduction: transformer/lower/gather.py, contract.py).
KNOWN_FALLBACKS: dict[str, set[str]] = {
    # the keys and values gathered through the block table stay in GM: scalar dot products
    # until a block copy through an index tensor exists (docs/codegen.md, "Gathers")
    "paged_attention": {r for r in (
        "`Kc` is read through the index tensor `table[b0 + b, j / BS]`: it stays in GM and no vector pattern "
        "gathers it in this nest (the row_gather pattern copies whole rows `D_ub[t, h] = T[ids[t], h]`)",
        "`Vc` is read through the index tensor `table[b0 + b, j / BS]`: it stays in GM and no vector pattern "
        "gathers it in this nest (the row_gather pattern copies whole rows `D_ub[t, h] = T[ids[t], h]`)")},
}


@pytest.mark.parametrize("sizes", ["small", "example"])
@pytest.mark.parametrize("name,pipeline", ROWS)
def test_documented_plan_has_no_per_element_round_trip_or_fallback(name: str, pipeline: str, sizes: str) -> None:
    k = example(name, SMALL[name] if sizes == "small" else None)
    if (name, pipeline, sizes) == ("attention", "round_operand{pv.s=f16},tile", "small"):
        k = example(name, {"S": 32, "D": 16})
    if (name, pipeline, sizes) in (("attention", "round_operand{pv.s=f16},flash_attention", "small"),
                                   ("attention_causal", "round_operand{pv.s=f16},flash_attention", "small")):
        k = example(name, {"S": 256, "D": 64})  # the mix kernel takes S % 128 == 0, D in (64, 128)
    plan = lower_kernel(apply(k, pipeline))
    per_element = [n.where for n in plan.nests if n.vs_round_trip == "element"]
    assert not per_element, f"{name} --passes {pipeline}: a V->S flag per element in {per_element}"
    fallbacks = {n.fallback for n in plan.nests if n.fallback}
    assert fallbacks <= KNOWN_FALLBACKS.get(name, set()), f"{name} --passes {pipeline}: scalar fallbacks {fallbacks}"
    for n in plan.nests:
        if n.instructions and not n.fallback and "DataCopy" not in n.instructions[0] and n.nest:
            assert n.plan, f"{n.where}: a selected nest carries its typed instructions"


@pytest.mark.parametrize("sizes", ["small", "example"])
def test_conv_gemm_plan_is_one_cube_phase(sizes: str) -> None:
    """`conv2d.ir` under `conv_gemm`: the whole convolution is one cube phase (img2col
    gathered by Nd2Nz, Mmad, Fixpipe) with no scalar fallback, no vector work, no workspace."""
    assert ("conv2d", "conv_gemm") in ROWS
    plan = lower_kernel(apply(example("conv2d", SMALL["conv2d"] if sizes == "small" else None), "conv_gemm"))
    assert plan.kind == "cube" and [ph.core for ph in plan.phases] == ["cube"]
    assert {"DataCopy(Nd2NzParams)", "LoadData", "Mmad", "Fixpipe"} <= set(plan.instructions())
    assert not [n.fallback for n in plan.nests if n.fallback] and plan.workspace == [] and plan.warnings == []
