"""Target overrides: a TOML file that replaces some facts of a named target.

Why: the assumed numbers of a target table (bandwidths, unit rates, launch costs) are
placeholders a user with hardware should correct, and `ascx calibrate` fits timing-model
parameters to measurements.  Both end up in a small TOML file that every command taking
`--target` loads with `--target-file FILE.toml`; the facts it sets are marked
`calibrated`, with the file as their source, so `ascx targets NAME --target-file FILE`
shows where each number came from.

Format (every key optional except `[facts]`)::

    # written by `ascx calibrate` (or by hand)
    target = "ascend910b2"                      # the target it applies to
    [facts]
    mte2_gm_to_ub_bytes_per_cycle = 27.9        # a plain value ...
    "ub.usable_bytes" = 190464                  # scope facts are `<scope>.<item>`
    vector_repeats_per_cycle = { value = 0.9, source = "msprof, 12 kernels" }   # ... or value + source

A value must have the type of the fact it replaces (an integer fact takes an integer, a
string fact a string), numbers must be finite and >= 0, and the resulting target must
still validate.  Every problem is a located error (`file:line:col: error: ...`).
"""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from typing import Any

from ..diagnostics import Source, UsageError, did_you_mean
from ..ir import Loc
from ._base import Fact, InvalidTargetError, Target

CALIBRATED = "calibrated"


class OverrideError(UsageError):
    """A target override file that cannot be applied (located in the file)."""


def _key_loc(text: str, key: str, table: str | None = "facts") -> Loc | None:
    """Where `key` is defined in `text` (1-based line and column), best effort: the first
    line (after the `[table]` header when given) that starts with the key, bare or quoted."""
    lines = text.splitlines()
    start = 0
    if table is not None:
        for i, line in enumerate(lines):
            if re.match(rf"\s*\[\s*{re.escape(table)}\s*\]", line):
                start = i + 1
                break
    pat = re.compile(rf"""^(\s*)(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""")
    for i in range(start, len(lines)):
        m = pat.match(lines[i])
        if m:
            return Loc(i + 1, len(m.group(1)) + 1)
    return None


def _value_loc(text: str, key: str) -> Loc | None:
    loc = _key_loc(text, key)
    if loc is None:
        return None
    line = text.splitlines()[loc.line - 1]
    eq = line.find("=", loc.col - 1)
    col = eq + 1
    while col < len(line) and line[col] == " ":
        col += 1
    return Loc(loc.line, col + 1)


# Facts that count things (cores, elements, ids, buffers): an override must give an integer.
# Every `*_bytes` fact is a size and integral too; other numeric facts (rates, clocks,
# bandwidths, timing-model costs) take any finite number >= 0.
COUNT_FACTS: frozenset[str] = frozenset({
    "cores", "aic_cores", "aiv_cores", "cube_m", "cube_n", "cube_k_f16", "cube_k_i8",
    "user_event_ids", "vector_max_repeat", "max_queue_buffers_per_position",
    "max_buffers_per_kernel", "datacopy_max_block_count", "mmad_max_dim",
})


def _integral(name: str) -> bool:
    return name.endswith("_bytes") or name in COUNT_FACTS


def _check_value(name: str, old: Fact, value: Any) -> int | float | str:
    """`value` converted to the kind of `old.value`, or a message why not."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"fact `{name}` takes a {type(old.value).__name__}, got {type(value).__name__}")
    if isinstance(old.value, str):
        if not isinstance(value, str):
            raise ValueError(f"fact `{name}` takes a string, got {value!r}")
        return value
    if isinstance(value, str):
        raise ValueError(f"fact `{name}` takes a number, got the string {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"fact `{name}` must be a finite number >= 0, got {value!r}")
    if isinstance(old.value, int) and _integral(name):
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"fact `{name}` takes an integer, got {value!r}")
        return int(value)
    return value if isinstance(value, int) else float(value)


def parse_override(source: Source) -> tuple[str | None, dict[str, tuple[Any, str | None, Loc | None]]]:
    """The target name (or None) and `{fact: (value, source or None, location)}` of an
    override file's text, checking only its shape (not the facts: see `apply_override`)."""
    try:
        data = tomllib.loads(source.text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        loc = Loc(int(m.group(1)), int(m.group(2))) if m else None
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e)) or "invalid TOML"
        raise OverrideError(f"not valid TOML: {msg}", loc, source=source,
                            hint="a target override is TOML: `target = \"NAME\"`, then `[facts]` with `name = value` lines") from None
    unknown = [k for k in data if k not in ("target", "facts", "comment")]
    if unknown:
        raise OverrideError(f"unknown key `{unknown[0]}`", _key_loc(source.text, unknown[0], None), source=source,
                            hint="expected `target`, `comment` and the `[facts]` table")
    target = data.get("target")
    if target is not None and not isinstance(target, str):
        raise OverrideError("`target` must be a string (a target name)", _key_loc(source.text, "target", None),
                            source=source, hint="e.g. target = \"ascend910b2\"")
    facts = data.get("facts")
    if not isinstance(facts, dict):
        raise OverrideError("no `[facts]` table", Loc(1, 1), source=source,
                            hint="add `[facts]` followed by `fact_name = value` lines (see `ascx targets NAME`)")
    out: dict[str, tuple[Any, str | None, Loc | None]] = {}
    for name, raw in _flatten(facts):
        src: str | None = None
        value = raw
        if isinstance(raw, dict):
            extra = set(raw) - {"value", "source"}
            if "value" not in raw or extra:
                raise OverrideError(f"fact `{name}`: an inline table takes `value` and optional `source`",
                                    _value_loc(source.text, name), source=source,
                                    hint=f"e.g. {name} = {{ value = 1.0, source = \"measured\" }}")
            value, src = raw["value"], raw.get("source")
            if src is not None and not isinstance(src, str):
                raise OverrideError(f"fact `{name}`: `source` must be a string", _value_loc(source.text, name),
                                    source=source)
        out[name] = (value, src, _key_loc(source.text, name))
    return target, out


