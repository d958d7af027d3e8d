"""No import cycles among the hub's modules (hubcore, hubhttp, hubmcp, hubcli).

The graph is built from the source's syntax tree, so nothing is imported to build it. Every import
counts wherever it stands, a function-level one included: deferring an import to call time hides a
cycle from the interpreter, not from the design (both modules still need each other). Only the
imports under `if TYPE_CHECKING:` are left out: they never run, and annotations may name any module.
An edge goes to the module named, not to its parent packages (`from a.b import c` is an edge to
`a.b.c` when that is a module, else to `a.b`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("hubcore", "hubhttp", "hubmcp", "hubcli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement but those under `if TYPE_CHECKING:` (their `else:` branch runs)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def base_of(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = importer.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = ".".join(parts[:keep])
    return f"{base}.{node.module}" if node.module else base


def targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, known: dict[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    base = base_of(node, importer, is_package)
    found: set[str] = set()
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        if submodule in known:
            found.add(submodule)
        elif base in known:
            found.add(base)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in runtime_imports(tree):
            edges |= targets(node, name, is_package, known)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def describe(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return "cycle among " + ", ".join(component) + " (" + "; ".join(edges) + ")"


def test_the_hub_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100, "the walk found too few modules to be the hub"
    found = cycles(graph)
    assert not found, "\n".join(describe(c, graph) for c in found)


def test_the_graph_sees_relative_and_function_level_imports() -> None:
    """The checker itself: a deferred import and a relative one are both edges, a TYPE_CHECKING one
    is not, and a cycle through them is named."""
    source = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "if TYPE_CHECKING:\n    from pkg import c\n"
        "def f():\n    from pkg.d import thing\n"
    )
    known = {name: Path() for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d")}
    edges: set[str] = set()
    for node in runtime_imports(source):
        edges |= targets(node, "pkg.a", False, known)
    assert edges == {"pkg.b", "pkg.d"}
    graph = {"pkg.a": edges, "pkg.b": set(), "pkg.d": {"pkg.a"}}
    assert cycles(graph) == [["pkg.a", "pkg.d"]]
    assert describe(["pkg.a", "pkg.d"], graph) == "cycle among pkg.a, pkg.d (pkg.a -> pkg.d; pkg.d -> pkg.a)"


@pytest.mark.parametrize(
    ("importer", "is_package", "statement", "expected"),
    [
        ("pkg.sub.mod", False, "from .. import x", "pkg"),
        ("pkg.sub.mod", False, "from .sibling import x", "pkg.sub.sibling"),
        ("pkg.sub", True, "from .mod import x", "pkg.sub.mod"),
        ("pkg.sub", True, "from .. import x", "pkg"),
    ],
)
def test_relative_imports_resolve(importer: str, is_package: bool, statement: str, expected: str) -> None:
    node = ast.parse(statement).body[0]
    assert isinstance(node, ast.ImportFrom)
    assert base_of(node, importer, is_package) == expected
