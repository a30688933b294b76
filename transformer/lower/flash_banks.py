"""The FlashAttention kernel's vector instructions as the UB bank model sees them, so the bank
placement (`ub_place.py`) can lay out its AIV buffers.

`flash.py` writes the AIV code as text; this lists the same instructions as data (operand
buffer roles, byte offsets, blocks per repeat, block and repeat strides in 32 B rows, repeats
per key block), one entry per instruction of `FlashSoftmax` and `FlashUpdate` whose cost
depends on the layout. In-place instructions with no other operand (`Muls`, `Exp` of S) pay
the same beats under any layout and are left out; the one-repeat statistics are too.
`tests/lower/test_ub_place.py` checks that an emitted kernel laid out from this list pays
fewer bank beats in its profile than the plain layout.
"""

from __future__ import annotations

from .ub_place import Access, Hot

F32, F16 = 4, 2
ROW = 32  # bytes of a bank row (a 32 B block)


def _count(n: int, ops: list[tuple[str, int, int, bool]], what: str, per: int = 1) -> Hot:
    """A count-form instruction over `n` elements: (role, byte offset, element bytes, write)."""
    widest = max(e for _, _, e, _ in ops)
    reps = max(1, -(-n * widest // 256) // per)
    return Hot(tuple(Access(role, off, 8 * e // widest, w, 1, 8 * e // widest) for role, off, e, w in ops), reps, what)


def vector_hots(r: int, kv: int, d: int, g: int, causal: bool, blocks: int) -> list[Hot]:
    """The layout-dependent vector instructions of one key block (and, weighted by
    1 / `blocks`, of a tile's last block), for `g` tiles of `r` rows per AIV, keys in blocks
    of `kv`, head dim `d`. Roles are the buffer roles of `flash._buffers` (`s_ub`, `mf_ub`...)."""
    hots: list[Hot] = []
    n_s, n_o = r * kv, r * d
    if causal:
        hots.append(_count(n_s, [("s_ub", 0, F32, True), ("s_ub", 0, F32, False), ("mask_ub", 0, F32, False)],
                           "Add S + mask", per=max(1, blocks)))
    else:
        hots.append(_count(n_s, [("mf_ub", 0, F32, True), ("m_ub", 0, F16, False)], "Cast M"))
        hots.append(_count(n_s, [("s_ub", 0, F32, True), ("s_ub", 0, F32, False), ("mf_ub", 0, F32, False)], "Add S + M"))
    # the 64-column fold of each row (Max, then Add after the Exp): mf <- s[:, :64] op s[:, 64:]
    fold = (Access("mf_ub", 0, 8, True, 1, 8), Access("s_ub", 0, 8, False, 1, kv * F32 // ROW),
            Access("s_ub", 64 * F32, 8, False, 1, kv * F32 // ROW))
    hots += [Hot(fold, r, "Max fold"), Hot(fold, r, "Add fold")]
    # S - broadcast row max, per 64-column half: s[:, h] <- s[:, h] - brc (block stride 0)
    for half in range(kv // 64):
        o = half * 64 * F32
        hots.append(Hot((Access("s_ub", o, 8, True, 1, kv * F32 // ROW), Access("s_ub", o, 8, False, 1, kv * F32 // ROW),
                         Access("brc_ub", 0, 8, False, 0, 1)), r, "Sub max"))
    hots.append(_count(n_s, [("mf_ub", 0, F16, True), ("s_ub", 0, F32, False)], "Cast P"))
    hots.append(Hot((Access("p_ub", 0, 8, True, r + 1, 1), Access("mf_ub", 0, 8, False, 1, kv * F16 // ROW)), r, "Adds P"))
    for u in range(g):
        a = u * n_o * F32
        for half in range(d // 64):
            o = a + half * 64 * F32
            hots.append(Hot((Access("acc_ub", o, 8, True, 1, d * F32 // ROW), Access("acc_ub", o, 8, False, 1, d * F32 // ROW),
                             Access("brc_ub", 0, 8, False, 0, 1)), r, "Mul acc"))
        hots.append(_count(n_o, [("acc_ub", a, F32, True), ("acc_ub", a, F32, False), ("o_ub", 0, F32, False)], "Add acc + O"))
        hots.append(_count(n_o, [("out_ub", 0, F16, True), ("acc_ub", a, F32, False)], "Cast O", per=max(1, blocks)))
    return hots
