"""Strided UB operands as vector code: a `Gather` through a byte-offset table.

A vector instruction reads contiguous elements (or whole 32 B blocks at a block stride); an
operand whose elements are not unit-stride over the vectorised loop (`X_ub[c, w]` read along
`c` in a layout transpose `T[w, c] = X_ub[c, w]`, a filter `Wt[f, c, r, s]` read along `c`)
cannot be one. The public Ascend C `Gather(dst, src, srcOffset, srcBaseAddr, count)` reads
`dst[i] = src[srcBaseAddr + srcOffset[i]]` (offsets in bytes, uint32) for 16- and 32-bit
types: with the offsets of an affine access it turns any strided (or broadcast) operand into
a contiguous one, which the ordinary count-form instructions then use.

The offsets of an access over the nest's `n0 x n1` iterations (`i = o * n1 + j`) are
`(c_o * o + c_i * j) * bytes`, built by vector instructions in an int32 scratch slot, without
a scalar store:

* the first row's first `L = min(n1, 8)` offsets (one 32 B block): a `Duplicate` of the
  largest, then `L - 1` mask-form `Adds` of `-c_i` over the first `m` elements (`m = 1..L-1`;
  a vector instruction cannot start inside a block, a contiguous mask can end there);
* the rest of the row by doubling: `off[k:2k] = off[0:k] + k * c_i` (`k = 8, 16, ..`);
* the other rows by doubling: `off[k*n1 : 2k*n1] = off[0 : k*n1] + k * c_o` (rows start
  32 B aligned: `n1` a multiple of 8, else only a single row is gathered).

Negative coefficients shift the table so every offset is non-negative (the base becomes the
lowest address read). The table is independent of the other loops' variables (they move the
base only), so it is built once per selected nest.
"""

from __future__ import annotations

from .instr import Operand, Repeat, VecOp

GATHER_TYPES = ("f16", "bf16", "f32", "i32")  # Gather: 16- and 32-bit element types
BLOCK_I32 = 8  # int32 offsets per 32 B block


class NoGather(Exception):
    """The access cannot be gathered (the reason is the message)."""


def table_shift(n0: int, n1: int, c_o: int, c_i: int) -> int:
    """The lowest of `c_o * o + c_i * j` over the iterations (<= 0): subtracted from every
    offset so the table holds no negative byte offset."""
    return (min(c_o, 0) * (n0 - 1)) + (min(c_i, 0) * (n1 - 1))


def offset_table(off: Operand, n0: int, n1: int, c_o: int, c_i: int, es: int, valid: int | None = None) -> list[VecOp]:
    """Vector instructions writing the `n0 * n1` byte offsets `(c_o*o + c_i*j - shift) * es`
    into the int32 operand `off` (32 B aligned). `n0 > 1` needs `n1 % 8 == 0`. With `valid`
    (< n1: rows padded to a whole number of blocks), columns `j >= valid` repeat column 0's
    offset, so the padding reads a real element."""
    if n0 > 1 and n1 % BLOCK_I32:
        raise NoGather(f"rows of {n1} offsets do not start 32 B aligned")
    k_n = n1 if valid is None else valid
    sh = table_shift(n0, k_n, c_o, c_i)
    bo, bi = c_o * es, c_i * es
    items: list[VecOp] = []
    L = min(k_n, BLOCK_I32)
    if k_n == n1:
        items.append(VecOp("Duplicate", off, (), f"int32_t({(L - 1) * bi - sh * es})", L))
    else:  # the padding holds column 0's offset
        items.append(VecOp("Duplicate", off, (), f"int32_t({-sh * es})", n1))
        if L > 1:
            items.append(VecOp("Adds", off, (off,), f"int32_t({(L - 1) * bi})", 0, Repeat(L, 1, (1, 1), (8, 8))))
    for m in range(1, L):  # elements j < m lose one step each: element j keeps j steps
        items.append(VecOp("Adds", off, (off,), f"int32_t({-bi})", 0, Repeat(m, 1, (1, 1), (8, 8))))
    k = BLOCK_I32
    while k < k_n:
        items.append(VecOp("Adds", off.at(k), (off,), f"int32_t({k * bi})", min(k, k_n - k)))
        k *= 2
    k = 1
    while k < n0:
        items.append(VecOp("Adds", off.at(k * n1), (off,), f"int32_t({k * bo})", min(k, n0 - k) * n1))
        k *= 2
    return items


def gather(dst: Operand, src_base: str, src_dtype: str, offsets_u32: Operand, base_bytes: str, count: int | str) -> VecOp:
    """`dst[i] = src[base + offsets[i]]` over `count` elements (`Gather`, count form)."""
    return VecOp("Gather", dst, (Operand(src_base, src_dtype), offsets_u32), f"static_cast<uint32_t>({base_bytes})", count)
