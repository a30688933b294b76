"""FlashAttention as one 910B mix kernel (`flash_attention` pass, transformer/lower/flash.py):
the pass needs P in f16 (`round_operand{pv.s=f16}`) and refuses otherwise, both matmuls are
Mmads on the AIC, the softmax runs on the AIVs, and the emitted kernel (several query tiles
and key blocks, both query-tile sizes) matches the interpreter of the original kernel
within f16 tolerance, under sanitizers and hazard-free (a run with a sync hazard fails)."""

from __future__ import annotations

import dataclasses

import pytest

from passes.base import NotApplicable
from transformer import ir
from transformer.capacity.from_kernel import check_kernel_capacity
from transformer.codegen import emit_ascendc

from .bundle import Bundle, build_cases, check_bundled
from .conftest import ROOT, apply, example, kernel_text

PIPELINE = "round_operand{pv.s=f16},flash_attention"


def _flash(k: ir.Kernel) -> ir.Annotation | None:
    first = k.body[0]
    return first.annotation("flash") if isinstance(first, ir.For) else None


def test_the_pass_marks_rounded_attention_and_refuses_f32_p() -> None:
    k = example("attention", {"S": 4096, "D": 128})
    t = apply(k, PIPELINE)
    ann = _flash(t)
    assert ann is not None and ann.get("kv") == 128 and ann.get("q") in (64, 128)
    with pytest.raises(NotApplicable) as e:
        apply(k, "flash_attention")
    assert "round_operand" in (e.value.hint or "")
    m = apply(example("matmul"), "flash_attention")  # not attention: nothing to do
    assert _flash(m) is None


def test_the_plan_is_one_mix_kernel_over_every_aic_with_both_matmuls_on_the_cube() -> None:
    t = apply(example("attention", {"S": 4096, "D": 128}), PIPELINE)
    em = emit_ascendc(t)
    assert em.plan is not None and em.plan.kind == "mix" and em.plan.mode == "MIX_MODE"
    assert em.plan.block_dim == 24 and em.warnings == []
    assert em.source.count("Mmad(") == 2 * int(_flash(t).get("g"))  # QKᵀ and P·V per tile of a K/V pass  # type: ignore[union-attr]
    assert "WholeReduceMax" in em.source and "Exp(" in em.source and "CrossCoreWaitFlag" in em.source
    assert "GetValue" not in em.source and "SetValue" not in em.source
    assert check_kernel_capacity(t).status == "sat"


def test_sizes_the_kernel_cannot_take_are_refused() -> None:
    with pytest.raises(NotApplicable):
        apply(example("attention", {"S": 200, "D": 64}), PIPELINE)


def test_a_target_without_two_aivs_per_aic_is_refused_and_ub_comes_from_the_target() -> None:
    """The kernel splits a query tile over the 2 AIVs of a MIX block: a coupled chip is
    refused by name, not lowered with the A2's pairing; the UB budget is the target's."""
    from transformer.lower.flash import ub_budget
    from transformer.targets import get_target

    with pytest.raises(NotApplicable) as e:
        apply(example("attention", {"S": 1024, "D": 128}), PIPELINE, target="ascend310p")
    assert "2 AIVs per AIC" in e.value.message and "ascend310p" in e.value.message
    b2 = get_target("ascend910b2")
    assert ub_budget(b2) == b2.scope("ub").usable_bytes - b2.api_temp_bytes == 192 * 1024 - 8 * 1024


def _with_q(t: ir.Kernel, q: int | None) -> ir.Kernel:
    """The 128-row query tile (chosen at large S) forced at a small size."""
    if q is None:
        return t
    first = t.body[0]
    assert isinstance(first, ir.For)
    ann = ir.Annotation("flash", (("q", q), ("kv", 128)), None)
    return dataclasses.replace(t, body=(dataclasses.replace(first, annotations=(ann,)),) + t.body[1:])


PLAIN = {"flash_384_128": ({"S": 384, "D": 128}, None), "flash_256_64_q128": ({"S": 256, "D": 64}, 128)}


@pytest.mark.slow
@pytest.mark.parametrize("case", PLAIN)
def test_emitted_flash_attention_matches_the_interpreter(flash_bundle: Bundle, case: str) -> None:
    sizes, q = PLAIN[case]
    check_bundled(flash_bundle, case, example("attention", sizes), what=f"flash attention {sizes} q={q}")


# ---------------------------------------------------------------- causal (attention_causal.ir)

