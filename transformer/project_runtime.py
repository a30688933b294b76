"""The custom-operator project of a kernel that reads its sizes at run time (`ascx emit
--project`, docs/npu.md "A custom-operator project"; docs/codegen.md "Run-time sizes").

project.py writes the project of a kernel specialised to its sizes; when the emitted kernel
reads its ranged sizes from its tiling struct (`plan.runtime_sizes`), the project serves
every shape of the ranges instead:

* `op_host/<op>_tiling.h`: the tiling-data class has the kernel's `TilingData` fields, in its
  order and types (all `int32_t`): the ranged sizes, then the derived values (`plan.tiling`),
  so the bytes `SaveToBuffer` writes are the struct the kernel reads from its `tiling`
  argument;
* the tiling function reads each ranged size from the input dimension that carries it,
  refuses (`GRAPH_FAILED`) a size outside its range (or off its multiple) and any other
  dimension that is not the kernel's, computes the derived values with the kernel's own
  expressions (host copies of its integer helpers) and sets the blockDim they give;
* InferShape gives each output the input dimensions of the sizes it has;
* the kernel entry passes its tiling argument to the emitted kernel unchanged.

Supported when every input and output dimension is a constant or one size (a ranged size
appears as a whole dimension of an input); otherwise `runtime_why` says why and the project
is specialised as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import ir
from .affine import eval_int

if TYPE_CHECKING:
    from .lower.plan import KernelPlan

# host copies of the kernel's integer helpers (templates/kernel.cpp.j2) that tiling expressions use
HOST_HELPERS = """namespace {
// host copies of the kernel's integer helpers its tiling expressions use (floor division for
// positive divisors, min, max), so this unit needs no kernel header
template <typename T> inline T ascx_qdiv(T a, T b)
{
    const T q = a / b;
    return (a % b != 0 && a < 0) ? T(q - 1) : q;
}
template <typename T> inline T ascx_qmod(T a, T b)
{
    const T r = a % b;
    return r < 0 ? T(r + b) : r;
}
template <typename T> inline T ascx_max(T a, T b) { return a >= b ? a : b; }
template <typename T> inline T ascx_min(T a, T b) { return a <= b ? a : b; }
}  // namespace
"""


def _dim_kind(d: ir.Expr, runtime: set[str], sizes: dict[str, int]) -> str | int | None:
    """A dimension: the ranged size it is, its constant value, or None (an expression of a ranged size)."""
    if isinstance(d, ir.Name) and d.name in runtime:
        return d.name
    if _mentions(d, runtime):
        return None
    return eval_int(d, sizes)


def _mentions(d: ir.Expr, names: set[str]) -> bool:
    from .intexpr import names_in

    return bool(set(names_in(d)) & names)


def runtime_why(kernel: ir.Kernel, plan: "KernelPlan") -> str | None:
    """Why the run-time project cannot serve `kernel` (None: it can)."""
    runtime = set(plan.runtime_names)
    if not runtime:
        return "the kernel is specialised to its sizes"
    sizes = kernel.size_values()
    carried: set[str] = set()
    inputs = {t.name for t in kernel.inputs}
    for t in (*kernel.inputs, *kernel.outputs):
        for d in t.shape:
            k = _dim_kind(d, runtime, sizes)
            if k is None:
                return f"a dimension of `{t.name}` is an expression of a ranged size"
            if isinstance(k, str) and t.name in inputs:
                carried.add(k)
    if runtime - carried:
        return f"the ranged size `{sorted(runtime - carried)[0]}` is no whole dimension of an input"
    return None


def _where(kernel: ir.Kernel, runtime: set[str]) -> dict[str, tuple[int, int]]:
    """Each ranged size -> (input index, dimension) of its first occurrence."""
    out: dict[str, tuple[int, int]] = {}
    for i, t in enumerate(kernel.inputs):
        for d, e in enumerate(t.shape):
            if isinstance(e, ir.Name) and e.name in runtime and e.name not in out:
                out[e.name] = (i, d)
    return out


def tiling_fields(plan: "KernelPlan") -> list[tuple[str, str]]:
    """(field, comment) of the tiling-data class: the kernel's TilingData, in its order."""
    return ([(c, f"a size in {lo}..{hi}") for c, lo, hi, _ in plan.runtime_sizes]
            + [(f.name, f.comment) for f in plan.tiling])


