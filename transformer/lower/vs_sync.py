"""V -> S ordering of a compute stage: a `V_S` flag before a scalar read of what V wrote.

The scalar unit issues vector instructions in order but does not wait for them to finish, so
a `GetValue` of a local that an earlier vector instruction wrote (`Adds(t_ubLocal[..], ..)`
then `t_ubLocal.GetValue(..)`) races on the device unless a `SetFlag/WaitFlag<V_S>` (or a
`PipeBarrier<PIPE_ALL>`) lies between them. The selectors place the flags they know they need
(a reduction's scalar combine, a scalar fallback nest); this pass is the safety net over the
finished stage text for the orders no single selector sees: a vector nest whose scalar
operand reads a local that another nest wrote (found by the emitted-code fuzzer,
`ASCX_FUZZ_SEED=12653`).

It is a data-flow pass over the lines: the set of locals V wrote since the last V -> S
ordering ("dirty") runs through the statements; a `GetValue` of a dirty local gets a flag
pair just before its line. A loop body is walked twice (the second time entered with what
its first iteration leaves dirty: a write late in the body reaches a read early in the next
iteration), a conditional block may be skipped (its exit state is the union), and the stage
itself is a loop body (its method is called once per tile). Only instruction names are
interpreted, so the pass is conservative: a call that is not one of the listed non-vector
APIs counts as a vector write of its first argument.
"""

from __future__ import annotations

import re

from .plan import Line

# the tensor a scalar read reads: `X_ubLocal[..].GetValue(`, `tmp0.ReinterpretCast<half>().GetValue(`
GET_BASE = re.compile(r"\b(\w+)(?:\[[^\[\]]*\]|\.ReinterpretCast<\w+>\(\))*\.GetValue\(")
# a free-function API call statement and the base name of its first argument
_CALL = re.compile(r"^\s*([A-Z]\w*)(?:<[^()]*>)?\(\s*(\w+)")
# API calls that are not vector instructions (DMA, sync, cube) or are this stage's own methods
_NOT_V = re.compile(r"^(DataCopy\w*|SetFlag|WaitFlag|PipeBarrier|CrossCore\w+|LoadData\w*|Mmad|Fixpipe|"
                    r"SetAtomic\w*|CopyIn\w*|CopyOut\w*|Compute\w*|Process\w*)$")
_ORDERS = ("WaitFlag<HardEvent::V_S>", "PipeBarrier<PIPE_ALL>")


def _blocks(body: list[Line], i: int, end: int) -> list[tuple[int, int]]:
    """Top-level statements of body[i:end] as (first, last) line spans; a block statement
    spans its header line through its closing brace (an if's `} else {` lines inside it)."""
    out: list[tuple[int, int]] = []
    while i < end:
        t = body[i].text.strip()
        j = i
        if t.endswith("{") and t.count("{") > t.count("}"):
            level = 0
            while j < end - 1:
                level += body[j].text.count("{") - body[j].text.count("}")
                if level <= 0:
                    break
                j += 1
        out.append((i, j))
        i = j + 1
    return out


def _branches(body: list[Line], first: int, last: int) -> list[tuple[int, int]]:
    """The bodies of a block statement: one for a loop or a plain `if`, one more per
    `} else {` at the block's own level."""
    out, start, level = [], first + 1, 1
    for k in range(first + 1, last):
        t = body[k].text.strip()
        if level == 1 and t.startswith("}") and t.endswith("{"):
            out.append((start, k))
            start = k + 1
            continue
        level += t.count("{") - t.count("}")
    out.append((start, last))
    return out


class _Flow:
    def __init__(self, body: list[Line]) -> None:
        self.body = body
        self.flag_before: set[int] = set()

    def walk(self, i: int, end: int, dirty: frozenset[str]) -> frozenset[str]:
        for first, last in _blocks(self.body, i, end):
            if first == last:
                dirty = self.stmt(first, dirty)
                continue
            head = self.body[first].text.strip()
            # the header's own expressions run first (a `for` bound can read a local)
            dirty = self.stmt(first, dirty, reads_only=True)
            if head.startswith(("for ", "for(", "while ", "while(")):
                once = self.walk(first + 1, last, dirty)
                again = self.walk(first + 1, last, dirty | once)
                dirty = dirty | once | again
            else:  # each branch from the same entry; any may be skipped
                exits = [self.walk(a, b, dirty) for a, b in _branches(self.body, first, last)]
                dirty = dirty.union(*exits)
        return dirty

    def stmt(self, k: int, dirty: frozenset[str], reads_only: bool = False) -> frozenset[str]:
        text = self.body[k].text
        if k in self.flag_before or any(o in text for o in _ORDERS):
            dirty = frozenset()
        if dirty and set(GET_BASE.findall(text)) & dirty:
            self.flag_before.add(k)
            dirty = frozenset()
        if reads_only:
            return dirty
        m = _CALL.match(text)
        if m and not _NOT_V.match(m.group(1)):
            dirty = dirty | {m.group(2)}
        return dirty


def vs_sync(body: list[Line]) -> list[Line]:
    """The stage `body` with a `V_S` flag pair before every scalar read that may see a vector
    write not yet ordered before it (the body is called repeatedly: walked as a loop)."""
    if not any(".GetValue(" in l.text for l in body):
        return body
    flow = _Flow(body)
    once = flow.walk(0, len(body), frozenset())
    flow.walk(0, len(body), once)
    if not flow.flag_before:
        return body
    out: list[Line] = []
    for k, line in enumerate(body):
        if k in flow.flag_before:
            out += [Line("SetFlag<HardEvent::V_S>(0);", line.depth, line.origin),
                    Line("WaitFlag<HardEvent::V_S>(0);", line.depth, line.origin)]
        out.append(line)
    return out
