"""The repository stands alone: a clone with nothing beside it runs its tests, benches and
scripts. Test data from other projects lives in tests/corpora/ (with a NOTICE each); no
file here reaches for a path outside the checkout, whether written out or climbed to from
`__file__`."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("src", "tests", "bench", "scripts", ".ci")
TEXT_SUFFIXES = {".py", ".sh", ".toml", ".cfg", ".yaml", ".yml", ".json", ""}
# The team's sibling folder and the machines' own absolute checkout paths, spelled in pieces
# so this file does not match itself.
OUTSIDE = re.compile("|".join([r"\.\./" + "shared", "/" + "work/"]))


def checked_files() -> list[Path]:
    files = [ROOT / "Makefile"]
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "corpora" not in path.parts and path.suffix in TEXT_SUFFIXES:
                files.append(path)
    return files


def climbed_to(expr: ast.expr, here: Path) -> Path | None:
    """Where `expr` points if it is built from `Path(__file__)` (.parent, .parents[N], / "..",
    .resolve()), else None."""
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name) and func.id == "Path" and len(expr.args) == 1:
            arg = expr.args[0]
            if isinstance(arg, ast.Name) and arg.id == "__file__":
                return here
        if isinstance(func, ast.Attribute) and func.attr in {"resolve", "absolute"}:
            return climbed_to(func.value, here)
        return None
    if isinstance(expr, ast.Attribute) and expr.attr == "parent":
        base = climbed_to(expr.value, here)
        return base.parent if base else None
    if (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.value, ast.Attribute)
        and expr.value.attr == "parents"
        and isinstance(expr.slice, ast.Constant)
    ):
        base = climbed_to(expr.value.value, here)
        if base is None or not isinstance(expr.slice.value, int):
            return None
        steps = expr.slice.value + 1
        return Path(os.path.normpath(base / "/".join([".."] * steps)))
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        base = climbed_to(expr.left, here)
        if base is not None and isinstance(expr.right, ast.Constant):
            return Path(os.path.normpath(base / str(expr.right.value)))
        return base
    return None


def climbs_out(path: Path) -> list[str]:
    """`file:line` for every path built from `__file__` that lands outside the checkout."""
    found: dict[int, str] = {}  # one per line: the outermost expression is walked first
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.expr) and node.lineno not in found:
            target = climbed_to(node, path)
            if target is not None and not target.is_relative_to(ROOT):
                found[node.lineno] = f"{path.relative_to(ROOT)}:{node.lineno}: {target}"
    return list(found.values())


def test_no_file_names_a_path_outside_the_checkout() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in checked_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert found == [], "copy what these read into tests/corpora/ (with a NOTICE)"


def test_no_python_file_climbs_out_of_the_checkout_from_its_own_path() -> None:
    found = [hit for p in checked_files() if p.suffix == ".py" for hit in climbs_out(p)]
    assert found == [], "these paths leave the repository; keep test data in tests/corpora/"


@pytest.mark.parametrize(
    ("source", "outside"),
    [
        ('X = Path(__file__).parents[3] / "shared" / "corpora"', True),
        ('X = Path(__file__).resolve().parent.parent.parent.parent / "seeds"', True),
        ('X = Path(__file__).parent / ".." / ".." / ".." / "elsewhere"', True),
        ('X = Path(__file__).parents[1] / "corpora" / "llamacpp"', False),
        ('X = Path(__file__).resolve().parent.parent / "node_modules"', False),
    ],
)
def test_the_climb_check_tells_inside_from_outside(source: str, outside: bool) -> None:
    # A file two levels deep in the checkout, as tests/<package>/test_x.py is.
    probe = ROOT / "tests" / "support" / "probe.py"
    tree = ast.parse(source)
    assigned = tree.body[0]
    assert isinstance(assigned, ast.Assign)
    target = climbed_to(assigned.value, probe)
    assert target is not None
    assert (not target.is_relative_to(ROOT)) is outside


def test_every_corpus_says_where_it_came_from() -> None:
    corpora = ROOT / "tests" / "corpora"
    folders = [p for p in corpora.iterdir() if p.is_dir()]
    assert {p.name for p in folders} >= {"llamacpp", "promptfoo", "llamafarm"}
    for folder in folders:
        notice = (folder / "NOTICE").read_text(encoding="utf-8")
        assert "licen" in notice.lower() and "commit" in notice.lower(), folder