def _flatten(facts: dict[str, Any]) -> list[tuple[str, Any]]:
    """`[facts.ub] usable_bytes = ...` is the same as `"ub.usable_bytes" = ...`; an inline
    `{value, source}` table is a leaf."""
    out: list[tuple[str, Any]] = []
    for k, v in facts.items():
        if isinstance(v, dict) and "value" not in v and all(isinstance(x, (dict, int, float, str, bool)) for x in v.values()):
            out.extend((f"{k}.{kk}", vv) for kk, vv in _flatten(v))
        else:
            out.append((k, v))
    return out


def apply_override(base: Target, facts: dict[str, tuple[Any, str | None, Loc | None]], source: Source) -> Target:
    """`base` with `facts` replaced, each marked calibrated with `source.path` as source."""
    known = base.all_facts()
    new_scalar = dict(base.facts)
    new_scopes = dict(base.scopes)
    for name, (value, src, loc) in facts.items():
        if name not in known:
            raise OverrideError(f"target {base.name} has no fact `{name}`", loc, source=source,
                                hint=did_you_mean(name, known) or f"see `ascx targets {base.name}`")
        try:
            checked = _check_value(name, known[name], value)
        except ValueError as e:
            raise OverrideError(str(e), _value_loc(source.text, name) or loc, source=source,
                                hint=f"`ascx targets {base.name}` shows {name} = {known[name].value!r}") from None
        fact = Fact(checked, CALIBRATED, f"{source.path}" + (f": {src}" if src else ""))
        if name in new_scalar:
            new_scalar[name] = fact
        else:
            scope, _, item = name.partition(".")
            field = {"physical_bytes": "physical", "usable_bytes": "usable", "alignment_bytes": "alignment",
                     "fractal_bytes": "fractal"}[item]
            new_scopes[scope] = dataclasses.replace(new_scopes[scope], **{field: fact})
    target = Target(name=base.name, arch=base.arch, description=f"{base.description} (overrides: {source.path})",
                    scopes=new_scopes, facts=new_scalar)
    try:
        target.validate()
    except InvalidTargetError as e:
        first = next(iter(facts.values()))[2] if facts else None
        raise OverrideError(f"the overridden target is not valid: {e.summary}", first, source=source) from None
    return target


def load_override(path: str, target_name: str | None = None) -> Target:
    """The target of `path` (or `target_name`) with the file's facts applied.

    `target_name` (from `--target`) must agree with the file's `target` when both are
    given; with neither, the default target is used."""
    from . import DEFAULT_TARGET, get_target, list_targets

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"--target-file {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--target-file {path}: not a UTF-8 text file") from None
    source = Source(path, text)
    file_target, facts = parse_override(source)
    if target_name and file_target and target_name.strip().lower() != file_target.strip().lower():
        raise OverrideError(f"this override is for target `{file_target}`, not `{target_name}`",
                            _key_loc(text, "target", None), source=source,
                            hint=f"drop --target, or pass --target {file_target}")
    name = target_name or file_target or DEFAULT_TARGET
    try:
        base = get_target(name)
    except LookupError:
        raise OverrideError(f"unknown target `{name}`", _key_loc(text, "target", None), source=source,
                            hint=did_you_mean(name, list_targets()) or ("targets: " + ", ".join(list_targets()))) from None
    return apply_override(base, facts, source)


def format_override(target: str, facts: dict[str, tuple[int | float | str, str]], comment: str = "") -> str:
    """TOML text of an override: `facts` maps name -> (value, source)."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()] if comment else []
    lines.append(f"target = {_toml_str(target)}")
    lines.append("")
    lines.append("[facts]")
    for name, (value, src) in facts.items():
        key = name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _toml_str(name)
        val = _toml_str(value) if isinstance(value, str) else repr(value)
        lines.append(f"{key} = {{ value = {val}, source = {_toml_str(src)} }}")
    return "\n".join(lines) + "\n"


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
