"""Every example's interpreter output matches its independent numpy reference.

Inputs are fresh random arrays on every run (seeded from OS entropy through
`numpy.random.SeedSequence()`); the seed is in every assertion message, so a failure is
reproduced with `numpy.random.default_rng(numpy.random.SeedSequence(<entropy>))`.
Big defaults are shrunk with `Kernel.with_sizes`; the cheap examples also run once at
their default sizes.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import references  # noqa: E402  (tests/references.py, independent of the interpreter)

from transformer import ir  # noqa: E402
from transformer.parser import parse  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# (example, size overrides). `None` means the file's defaults.
CASES: list[tuple[str, dict[str, int] | None]] = [
    ("add", {"M": 16, "N": 48}),
    ("add", {"M": 3, "N": 5}),
    ("add", None),
    ("softmax", {"R": 8, "C": 40}),
    ("softmax", None),
    ("layernorm", {"N": 8, "H": 96}),
    ("layernorm", None),
    ("rmsnorm", {"N": 8, "H": 96}),
    ("rmsnorm", None),
    ("matmul", {"M": 32, "N": 48, "K": 64}),
    ("matmul", None),
    ("attention", {"S": 64, "D": 16}),
    ("attention", {"S": 37, "D": 8}),
    ("attention_causal", {"S": 64, "D": 16}),
    ("attention_causal", {"S": 33, "D": 8}),
    ("conv2d", {"N": 1, "C": 3, "H": 10, "W": 12, "F": 4}),
    ("conv2d", None),
    ("int8_linear", {"M": 50, "N": 40, "K": 100}),
    ("int8_linear", None),
    # the operators of issue 28 (examples/README.md, "Operators"): a small odd size and the defaults
    ("rope", {"S": 3, "H": 2, "D": 10}),
    ("rope", None),
    ("rope_interleaved", {"S": 3, "H": 2, "D": 10}),
    ("rope_interleaved", None),
    ("swiglu", {"M": 5, "K": 24, "F": 7}),
    ("swiglu", None),
    ("gelu", {"R": 3, "C": 50}),
    ("gelu", None),
    ("gelu_erf", {"R": 3, "C": 50}),
    ("gelu_erf", {"R": 16, "C": 1024}),
    ("add_rmsnorm", {"N": 5, "D": 40}),
    ("add_rmsnorm", None),
    ("log_softmax", {"R": 5, "C": 40}),
    ("log_softmax", None),
    ("transpose", {"M": 5, "N": 7}),
    ("transpose", None),
    ("group_norm", {"N": 1, "C": 12, "HH": 3, "WW": 5, "G": 4}),
    ("group_norm", None),
    ("dwconv3x3", {"N": 1, "C": 3, "H": 5, "W": 7}),
    ("dwconv3x3", None),
    ("dwconv3x3_same", {"N": 1, "C": 3, "H": 5, "W": 7}),
    ("dwconv3x3_same", None),
    ("cumsum", {"R": 3, "C": 50}),
    ("cumsum", None),
    ("maxpool", {"N": 1, "C": 3, "H": 6, "W": 10}),
    ("maxpool", None),
    ("argmax", {"R": 5, "C": 40}),
    ("argmax", None),
    ("bmm", {"Bt": 3, "M": 5, "N": 7, "K": 9}),
    ("bmm", {"Bt": 2, "M": 64, "N": 48, "K": 80}),
    ("decode_attention", {"HQ": 6, "HK": 2, "S": 20, "D": 8}),
    ("decode_attention", None),
    ("int8_matmul", {"M": 5, "N": 7, "K": 33}),
    ("int8_matmul", None),
    ("embedding", {"V": 50, "H": 24, "N": 9}),
    ("embedding", None),
    ("cross_entropy", {"R": 7, "C": 33}),
    ("cross_entropy", None),
    ("paged_attention", {"B": 2, "NH": 3, "D": 8, "BS": 4, "MB": 3, "NB": 7}),
    ("paged_attention", None),
]

_NP_DTYPE = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "i8": np.int8, "i32": np.int32}


def load(name: str) -> ir.Kernel:
    path = EXAMPLES / f"{name}.ir"
    return parse(path.read_text(), str(path))


def fresh_rng() -> tuple[np.random.Generator, str]:
    """A generator seeded from OS entropy, and a string that reproduces it."""
    ss = np.random.SeedSequence()
    return np.random.default_rng(ss), f"SeedSequence({ss.entropy})"


def reference_outputs(name: str, kernel: ir.Kernel, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Call the numpy reference with the inputs and any consts it takes as parameters."""
    fn = references.REFERENCES[name]
    params = inspect.signature(fn).parameters
    kwargs = {k: v for k, v in inputs.items()}
    for c in kernel.consts:
        if c.name in params:
            kwargs[c.name] = c.value
    for name, v in kernel.size_values().items():  # a size the input shapes do not show (group_norm's G)
        if name in params and name not in kwargs:
            kwargs[name] = v
    return fn(**kwargs)


