"""Generated kernels for the `tile` search benchmarks and tests: many independent-looking
top-level nests, so the search must solve them separately (issue 10: a kernel of 32 nests
tiles in under 2 s)."""

from __future__ import annotations


def softmax_chain(n: int, rows: int = 256, cols: int = 1024) -> str:
    """`n` row-softmax nests in a chain (nest k normalises the rows nest k - 1 produced),
    each fused as `fuse` leaves softmax: a max, an exp-sum and a normalisation per row."""
    temps = "\n".join(f"  temp T{k}: f32[R, C]" for k in range(1, n))
    nests = []
    for k in range(n):
        src = "f32(X[r, c])" if k == 0 else f"T{k}[r, c]"
        dst = "Y[r, c]" if k == n - 1 else f"T{k + 1}[r, c]"
        val = f"f16(e{k}[c] / sm{k})" if k == n - 1 else f"e{k}[c] / sm{k}"
        nests.append(f"""  s{k}: for r in 0..R {{
    mx{k} = -inf
    for c in 0..C {{ mx{k} max= {src} }}
    sm{k} = 0.0
    for c in 0..C {{
      e{k}[c] = exp({src} - mx{k})
      sm{k} += e{k}[c]
    }}
    for c in 0..C {{ {dst} = {val} }}
  }}""")
    scalars = "\n".join(f"  temp e{k}: f32[C]\n  temp mx{k}: f32\n  temp sm{k}: f32" for k in range(n))
    return (f"kernel chain{n}(X: f16[R, C]) -> (Y: f16[R, C]) {{\n  size R = {rows}\n"
            f"  size C = {cols}\n{temps}\n{scalars}\n\n" + "\n".join(nests) + "\n}\n")
