"""Target tables: every target has every required fact with a status and a source."""

from __future__ import annotations

import pytest

from transformer import targets as T
from transformer.targets import (
    ARCH_FACTS,
    DEFAULT_TARGET,
    REQUIRED_FACTS,
    REQUIRED_SCOPES,
    Fact,
    Target,
    UnknownTargetError,
    get_target,
    list_targets,
)

KiB = 1024
ALL = ["ascend310p", "ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4"]


def test_list_and_default() -> None:
    assert set(ALL) <= set(list_targets())
    assert DEFAULT_TARGET == "ascend910b2"
    assert get_target().name == "ascend910b2"
    assert get_target(None) is get_target("ASCEND910B2")


def test_unknown_target_is_typed_and_lists_known() -> None:
    with pytest.raises(UnknownTargetError) as ei:
        get_target("ascend999")
    assert isinstance(ei.value, LookupError)
    for n in ALL:
        assert n in str(ei.value)
    assert "ascx.targets" in ei.value.detail()


@pytest.mark.parametrize("name", ALL)
def test_every_fact_has_status_and_source(name: str) -> None:
    t = get_target(name)
    t.validate()
    needed = set(REQUIRED_FACTS) | set(ARCH_FACTS[t.arch])
    assert needed <= set(t.facts)
    for s in REQUIRED_SCOPES:
        assert s in t.scopes
    for key, f in t.all_facts().items():
        assert isinstance(f, Fact), key
        assert f.status in ("documented", "assumed", "calibrated"), key
        if f.status == "calibrated":  # only the shipped timing fit (transformer/targets/_calibrated.py)
            assert f.source.startswith("ascx calibrate --dataset published"), key
        assert f.source.strip(), key
    rows = t.to_table()
    assert {"name", "value", "unit", "status", "source"} <= set(rows[0])
    assert len(rows) >= len(t.all_facts())
    assert name in t.format_table()


@pytest.mark.parametrize("name", ["ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4"])
def test_a2_numbers(name: str) -> None:
    t = get_target(name)
    assert t.arch == "split"
    assert t.aiv_cores == 2 * t.aic_cores
    assert t.scope("ub").usable_bytes == 192 * KiB
    assert t.scope("ub").usable_bytes - t.api_temp_bytes == 184 * KiB
    assert t.scope("l1").usable_bytes == 512 * KiB - 128
    assert t.scope("l0a").physical_bytes == 64 * KiB
    assert t.scope("l0a").fractal_bytes == 512
    assert t.scope("l0c").physical_bytes == 128 * KiB
    assert t.scope("l0c").alignment_bytes == 1024  # conservative per the facts
    assert t.scope("ub").alignment_bytes == t.scope("l1").alignment_bytes == 32
    assert t.max_queue_buffers_per_position == 8
    assert t.max_buffers_per_kernel == 64
    assert t.datacopy_max_block_count == 4095 and t.vector_max_repeat == 255
    assert t.fact("ub.usable_bytes").status == "documented"


def test_variant_differences() -> None:
    b1, b2, b4 = get_target("ascend910b1"), get_target("ascend910b2"), get_target("ascend910b4")
    assert (b1.clock_mhz, b2.clock_mhz, b4.clock_mhz) == (1850, 1800, 1500)
    assert (b2.aic_cores, b2.aiv_cores, b4.aic_cores, b4.aiv_cores) == (24, 48, 20, 40)
    assert b4.value("l2_bytes") == 96 * 1024 * KiB
    assert get_target("ascend910b3").fact("clock_mhz").status == "assumed"


def test_310p_coupled() -> None:
    t = get_target("ascend310p")
    assert t.arch == "coupled" and t.aic_cores is None and t.cores >= 1
    assert t.scope("ub").usable_bytes == 256 * KiB
    assert t.scope("l1").physical_bytes == 1024 * KiB
    assert t.scope("l0c").physical_bytes == 256 * KiB
    assert t.fact("cores").status == "assumed"


@pytest.mark.parametrize("name", ALL)
def test_positions_map_to_scopes(name: str) -> None:
    t = get_target(name)
    expect = {"VECIN": "ub", "VECOUT": "ub", "VECCALC": "ub", "A1": "l1", "B1": "l1",
              "A2": "l0a", "B2": "l0b", "CO1": "l0c"}
    for pos, scope in expect.items():
        assert t.scope_of_position(pos).name == scope


def test_entry_point_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    base = get_target("ascend910b2")
    custom = Target("mychip", "split", "test chip", dict(base.scopes), dict(base.facts))

    class EP:
        name = "mychip"

        def load(self) -> Target:
            return custom

    monkeypatch.setattr(T, "_entry_points", lambda: {"mychip": EP()})
    monkeypatch.setattr(T, "_cache", {})
    assert "mychip" in list_targets()
    assert get_target("mychip") is custom