def host_tiling(kernel: ir.Kernel, plan: "KernelPlan", tiling: str) -> str:
    """The body of the tiling function: sizes from the input shapes, checks, derived values, blockDim."""
    runtime = set(plan.runtime_names)
    cname = plan.runtime_names
    sizes = kernel.size_values()
    ranges = kernel.size_ranges()
    where = _where(kernel, runtime)
    lines = []
    for i, t in enumerate(kernel.inputs):
        lines.append(f"    const gert::Shape &s{i} = context->GetInputShape({i})->GetOriginShape();")
    lines.append(f"    if ({' || '.join(f's{i}.GetDimNum() != {t.rank}' for i, t in enumerate(kernel.inputs)) or 'false'}) {{")
    lines.append("        return ge::GRAPH_FAILED;  // an input of another rank")
    lines.append("    }")
    for n in sorted(runtime):
        i, d = where[n]
        lo, hi, mult = ranges[n][0], ranges[n][1], ranges[n][2] if len(ranges[n]) > 2 else 1
        c = cname[n]
        cond = f"s{i}.GetDim({d}) < {lo} || s{i}.GetDim({d}) > {hi}" + (f" || s{i}.GetDim({d}) % {mult} != 0" if mult > 1 else "")
        lines.append(f"    if ({cond}) {{")
        lines.append(f"        return ge::GRAPH_FAILED;  // `{n}` must be in {lo}..{hi}" + (f", a multiple of {mult}" if mult > 1 else ""))
        lines.append("    }")
        lines.append(f"    const int32_t {c} = static_cast<int32_t>(s{i}.GetDim({d}));  // `{kernel.inputs[i].name}` dimension {d}")
    checks = []
    for i, t in enumerate(kernel.inputs):
        for d, e in enumerate(t.shape):
            k = _dim_kind(e, runtime, sizes)
            if isinstance(k, str):
                if where[k] != (i, d):
                    checks.append(f"s{i}.GetDim({d}) != {cname[k]}")
            else:
                checks.append(f"s{i}.GetDim({d}) != {k}")
    if checks:
        lines.append(f"    if ({' || '.join(checks)}) {{")
        lines.append("        return ge::GRAPH_FAILED;  // a dimension that is not the kernel's")
        lines.append("    }")
    lines.append(f"    {tiling} tiling;")
    for c, _, _, _ in plan.runtime_sizes:
        lines.append(f"    tiling.set_{c}({c});")
    for f in plan.tiling:
        lines.append(f"    const int32_t {f.name} = {f.expr};  // {f.comment}")
        lines.append(f"    tiling.set_{f.name}({f.name});")
    lines.append(f"    context->SetBlockDim(static_cast<uint32_t>({plan.block_dim_cpp}));")
    return "\n".join(lines) + "\n"


def infer_shape(kernel: ir.Kernel, plan: "KernelPlan") -> str:
    """InferShape: each output dimension from the input dimension of its size, or its constant."""
    runtime = set(plan.runtime_names)
    sizes = kernel.size_values()
    where = _where(kernel, runtime)
    out = []
    for k, t in enumerate(kernel.outputs):
        out.append(f"    gert::Shape *o{k} = context->GetOutputShape({k});\n    o{k}->SetDimNum({t.rank});\n")
        for d, e in enumerate(t.shape):
            kind = _dim_kind(e, runtime, sizes)
            v = f"context->GetInputShape({where[kind][0]})->GetDim({where[kind][1]})" if isinstance(kind, str) else kind
            out.append(f"    o{k}->SetDim({d}, {v});\n")
    return "".join(out)


def kernel_entry(plan: Any, entry: str, name: str) -> str:
    """The op-project entry of a run-time-size kernel: its tiling argument passed through."""
    params = plan.params
    gm = [p.cname for p in params if p.role != "workspace"]
    args = ", ".join([p.cname if p.role != "workspace" else "usr" for p in params] + ["tiling"])
    return (f'extern "C" __global__ __aicore__ void {entry}({", ".join(f"GM_ADDR {c}" for c in gm)}, GM_ADDR workspace, '
            "GM_ADDR tiling)\n{\n"
            "    SetSysWorkspace(workspace);\n    GM_ADDR usr = GetUserWorkspace(workspace);\n    (void)usr;\n"
            f"    {name}_body({args});  // reads its sizes from the tiling data (the same layout as its TilingData)\n}}\n")