def assert_matches(name: str, kernel: ir.Kernel, got: dict[str, np.ndarray], want: dict[str, np.ndarray], why: str) -> None:
    from transformer.interp import tolerance

    assert set(got) == {t.name for t in kernel.outputs}, why
    sizes = kernel.size_values()
    for t in kernel.outputs:
        g, w = np.asarray(got[t.name]), want[t.name]
        shape = tuple(_eval_dim(d, sizes) for d in t.shape)
        assert g.shape == shape == w.shape, f"{name}.{t.name}: shape {g.shape}, want {shape} ({why})"
        assert g.dtype == _NP_DTYPE[t.dtype], f"{name}.{t.name}: dtype {g.dtype} for {t.dtype} ({why})"
        assert np.all(np.isfinite(g.astype(np.float32))), f"{name}.{t.name}: non-finite output ({why})"
        rtol, atol = tolerance(t.dtype)
        gf, wf = g.astype(np.float64), w.astype(np.float64)
        # The absolute floor is relative to the output's scale when that is below one:
        # softmax probabilities of a 1024-wide row are ~1e-3, and a fixed f16 atol of that
        # size would accept any output at all.
        scale = float(np.max(np.abs(wf))) if wf.size else 1.0
        atol = atol * min(1.0, scale) if scale > 0 else atol
        err = np.abs(gf - wf)
        worst = np.unravel_index(int(np.argmax(err - rtol * np.abs(wf))), err.shape)
        np.testing.assert_allclose(
            gf, wf, rtol=rtol, atol=atol,
            err_msg=(f"{name}.{t.name} sizes={sizes} {why}; worst at {worst}: got {gf[worst]!r} "
                     f"want {wf[worst]!r}"),
        )


def _eval_dim(d: ir.Expr, sizes: dict[str, int]) -> int:
    from transformer.affine import eval_int

    return eval_int(d, sizes)


@pytest.mark.parametrize(
    "name,sizes", CASES,
    ids=[f"{n}-{'default' if s is None else '-'.join(f'{k}{v}' for k, v in s.items())}" for n, s in CASES],
)
def test_example_matches_reference(name: str, sizes: dict[str, int] | None) -> None:
    from transformer.gathers import index_extents
    from transformer.interp import random_inputs, run

    kernel = load(name)
    if sizes:
        kernel = kernel.with_sizes(sizes)
    rng, seed = fresh_rng()
    inputs = random_inputs(kernel, rng)
    why = f"inputs from {seed}"
    assert set(inputs) == {t.name for t in kernel.inputs}, why
    index_n = index_extents(kernel)  # index tensors (`ids` in `T[ids[t], h]`): values in 0..n-1, zero among them
    for t in kernel.inputs:
        a = inputs[t.name]
        assert a.dtype == _NP_DTYPE[t.dtype], f"{t.name}: {a.dtype} ({why})"
        if t.name in index_n:
            assert a.min() >= 0 and a.max() < index_n[t.name], f"index input {t.name} out of range ({why})"
            assert a.size < 4 or len(np.unique(a)) > 1, f"index input {t.name} is constant ({why})"
            continue
        assert np.count_nonzero(a) > a.size // 2, f"random input {t.name} is mostly zeros ({why})"
        assert np.all(np.isfinite(a.astype(np.float32))), why
    got = run(kernel, {k: v.copy() for k, v in inputs.items()})
    want = reference_outputs(name, kernel, inputs)
    assert_matches(name, kernel, got, want, why)


