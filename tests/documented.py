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

ROWS: list[tuple[str, str]] = re.findall(r"^\|\s*`(\w+)\.ir`\s*\|\s*`([^`]+)`\s*\|",
                                         (EXAMPLES / "README.md").read_text(), re.M)

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
}

MAIN: dict[str, tuple[str, dict[str, int]]] = {}
for _name, _pipeline in ROWS:
    MAIN.setdefault(_name, (_pipeline, SMALL[_name]))
