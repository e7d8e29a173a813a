"""No module of farmhand imports itself back, however far round: a cycle of imports means two
modules that cannot be understood (or loaded, or tested) one without the other, and is how
layers blur. Every import counts, those under `if TYPE_CHECKING:` and inside functions too,
since they tie the modules together just the same."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "farmhand"

Graph = dict[str, dict[str, int]]
"""module -> the farmhand modules it imports, each with the line of its first import."""


def module_name(path: Path, source: Path) -> str:
    parts = list(path.relative_to(source).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([source.name, *parts])


def import_graph(source: Path = SOURCE) -> Graph:
    """Every module under `source` and the modules of the same tree it imports, wherever
    the import stands; `from package import module` is an import of the module."""
    files = {module_name(p, source): p for p in sorted(source.rglob("*.py"))}
    top = source.name
    graph: Graph = {}
    for module, path in files.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == top or node.module.startswith(top + "."):
                    for alias in node.names:
                        sub = f"{node.module}.{alias.name}"
                        targets.append(sub if sub in files else node.module)
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                if target in files and target != module:
                    edges.setdefault(target, node.lineno)
        graph[module] = edges
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in graph:
        if module not in index:
            visit(module)
    return sorted(found)


def describe(group: list[str], graph: Graph, source: Path = SOURCE) -> str:
    """One way round the group, each step with the file and line of its import."""
    members = set(group)
    path = [group[0]]
    while True:
        here = path[-1]
        step = next(t for t in sorted(graph[here]) if t in members)
        if step in path:
            path = [*path[path.index(step) :], step]
            break
        path.append(step)
    steps = []
    for here, there in itertools.pairwise(path):
        file = source.parent / (here.replace(".", "/") + ".py")
        if not file.exists():
            file = file.with_suffix("") / "__init__.py"
        steps.append(f"  {file.relative_to(source.parent)}:{graph[here][there]} imports {there}")
    return " -> ".join(path) + "\n" + "\n".join(steps)


def test_no_module_imports_itself_back() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles (move what both sides need into a module of its own):\n" + (
        "\n".join(describe(group, graph) for group in found)
    )


def test_a_cycle_is_found_however_its_imports_are_written(tmp_path: Path) -> None:
    """The check itself: a cycle through a TYPE_CHECKING import, a function-local import and
    `from package import module` is found; a chain without one is not."""
    source = tmp_path / "farm"
    (source / "inner").mkdir(parents=True)
    (source / "__init__.py").write_text("")
    (source / "inner" / "__init__.py").write_text("")
    (source / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from farm.inner import b\n"
    )
    (source / "inner" / "b.py").write_text("def f():\n    import farm.c\n")
    (source / "c.py").write_text("from farm.a import something\n")
    (source / "d.py").write_text("from farm.c import x\n")  # into the cycle, not part of it
    graph = import_graph(source)
    assert cycles(graph) == [["farm.a", "farm.c", "farm.inner.b"]]
    described = describe(cycles(graph)[0], graph, source)
    assert described.startswith("farm.a -> farm.inner.b -> farm.c -> farm.a")
    assert "farm/inner/b.py:2 imports farm.c" in described
    (source / "c.py").write_text("x = 1\n")
    assert cycles(import_graph(source)) == []
