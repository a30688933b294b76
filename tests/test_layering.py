"""The layers of `docs/architecture.md`, checked by walking the imports (ast, no import).

Every `import` / `from ... import` anywhere in a module counts, including imports inside
functions (they hide a coupling, they do not remove it). Two rules:

1. no module of `transformer/` imports `passes/`, except the entry points above the passes
   (layers 5-6: the driver, the tuner `transformer/tune/`, the public API and the CLI);
2. the import graph of `transformer/` and `passes/` has no cycle between modules.

The checker is a plain function over a {module: source} map, so the tests below also feed it
deliberately broken trees and check that it catches them.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("transformer", "passes")

# layers 5-6 of docs/architecture.md: they run pipelines, so they may import passes/
ENTRY_POINTS = ("transformer.cli", "transformer.driver", "transformer.api", "transformer.tune")

# Known edges still to remove, each with the issue that removes it.
ALLOWED_EDGES: set[tuple[str, str]] = {
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def repo_sources() -> dict[str, tuple[str, bool]]:
    """{module: (source, is_package)} for every module of the checked packages (a fresh
    dict each call: tests edit their copy)."""
    return dict(_read_sources())


@functools.lru_cache(maxsize=1)
def _read_sources() -> tuple[tuple[str, tuple[str, bool]], ...]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            out.append((_module_name(path), (path.read_text(), path.name == "__init__.py")))
    return tuple(out)


def _type_only_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:` (annotations only, no run-time use)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for s in node.body for n in ast.walk(s))
    return out


@functools.lru_cache(maxsize=None)
def imports_of(module: str, source: str, is_package: bool, *, runtime_only: bool = False) -> frozenset[str]:
    """Absolute names of the modules `module` imports (anywhere in its text; with
    `runtime_only`, not those under `if TYPE_CHECKING:`)."""
    out: set[str] = set()
    pkg = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    skip = _type_only_nodes(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            # `from pkg import sub` names a submodule when one exists; resolved by the caller
            out.update(f"{mod}.{a.name}" for a in node.names)
    return frozenset(out)


def import_graph(sources: dict[str, tuple[str, bool]], *, runtime_only: bool = False) -> nx.DiGraph:
    """Edges between the given modules (only imports of a known module count)."""
    g = nx.DiGraph()
    g.add_nodes_from(sources)
    for mod, (src, is_pkg) in sources.items():
        for name in imports_of(mod, src, is_pkg, runtime_only=runtime_only):
            if name in sources and name != mod:
                g.add_edge(mod, name)
    return g


def _allowed(mod: str, dep: str) -> bool:
    return any(mod == a and (dep == b or dep.startswith(b + ".")) for a, b in ALLOWED_EDGES)


def _is_entry_point(mod: str) -> bool:
    return any(mod == e or mod.startswith(e + "_") or mod.startswith(e + ".") for e in ENTRY_POINTS)


def layering_violations(sources: dict[str, tuple[str, bool]]) -> list[str]:
    """Human-readable violations of the two rules (empty when the tree is clean)."""
    problems = []
    g = import_graph(sources)
    for mod, dep in sorted(g.edges):
        if mod.startswith("transformer") and (dep == "passes" or dep.startswith("passes.")):
            if _is_entry_point(mod) or _allowed(mod, dep):
                continue
            problems.append(f"{mod} imports {dep}: analyses (layers 1-3) never import passes/")
    # Cycles: imports under `if TYPE_CHECKING:` are annotations, not coupling at run time;
    # a package's __init__ importing its own submodules is not a cycle of meaning.
    g2 = nx.DiGraph((a, b) for a, b in import_graph(sources, runtime_only=True).edges
                    if not b.startswith(a + ".") and not _allowed(a, b))
    for cycle in nx.simple_cycles(g2):
        problems.append("import cycle: " + " -> ".join(cycle + [cycle[0]]))
    return sorted(problems)


def test_repository_respects_the_layers():
    assert layering_violations(repo_sources()) == []


def test_no_command_module_imports_another():
    """Layer 6: the CLI command modules share only `cli_common` (the steps are the driver's)."""
    g = import_graph(repo_sources())
    bad = [(a, b) for a, b in g.edges if a.startswith("transformer.cli") and b.startswith("transformer.cli")
           and b != "transformer.cli_common"]
    assert bad == []


def test_allowed_edges_are_still_needed():
    """An allow-listed edge that no longer exists must be removed from the list."""
    g = import_graph(repo_sources())
    unused = {(a, b) for a, b in ALLOWED_EDGES if not any(_allowed(m, d) and m == a for m, d in g.edges)}
    assert not unused, f"remove from ALLOWED_EDGES: {sorted(unused)}"


def test_catches_an_analysis_importing_a_pass():
    sources = repo_sources()
    src, is_pkg = sources["transformer.deps"]
    sources["transformer.deps"] = (src + "\n\ndef _bad():\n    from passes.tile import Tile\n", is_pkg)
    problems = layering_violations(sources)
    assert "transformer.deps imports passes.tile: analyses (layers 1-3) never import passes/" in problems
    # passes.tile imports deps, so the same edge also closes a cycle
    assert any(p.startswith("import cycle:") and "transformer.deps" in p for p in problems), problems


def test_catches_a_relative_import_into_passes_from_capacity():
    sources = repo_sources()
    src, is_pkg = sources["transformer.capacity.model"]
    sources["transformer.capacity.model"] = (src + "\nimport passes.base\n", is_pkg)
    assert any(v.startswith("transformer.capacity.model imports passes.base") for v in layering_violations(sources))


def test_catches_an_import_cycle():
    sources = repo_sources()
    src, is_pkg = sources["transformer.ir"]
    sources["transformer.ir"] = (src + "\nfrom .printer import print_kernel\n", is_pkg)
    problems = layering_violations(sources)
    assert any(p.startswith("import cycle:") and "transformer.ir" in p and "transformer.printer" in p
               for p in problems), problems


def test_entry_points_may_run_passes():
    sources = {
        "transformer": ("", True),
        "transformer.driver": ("from passes.base import run_pipeline\n", False),
        "transformer.cli_passes": ("from passes.base import registry\n", False),
        "passes": ("", True),
        "passes.base": ("from transformer import ir\n", False),
    }
    assert layering_violations(sources) == []