def _force_q(t: ir.Kernel, q: int, g: int = 1) -> ir.Kernel:
    first = t.body[0]
    assert isinstance(first, ir.For)
    ann = ir.Annotation("flash", (("q", q), ("kv", 128), ("g", g)), None)
    return dataclasses.replace(t, body=(dataclasses.replace(first, annotations=(ann,)),) + t.body[1:])


def test_causal_attention_skips_masked_blocks_and_balances_the_tiles() -> None:
    from transformer.lower.flash import causal_blocks, causal_schedule, match_flash

    t = apply(example("attention_causal", {"S": 8192, "D": 128}), PIPELINE)
    fa = match_flash(t)
    assert not isinstance(fa, str) and fa.causal and _flash(t) is not None
    em = emit_ascendc(t)
    assert em.plan is not None and em.plan.kind == "mix" and em.plan.block_dim == 24 and em.warnings == []
    assert em.source.count("Mmad(") == 2  # QKᵀ and P·V on the cube
    assert {"Mmad", "Fixpipe"} <= set(next(n for n in em.plan.nests if n.where.endswith("(AIC)")).instructions)
    assert check_kernel_capacity(t).status == "sat"
    # only the blocks up to the diagonal: S/q tiles, tile t attends ceil((t+1) q / 128) blocks
    q = int(_flash(t).get("q"))  # type: ignore[union-attr]
    work = [causal_blocks(x, q) for x in range(8192 // q)]
    assert work[0] == 1 and work[-1] == 64 and sum(work) < 0.52 * len(work) * 64
    sched = causal_schedule(8192, q, 24)
    assert sorted(x for tiles in sched for x in tiles) == list(range(8192 // q))
    loads = [sum(work[x] for x in tiles) for tiles in sched]
    assert max(loads) - min(loads) <= max(work)  # within one tile of each other (round-robin: 1.3x the mean)
    assert max(loads) <= 1.05 * sum(work) / 24
    assert "M[" not in em.source  # no mask input: the diagonal masks are built on the AIVs


def test_a_mask_that_is_not_causal_is_refused() -> None:
    k = example("attention_causal", {"S": 256, "D": 64})
    text = (ROOT / "examples" / "attention_causal.ir").read_text().replace("select(j <= i,", "select(j < i,").replace("S = 1024", "S = 256")
    bad = kernel_text(text)
    with pytest.raises(NotApplicable) as e:
        apply(bad, PIPELINE)
    assert "causal mask" in str(e.value) and "select(j <= i" in (e.value.hint or "")
    assert _flash(apply(k, PIPELINE)) is not None


CAUSAL = {"causal_384_64_q64": ({"S": 384, "D": 64}, 64), "causal_384_128_q128": ({"S": 384, "D": 128}, 128)}


@pytest.mark.slow
@pytest.mark.parametrize("case", CAUSAL)
def test_emitted_causal_flash_attention_matches_the_interpreter(flash_bundle: Bundle, case: str) -> None:
    sizes, q = CAUSAL[case]
    assert flash_bundle.emitted[case].source.count("Mmad(") == 2
    check_bundled(flash_bundle, case, example("attention_causal", sizes), what=f"causal flash attention {sizes} q={q}")


# ---------------------------------------------------------------- K/V reuse (g tiles per pass)

def _small_chip(tmp_path, aic: int):  # type: ignore[no-untyped-def]
    """ascend910b2 with `aic` cube cores (2 AIV each): several query tiles per block at small S."""
    from transformer.targets._override import load_override

    f = tmp_path / f"aic{aic}.toml"
    f.write_text(f'target = "ascend910b2"\n[facts]\naic_cores = {aic}\naiv_cores = {2 * aic}\n')
    return load_override(str(f))


def test_each_block_shares_k_and_v_across_its_query_tiles() -> None:
    from transformer.lower.flash import flash_buffers, match_flash, with_annotation
    from transformer.targets import get_target

    t = apply(example("attention", {"S": 4096, "D": 128}), PIPELINE)
    ann = _flash(t)
    assert ann is not None and ann.get("q") == 64 and ann.get("g") == 3  # 64 tiles, at most 3 per AIC, all in one pass
    em = emit_ascendc(t)
    # K_j and V_j: one Nd2Nz load each per pass; Q·K_jᵀ and P·V_j once per tile of the group
    assert em.source.count("Nd2NzParams(1, 128, 128") == 2 and em.source.count("Mmad(") == 2 * 3
    fa = with_annotation(match_flash(t), ann)  # type: ignore[arg-type]
    ub = sum(sh[0] * sh[1] * (4 if dt == "f32" else 2) * st for _, sc, dt, sh, st, _ in flash_buffers(fa, get_target("ascend910b2")) if sc == "ub")
    assert ub <= 196608 - 8192 and check_kernel_capacity(t).status == "sat"
    # at 8192 both tile sizes leave 384 rows on the busiest AIC; 128-row tiles cannot share a
    # pass (a second softmax state does not fit UB), 64-row tiles share it 3 at a time
    from transformer.lower.flash import flash_group
    from transformer.targets import resolve_target

    t8 = apply(example("attention", {"S": 8192, "D": 128}), PIPELINE)
    assert (_flash(t8).get("q"), _flash(t8).get("g")) == (64, 3)  # type: ignore[union-attr]
    fa8 = match_flash(t8)
    assert not isinstance(fa8, str)
    assert flash_group(dataclasses.replace(fa8, q=128), resolve_target("ascend910b2")) == 1


GROUPED = {
    "grouped_512_64": ("attention", {"S": 512, "D": 64}, 2, None),          # q = 128, g = 2
    "grouped_256_128": ("attention", {"S": 256, "D": 128}, 2, (64, 2)),     # D = 128, q = 64, g = 2
    "grouped_causal_512": ("attention_causal", {"S": 512, "D": 64}, 2, None),  # causal, q = 128, g = 2: tiles of 1..4 key blocks together
    "grouped_causal_256": ("attention_causal", {"S": 256, "D": 64}, 3, None),  # causal, q = 64 (two diagonal masks), g = 2
}


@pytest.fixture(scope="module")
def flash_bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """Every emitted case of this file in ONE sanitizer build (tests/codegen/bundle.py)."""
    cases: dict[str, object] = {}
    for case, (sizes, q) in PLAIN.items():
        cases[case] = _with_q(apply(example("attention", sizes), PIPELINE), q)
    for case, (sizes, q) in CAUSAL.items():
        cases[case] = _force_q(apply(example("attention_causal", sizes), PIPELINE), q)
    for case, (ex, sizes, aic, force) in GROUPED.items():
        tgt = _small_chip(tmp_path_factory.mktemp(case), aic)
        t = apply(example(ex, sizes), PIPELINE, tgt)
        t = _force_q(t, *force) if force else t
        assert int(_flash(t).get("g")) >= 2, case  # type: ignore[union-attr]  # several query tiles per pass
        cases[case] = (t, tgt)
    return build_cases(cases, sanitize=True)


@pytest.mark.slow
@pytest.mark.parametrize("case", GROUPED)
def test_emitted_flash_with_several_tiles_per_pass_matches_the_interpreter(flash_bundle: Bundle, case: str) -> None:
    ex, sizes, aic, _ = GROUPED[case]
    assert flash_bundle.emitted[case].source.count("Mmad(") >= 4  # two matmuls per query tile of the group
    check_bundled(flash_bundle, case, example(ex, sizes), what=f"{ex} {sizes} on {aic} AIC")


def test_a_requested_flash_schedule_is_the_annotation_or_a_located_refusal() -> None:
    """`flash_attention{q=..,g=..}` (the tuner's flash knob): the schedule asked for is the
    one annotated; a query tile other than 64 / 128 or a group above `group_limit` is a
    located `BadParameter`."""
    from passes.base import BadParameter, parse_pipeline, run_pipeline
    from transformer.cli_common import load_kernel
    from transformer.lower.flash import group_limit, match_flash
    from transformer.targets import resolve_target

    t = resolve_target("ascend910b2")
    k = load_kernel(str(ROOT / "examples" / "attention.ir"), ("S=4096", "D=64"))
    rounded = run_pipeline(k, parse_pipeline("round_operand{pv.s=f16}"), t)[0]
    out = run_pipeline(rounded, parse_pipeline("flash_attention{q=64,g=2}"), t)[0]
    ann = out.body[0].annotation("flash")
    assert (int(ann.get("q")), int(ann.get("g"))) == (64, 2)
    import dataclasses

    most = group_limit(dataclasses.replace(match_flash(rounded), q=64), t)
    for bad in ("q=32", f"q=64,g={most + 1}"):
        with pytest.raises(BadParameter) as info:
            run_pipeline(rounded, parse_pipeline(f"flash_attention{{{bad}}}"), t)
        assert info.value.loc is not None and info.value.loc.line == 12, bad
