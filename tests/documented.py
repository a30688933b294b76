"""The documented pipelines of the examples, read from examples/README.md — the one place
they are written — plus the small sizes tests run them at.

README rows read `| `NAME.ir` | `PIPELINE` | what it does |`; an example may have several
rows (attention has a vector and a mix-kernel pipeline). `MAIN[name]` is the first row.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

_ROW = r"^\|\s*`(\w+)\.ir`\s*\|\s*`([^`]+)`\s*\|"
_CORE, _, _OPERATORS = (EXAMPLES / "README.md").read_text().partition("\n## Operators")
ROWS: list[tuple[str, str]] = re.findall(_ROW, _CORE, re.M)
"""The core examples' rows: each is built and run under sanitizers on its own (codegen tests)."""
OP_ROWS: list[tuple[str, str]] = re.findall(_ROW, _OPERATORS, re.M)
"""The operators of issue 28 (README section "Operators"): one pipeline each, all built
together in one binary (tests/codegen/test_operators.py), to keep the suite's build count."""

# Small sizes that keep each pipeline meaningful: the matmul tiles and the online-softmax
# block are 64, and double_buffer needs at least two tiles to pipeline.
SMALL: dict[str, dict[str, int]] = {
    "add": {"M": 6, "N": 10},
    "softmax": {"R": 6, "C": 12},
    "layernorm": {"N": 6, "H": 12},
    "rmsnorm": {"N": 6, "H": 12},
    "matmul": {"M": 128, "N": 64, "K": 128},
    "attention": {"S": 128, "D": 16},
    "attention_causal": {"S": 128, "D": 16},
    "conv2d": {"N": 1, "C": 2, "H": 6, "W": 5, "F": 3},
    "bmm": {"Bt": 2, "M": 40, "N": 72, "K": 100},  # tails in M, N and K
    "embedding": {"V": 40, "H": 24, "N": 10},
    "cross_entropy": {"R": 6, "C": 40},
    "paged_attention": {"B": 2, "NH": 2, "D": 8, "BS": 4, "MB": 3, "NB": 7},
    "int8_linear": {"M": 50, "N": 40, "K": 100},  # tails in M, N and K (K: of the int8 fractal's 32)
}

MAIN: dict[str, tuple[str, dict[str, int]]] = {}
for _name, _pipeline in ROWS:
    MAIN.setdefault(_name, (_pipeline, SMALL[_name]))

# The operators at small sizes: every tile and block the pipeline uses fits at least twice
# where it can (double_buffer pipelines), cube operands multiples of 16, odd sizes elsewhere.
OP_SMALL: dict[str, dict[str, int]] = {
    "rope": {"S": 6, "H": 2, "D": 32},
    "rope_interleaved": {"S": 6, "H": 2, "D": 32},
    "swiglu": {"M": 48, "K": 64, "F": 40},
    "gelu": {"R": 5, "C": 72},
    "gelu_erf": {"R": 5, "C": 72},
    "add_rmsnorm": {"N": 6, "D": 40},
    "log_softmax": {"R": 6, "C": 40},
    "transpose": {"M": 24, "N": 40},
    "group_norm": {"N": 2, "C": 8, "HH": 3, "WW": 5, "G": 2},
    "dwconv3x3": {"N": 1, "C": 3, "H": 6, "W": 9},
    "dwconv3x3_same": {"N": 1, "C": 3, "H": 6, "W": 9},
    "cumsum": {"R": 5, "C": 40},
    "maxpool": {"N": 1, "C": 3, "H": 6, "W": 10},
    "argmax": {"R": 6, "C": 40},
    "decode_attention": {"HQ": 4, "HK": 2, "S": 128, "D": 16},
    "int8_matmul": {"M": 6, "N": 20, "K": 40},
}
OPERATORS: dict[str, tuple[str, dict[str, int]]] = {name: (pipeline, OP_SMALL[name]) for name, pipeline in OP_ROWS}
ALL_MAIN: dict[str, tuple[str, dict[str, int]]] = {**MAIN, **OPERATORS}
"""Every example's first pipeline and small sizes, the operators included (interpreter tests)."""
