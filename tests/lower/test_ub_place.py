"""UB bank placement (transformer/lower/ub_place.py): the bank rule it optimises is the
emulator's (the public page's examples), and the layouts it picks remove conflicts the plain
InitBuffer order has. The emitted kernel's profile shows it too (tests/timing/test_profile.py,
`test_placed_add_pays_no_bank_beats`)."""

from __future__ import annotations

from pathlib import Path

from transformer import api
from transformer.lower import flash_banks
from transformer.lower.ub_place import Access, Banks, Hot, Slab, extra_beats, place, repeat_beats

ROOT = Path(__file__).resolve().parents[2]
BANKS = Banks()  # 16 groups of 3 banks, 32 B rows, 128 rows a bank (the ascend910b2 facts)


def _rows(addr: int, blocks: int, write: bool, blk: int = 1) -> list[tuple[int, bool]]:
    return [(addr // 32 + k * blk, write) for k in range(blocks)]


def test_rule_reproduces_the_public_page() -> None:
    # the sample's v1 layout: x 0, y 0x4000, z 0x8000 -> 3 beats; v2 (y 0x4100, z 0x10000) -> 1
    v1 = _rows(0, 8, False) + _rows(0x4000, 8, False) + _rows(0x8000, 8, True)
    v2 = _rows(0, 8, False) + _rows(0x4100, 8, False) + _rows(0x10000, 8, True)
    assert (repeat_beats(BANKS, v1), repeat_beats(BANKS, v2)) == (3, 1)
    # dst block stride 16 puts all 8 blocks in one group: 8 beats; stride 8 -> 4
    assert repeat_beats(BANKS, _rows(0x1FE00, 8, True, 16)) == 8
    assert repeat_beats(BANKS, _rows(0x1FE00, 8, True, 8)) == 4
    # an in-place operand reads and writes one bank: a beat more under any layout
    assert repeat_beats(BANKS, _rows(0x3000, 8, False) + _rows(0x3000, 8, True)) == 2


def _add_layout() -> tuple[list[Slab], list[Hot]]:
    """C = A + B, double-buffered 6 KB tiles (the add example's queues)."""
    slabs = [Slab("A", 6144, 2), Slab("B", 6144, 2), Slab("C", 6144, 2)]
    hot = Hot((Access("C", 0, 8, True), Access("A", 0, 8, False), Access("B", 0, 8, False)), 24, "Add")
    return slabs, [hot]


def _cost(slabs: list[Slab], hots: list[Hot], pads: list[int]) -> float:
    start, cur = {}, 0
    for s, p in zip(slabs, pads):
        start[s.name] = cur + p
        cur += p + s.nbytes * s.slots
    return sum(extra_beats(BANKS, h, start, {s.name: s for s in slabs}) for h in hots)


def test_placement_removes_the_add_conflicts_within_free_ub() -> None:
    slabs, hots = _add_layout()
    plain = _cost(slabs, hots, [0, 0, 0])
    assert plain == 2 * 24  # x/y read-read and the read-write bank: 3 beats a repeat
    pads = place(BANKS, slabs, hots, free=100_000)
    assert _cost(slabs, hots, pads) == 0
    assert pads[0] == 0 and all(p % 32 == 0 for p in pads)
    # without room for the write to reach another bank section, only the read-read one goes
    tight = place(BANKS, slabs, hots, free=512)
    assert sum(tight) <= 512 and _cost(slabs, hots, tight) == 24
    assert place(BANKS, slabs, hots, free=0) == [0, 0, 0]


def test_emitted_add_places_its_queues_apart() -> None:
    """The lowering inserts the pads: B 256 B into the groups, C in the next 64 KB section."""
    k = api.transform(api.parse(str(ROOT / "examples" / "add.ir")), "tile{ew.i=3},double_buffer,multicore{ew=1}")
    src = api.emit(k).source
    inits = [ln.strip() for ln in src.splitlines() if ln.strip().startswith("pipe.InitBuffer(")]
    assert any("inQueue_B_ub at UB byte 12544" in ln for ln in inits), inits
    assert any("outQueue_C_ub at UB byte 65536" in ln for ln in inits), inits


def test_flash_layout_is_no_worse_than_the_plain_one() -> None:
    r, kv, d = 32, 128, 128
    sizes = {"s_ub": (r * kv * 4, 2), "m_ub": (r * kv * 2, 2), "o_ub": (r * d * 4, 2), "p_ub": ((r + 1) * kv * 2, 1),
             "out_ub": (r * d * 2, 1), "mf_ub": (r * kv * 4, 1), "acc_ub": (r * d * 4, 1), "stat_ub": (1024, 1),
             "brc_ub": (1024, 1)}
    slabs = [Slab(k, b, s) for k, (b, s) in sizes.items()]
    hots = flash_banks.vector_hots(r, kv, d, 1, False, 8)
    plain = _cost(slabs, hots, [0] * len(slabs))
    free = 192 * 1024 - 8192 - sum(s.nbytes * s.slots for s in slabs)
    placed = _cost(slabs, hots, place(BANKS, slabs, hots, free))
    assert placed <= plain
    # what stays is mostly in-place instructions (dst == src: a beat more under any layout)
    inplace = [h for h in hots if any(a.write and any(b.slab == a.slab and b.offset == a.offset and not b.write
                                                      for b in h.accesses) for a in h.accesses)]
    assert _cost(slabs, inplace, [0] * len(slabs)) >= 0.8 * plain
    # P's Nz rearrangement writes its 8 blocks r + 1 rows apart: 8 groups, one beat (r rows
    # apart, as before, all 8 fell in one group: 8 beats)
    (adds,) = [h for h in hots if h.what == "Adds P"]
    (dst,) = [a for a in adds.accesses if a.write]
    assert dst.blk == r + 1
    assert repeat_beats(BANKS, _rows(0, 8, True, dst.blk)) == 1
    assert repeat_beats(BANKS, _rows(0, 8, True, r)) == 8
