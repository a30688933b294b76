"""Data-dependent indices (issue 28 item 1): `T[ids[t], h]` reads and `T[ids[t], h] = / += e`
writes through an integer index tensor (`transformer/gathers.py`, docs/ir.md).

* parse and print round-trip them; misuse is a located error (tests/bad_inputs/sem_gather_*);
* the interpreter computes numpy's fancy indexing (and `np.add.at` for a scatter-add, repeated
  indices included), vectorised or not, and bounds-checks at the access naming the index
  tensor's element;
* dependence analysis is conservative and says why: interchange, fuse and multicore refuse
  with "indexed through ...", and passes that apply keep the meaning (fresh random inputs).
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from passes.base import parse_pipeline, run_pipeline
from transformer.cli import main
from transformer.diagnostics import AscxError, InterpError
from transformer.interp import random_inputs, run
from transformer.parser import parse
from transformer.printer import print_kernel

EMBED = """kernel embed(T: f32[V, H], ids: i32[N]) -> (out: f32[N, H]) {
  size V = 40
  size H = 24
  size N = 12
  look: for t in 0..N {
    for h in 0..H {
      out[t, h] = T[ids[t], h] * 2.0
    }
  }
}
"""

SCATTER_ADD = """kernel scat(x: f32[N, H], ids: i32[N]) -> (out: f32[V, H]) {
  size V = 6
  size H = 16
  size N = 20
  init: for v in 0..V {
    for h in 0..H {
      out[v, h] = 0.0
    }
  }
  sc: for t in 0..N {
    for h in 0..H {
      out[ids[t], h] += x[t, h]
    }
  }
}
"""

LABELS = """kernel pick(X: f32[R, C], labels: i32[R]) -> (y: f32[R]) {
  size R = 10
  size C = 33
  pk: for r in 0..R {
    y[r] = X[r, labels[r]]
  }
}
"""

# a scatter that is not a reduction: `y[idx[j]] = y[idx[j]] + ...` carries a dependence in every direction
ACCUM = """kernel acc(x: f32[M, N], idx: i32[N]) -> (y: f32[N]) {
  size N = 16
  size M = 8
  init: for j in 0..N {
    y[j] = 0.0
  }
  mm: for i in 0..M {
    for j in 0..N {
      y[idx[j]] = y[idx[j]] + x[i, j]
    }
  }
}
"""

FUSE = """kernel f(x: f32[N], idx: i32[N]) -> (z: f32[N]) {
  size N = 16
  temp y: f32[N]
  init: for i in 0..N {
    y[i] = 0.0
  }
  sc: for i in 0..N {
    y[idx[i]] = x[i]
  }
  rd: for i in 0..N {
    z[i] = y[i]
  }
}
"""


@pytest.mark.parametrize("text", [EMBED, SCATTER_ADD, LABELS, ACCUM, FUSE])
def test_print_parse_round_trip(text: str) -> None:
    k = parse(text, "g.ir")
    printed = print_kernel(k)
    assert parse(printed, "g2.ir") == k
    assert "[ids[t], h]" in printed or "labels[r]]" in printed or "[idx[" in printed


@pytest.mark.parametrize("vectorise", [True, False])
def test_gathers_and_scatters_match_numpy(vectorise: bool) -> None:
    rng = np.random.default_rng(11)
    k = parse(EMBED, "e.ir")
    ins = random_inputs(k, rng)
    assert ins["ids"].min() >= 0 and ins["ids"].max() < 40  # index inputs are drawn inside the gathered extent
    np.testing.assert_array_equal(run(k, ins, vectorise=vectorise)["out"], ins["T"][ins["ids"]] * np.float32(2))

    k = parse(SCATTER_ADD, "s.ir")
    ins = random_inputs(k, rng)
    ins["ids"][:4] = 3  # repeated indices: every one adds (numpy's fancy `+=` would keep one)
    want = np.zeros((6, 16), np.float32)
    np.add.at(want, ins["ids"], ins["x"])
    np.testing.assert_allclose(run(k, ins, vectorise=vectorise)["out"], want, rtol=1e-6, atol=1e-6)

    k = parse(LABELS, "l.ir")
    ins = random_inputs(k, rng)
    assert ins["labels"].max() < 33
    np.testing.assert_array_equal(run(k, ins, vectorise=vectorise)["y"], ins["X"][np.arange(10), ins["labels"]])


def test_an_index_out_of_bounds_is_an_error_at_the_access_naming_the_element() -> None:
    k = parse(EMBED, "e.ir")
    ins = random_inputs(k, np.random.default_rng(1))
    ins["ids"][5] = 40000
    with pytest.raises(InterpError) as e:
        run(k, ins)
    assert e.value.short().endswith("error: index ids[5] = 40000 is out of bounds for `T` dimension 0 (extent 40)")
    assert str(e.value.loc) == "7:21"  # at `ids[t]` inside `T[ids[t], h]`
    ins["ids"][5] = -1
    with pytest.raises(InterpError, match=r"index ids\[5\] = -1 is out of bounds"):
        run(k, ins, vectorise=False)


def test_the_cli_reports_a_bad_index_with_its_source_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "e.ir"
    src.write_text(EMBED)
    k = parse(EMBED, str(src))
    ins = random_inputs(k, np.random.default_rng(2))
    ins["ids"][3] = 41
    np.savez(tmp_path / "in.npz", **ins)
    r = CliRunner().invoke(main, ["run", str(src), "--inputs", str(tmp_path / "in.npz")])
    assert r.exit_code != 0 and "Traceback" not in r.output
    assert f"{src}:7:21: error: index ids[3] = 41 is out of bounds for `T` dimension 0 (extent 40)" in r.output
    assert "^" in r.output and "hint: every value of `ids`" in r.output


def _refusal(text: str, pipeline: str) -> str:
    with pytest.raises(AscxError) as e:
        run_pipeline(parse(text, "g.ir"), parse_pipeline(pipeline), None)
    return e.value.short()


def test_interchange_refuses_across_a_write_through_an_index_and_says_why() -> None:
    msg = _refusal(ACCUM, "interchange{mm.i,mm.j}")
    assert "cannot reorder" in msg
    assert "`y[idx[j]]` is indexed through `idx[j]` in dimension 0: it may touch any element of that dimension" in msg


def test_fuse_refuses_a_consumer_of_a_scatter_and_says_why() -> None:
    msg = _refusal(FUSE, "fuse{sc,rd}")
    assert "cannot fuse" in msg and "`y[idx[i]]` is indexed through `idx[i]`" in msg


def test_multicore_refuses_a_scatter_loop() -> None:
    msg = _refusal(ACCUM, "multicore{mm=4}")
    assert "indexed through" in msg


@pytest.mark.parametrize("text,pipeline", [
    (EMBED, "tile"), (EMBED, "tile{look.t=4,look.h=8}"), (EMBED, "interchange{look.t,look.h}"),
    (EMBED, "multicore{look=4}"), (SCATTER_ADD, "tile"), (SCATTER_ADD, "tile{sc.t=4,sc.h=8}"),
    (SCATTER_ADD, "interchange{sc.t,sc.h}"), (ACCUM, "tile{mm.i=4,mm.j=4}"), (LABELS, "tile"),
    (FUSE, "fuse"),
])
def test_passes_that_apply_keep_the_meaning(text: str, pipeline: str) -> None:
    k = parse(text, "g.ir")
    t = run_pipeline(k, parse_pipeline(pipeline), None)[0]
    for seed in (np.random.SeedSequence().entropy, 5):
        ins = random_inputs(k, np.random.default_rng(seed))
        want, got = run(k, ins), run(t, ins)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5, err_msg=f"seed {seed}")


def test_a_ranged_kernel_with_a_gather_is_accepted_and_runs_at_other_sizes() -> None:
    # bounds.py proves the affine indices (`ids[t]` inside 0..N) for the whole range; the
    # gathered dimension is checked when the kernel runs (any value in 0..V-1)
    k = parse(EMBED.replace("size N = 12", "size N = 12 in 1..64"), "r.ir")
    k2 = k.with_sizes({"N": 50})
    ins = random_inputs(k2, np.random.default_rng(3))
    np.testing.assert_array_equal(run(k2, ins)["out"], ins["T"][ins["ids"]] * np.float32(2))
    with pytest.raises(AscxError, match="leaves|out of bounds|outside"):
        parse(EMBED.replace("for t in 0..N", "for t in 0..N + 1").replace("size N = 12", "size N = 12 in 1..64"), "r.ir")