def test_interpreter_does_not_mutate_inputs() -> None:
    from transformer.interp import random_inputs, run

    kernel = load("softmax").with_sizes({"R": 4, "C": 8})
    rng, seed = fresh_rng()
    inputs = random_inputs(kernel, rng)
    before = {k: v.copy() for k, v in inputs.items()}
    run(kernel, inputs)
    for k in inputs:
        assert np.array_equal(inputs[k], before[k]), f"{k} was modified ({seed})"


def test_references_are_not_trivial() -> None:
    """Guard against a reference that ignores its inputs: changing an input changes
    the output (so agreement with the interpreter means something)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float16)
    g = rng.standard_normal(8).astype(np.float16)
    b = rng.standard_normal(8).astype(np.float16)
    assert not np.array_equal(references.softmax(x)["Y"], references.softmax(x * 2)["Y"])
    assert not np.array_equal(references.layernorm(x, g, b)["Y"], references.layernorm(x, g, b + 1)["Y"])
    assert not np.array_equal(references.rmsnorm(x, g)["Y"], references.rmsnorm(x, g * 2)["Y"])
    # softmax rows sum to one
    np.testing.assert_allclose(references.softmax(x)["Y"].astype(np.float32).sum(axis=1), 1.0, rtol=5e-3)
    # causal attention: row 0 sees only key 0, so it equals V[0]
    q = rng.standard_normal((5, 4)).astype(np.float16)
    v = rng.standard_normal((5, 4)).astype(np.float16)
    o = references.attention_causal(q, q, v)["O"]
    np.testing.assert_array_equal(o[0], v[0])
    # conv2d against a direct loop on a tiny case
    X = rng.standard_normal((1, 2, 4, 5)).astype(np.float16)
    W = rng.standard_normal((3, 2, 3, 3)).astype(np.float16)
    bias = rng.standard_normal(3).astype(np.float16)
    y = references.conv2d(X, W, bias)["Y"]
    assert y.shape == (1, 3, 2, 3)
    direct = np.zeros((1, 3, 2, 3), np.float64)
    for f in range(3):
        for yy in range(2):
            for xx in range(3):
                direct[0, f, yy, xx] = bias[f] + np.sum(
                    X[0, :, yy:yy + 3, xx:xx + 3].astype(np.float64) * W[f].astype(np.float64))
    np.testing.assert_allclose(y.astype(np.float64), direct, rtol=2e-3, atol=2e-3)
    # the gathers: embedding picks rows; equal logits give log(C); a one-block-per-sequence
    # paged cache with every key equal to the query's direction averages V's rows
    T = rng.standard_normal((6, 3)).astype(np.float16)
    np.testing.assert_array_equal(references.embedding(T, np.array([4, 0, 4]))["out"], T[[4, 0, 4]])
    np.testing.assert_allclose(references.cross_entropy(np.zeros((2, 7), np.float16), np.array([3, 6]))["loss"],
                               np.log(7.0), rtol=1e-3)
    Kc = np.ones((3, 2, 1, 4), np.float32)
    Vc = rng.standard_normal((3, 2, 1, 4)).astype(np.float32)
    o = references.paged_attention(np.ones((1, 1, 4), np.float32), Kc, Vc, np.array([[2]]))["O"]
    np.testing.assert_allclose(o[0, 0], Vc[2, :, 0].mean(axis=0), rtol=2e-3, atol=1e-3)


def test_operator_references_against_direct_loops() -> None:
    """The operator references (vectorised numpy) agree with direct Python loops on tiny
    cases, and argmax takes the first index on ties, as the example documents."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 6)).astype(np.float16)
    c, sn = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    half, inter = references.rope(x, c, sn)["Y"], references.rope_interleaved(x, c, sn)["Y"]
    for s in range(2):
        for h in range(3):
            for d in range(3):
                a, b = float(x[s, h, d]), float(x[s, h, d + 3])
                assert half[s, h, d] == np.float16(a * c[s, d] - b * sn[s, d])
                assert half[s, h, d + 3] == np.float16(b * c[s, d] + a * sn[s, d])
                a, b = float(x[s, h, 2 * d]), float(x[s, h, 2 * d + 1])
                assert inter[s, h, 2 * d + 1] == np.float16(b * c[s, d] + a * sn[s, d])
    ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], np.float16)
    assert references.argmax(ties)["I"].tolist() == [1, 0]
    m = rng.standard_normal((3, 5)).astype(np.float16)
    assert np.array_equal(references.transpose(m)["Y"][4, 2], m[2, 4])
    cs = references.cumsum(m)["Y"]
    np.testing.assert_allclose(cs[:, -1].astype(np.float64), m.astype(np.float64).sum(axis=1), rtol=2e-3, atol=2e-3)
    p = rng.standard_normal((1, 1, 4, 4)).astype(np.float16)
    assert references.maxpool(p)["Y"][0, 0, 1, 0] == p[0, 0, 2:4, 0:2].max()
    q = rng.standard_normal((4, 8)).astype(np.float16)  # 4 query heads, 2 KV heads: heads 2, 3 read KV 1
    k, v = rng.standard_normal((2, 6, 8)).astype(np.float16), rng.standard_normal((2, 6, 8)).astype(np.float16)
    o = references.decode_attention(q, k, v)["O"]
    one = references.attention(q[3:4].repeat(6, 0), k[1], v[1], np.zeros((6, 6), np.float16))["O"][0]
    np.testing.assert_array_equal(o[3], one)
    a8, b8 = rng.integers(-128, 128, (3, 40), dtype=np.int8), rng.integers(-128, 128, (40, 2), dtype=np.int8)
    sc = np.array([0.5, 2.0], np.float32)
    direct = [[sum(int(a8[i, t]) * int(b8[t, j]) for t in range(40)) * float(sc[j]) for j in range(2)] for i in range(3)]
    assert references.int8_matmul(a8, b8, sc)["C"].tolist() == np.array(direct, np.float16).tolist()
    g = rng.standard_normal((1, 4, 2, 2)).astype(np.float16)
    y = references.group_norm(g, np.ones(4, np.float16), np.zeros(4, np.float16), G=2)["Y"].astype(np.float64)
    np.testing.assert_allclose(y.reshape(2, 8).mean(axis=1), 0.0, atol=2e-3)  # each group normalised


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "transformer.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_run_attention_matches_numpy(tmp_path: Path) -> None:
    """Acceptance: `ascx run examples/attention.ir --size S=256 --save-inputs in.npz -o out.npz`,
    then out.npz["O"] equals numpy attention on the saved inputs."""
    seed = int(np.random.SeedSequence().entropy % (2**31))
    proc = _cli("run", str(EXAMPLES / "attention.ir"), "--size", "S=256", "--seed", str(seed),
                "--save-inputs", "in.npz", "-o", "out.npz", cwd=tmp_path)
    why = f"--seed {seed}; stdout={proc.stdout!r} stderr={proc.stderr!r}"
    assert proc.returncode == 0, why
    assert "Traceback" not in proc.stdout + proc.stderr, why
    with np.load(tmp_path / "in.npz") as f:
        inputs = {k: f[k] for k in f.files}
    with np.load(tmp_path / "out.npz") as f:
        outputs = {k: f[k] for k in f.files}
    assert set(inputs) == {"Q", "K", "V", "M"}, why
    for k, a in inputs.items():
        assert a.dtype == np.float16 and a.shape == ((256, 64) if k != "M" else (256, 256)), (k, a.dtype, a.shape)
        assert np.count_nonzero(a) > a.size // 2, f"saved input {k} is mostly zeros ({why})"
    assert set(outputs) == {"O"}, why
    kernel = load("attention").with_sizes({"S": 256})
    want = references.attention(**inputs, scale=0.125)
    assert_matches("attention", kernel, outputs, want, why)


def test_cli_run_reads_inputs_npz(tmp_path: Path) -> None:
    """`--inputs IN.npz` is used as given: feeding back saved inputs reproduces outputs."""
    proc = _cli("run", str(EXAMPLES / "softmax.ir"), "--size", "R=4", "--size", "C=16",
                "--save-inputs", "a.npz", "-o", "o1.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = _cli("run", str(EXAMPLES / "softmax.ir"), "--size", "R=4", "--size", "C=16",
                "--inputs", "a.npz", "-o", "o2.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "o1.npz") as a, np.load(tmp_path / "o2.npz") as b, np.load(tmp_path / "a.npz") as x:
        np.testing.assert_array_equal(a["Y"], b["Y"])
        assert_matches("softmax", load("softmax").with_sizes({"R": 4, "C": 16}), {"Y": b["Y"]},
                       references.softmax(x["X"]), "cli --inputs")
