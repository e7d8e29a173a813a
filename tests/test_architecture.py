"""docs/ARCHITECTURE.md is the project's map: its layer table says which package may import
which. These tests read that table and the source, so the map and the code cannot drift:
an upward import, a package missing from the table, or a private name used across modules
fails here with the file and line to fix."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "farmhand"
MAP = ROOT / "docs" / "ARCHITECTURE.md"
ROW = re.compile(r"^\| `(?P<package>[a-z][a-z0-9_]*)` \|[^|]*\|(?P<allowed>[^|]*)\|\s*$")


def allowed_imports(doc: Path = MAP) -> dict[str, set[str] | None]:
    """package -> the packages it may import (None: everything), from the map's table."""
    table: dict[str, set[str] | None] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            words = {w.strip() for w in match["allowed"].split(",") if w.strip()}
            table[match["package"]] = None if words == {"everything"} else words
    return table


@dataclass(frozen=True)
class Import:
    file: Path
    line: int
    module: str  # farmhand.x.y
    names: tuple[str, ...]


def package_of(path: Path) -> str:
    parts = path.relative_to(SOURCE).parts
    return parts[0].removesuffix(".py")


def module_of(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["farmhand", *parts])


def farmhand_imports(path: Path) -> list[Import]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "farmhand" or node.module.startswith("farmhand."):
                names = tuple(a.name for a in node.names)
                found.append(Import(path, node.lineno, node.module, names))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("farmhand."):
                    found.append(Import(path, node.lineno, alias.name, ()))
    return found


def import_targets(imp: Import) -> list[str]:
    """The packages an import reaches: `farmhand.x.y` reaches x; `from farmhand import a`
    reaches the package or module a, or else the Python API (`farmhand`, whose
    `__init__.py` sits above every package)."""
    if imp.module != "farmhand":
        return [imp.module.split(".")[1]]
    return [
        name if (SOURCE / name).is_dir() or (SOURCE / f"{name}.py").is_file() else "farmhand"
        for name in imp.names
    ]


def source_files() -> list[Path]:
    return sorted(SOURCE.rglob("*.py"))


def test_the_map_lists_every_package() -> None:
    table = allowed_imports()
    packages = {package_of(p) for p in source_files()} - {"__main__", "__init__"}
    missing = sorted(packages - set(table))
    assert not missing, f"docs/ARCHITECTURE.md has no row for: {', '.join(missing)}"
    unknown = {w for allowed in table.values() if allowed for w in allowed} - packages
    assert not unknown, f"the map allows imports of packages that do not exist: {unknown}"


def test_no_package_imports_what_the_map_does_not_allow() -> None:
    table = allowed_imports()
    wrong = []
    for path in source_files():
        package = package_of(path)
        allowed = table.get(package)
        if package in ("__main__", "__init__") or allowed is None:
            continue
        for imp in farmhand_imports(path):
            for target in import_targets(imp):
                if target != package and target not in allowed:
                    where = f"{path.relative_to(ROOT)}:{imp.line}"
                    wrong.append(f"{where} imports {imp.module} ({package} may not use {target})")
    assert not wrong, "imports against docs/ARCHITECTURE.md:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("module", "names", "targets"),
    [
        ("farmhand.service.chat", ("run_chat",), ["service"]),
        ("farmhand", ("jsonwire",), ["jsonwire"]),  # a module
        ("farmhand", ("service",), ["service"]),  # a package
        ("farmhand", ("Runtime",), ["farmhand"]),  # the Python API, above every package
    ],
)
def test_from_farmhand_imports_are_checked_too(
    module: str, names: tuple[str, ...], targets: list[str]
) -> None:
    imp = Import(SOURCE / "tools" / "example.py", 1, module, names)
    assert import_targets(imp) == targets
    assert not set(targets) <= (allowed_imports()["tools"] or set())


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_name_is_imported_across_modules() -> None:
    wrong = []
    for path in source_files():
        here = module_of(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules: dict[str, str] = {}  # local name -> farmhand module it is bound to
        for imp in farmhand_imports(path):
            if imp.module != here:
                wrong += [
                    f"{path.relative_to(ROOT)}:{imp.line} imports {imp.module}.{name}"
                    for name in imp.names
                    if private(name)
                ]
            for name in imp.names:  # `from farmhand.server import openai_api`
                modules[name] = f"{imp.module}.{name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and private(node.attr)
            ):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                wrong.append(f"{where} uses {modules[node.value.id]}.{node.attr}")
    assert not wrong, "private names used outside their module:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("line", "package", "allowed"),
    [
        ("| `tools` | tool definitions | errors, messages |", "tools", {"errors", "messages"}),
        ("| `cli` | the command | everything |", "cli", None),
        ("| `errors` | the tree | |", "errors", set()),
    ],
)
def test_the_table_reader_reads_rows_as_written(
    line: str, package: str, allowed: set[str] | None, tmp_path: Path
) -> None:
    doc = tmp_path / "ARCHITECTURE.md"
    doc.write_text(f"| package | what | may import |\n|---|---|---|\n{line}\n", encoding="utf-8")
    assert allowed_imports(doc) == {package: allowed}


DISPLAY = ("rich.console", "rich.progress", "rich.prompt", "rich.live")


def test_display_lives_in_the_cli() -> None:
    """The map's rule: progress bars, prompts and the terminal are the CLI's business; a lower
    layer takes a callback (`provider_for(load=, progress=)`)."""
    wrong = []
    for path in source_files():
        if package_of(path) == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            wrong += [
                f"{path.relative_to(ROOT)}:{node.lineno} imports {name}"
                for name in names
                if name.startswith(DISPLAY)
            ]
    assert not wrong, "display outside cli/:\n" + "\n".join(wrong)


EMBEDDED = "farmhand.providers.llamacpp"


def test_the_embedded_model_is_reached_through_its_package() -> None:
    """The map's rule: outside `providers/llamacpp/`, only `providers/factory.py` builds the
    embedded model, and code outside `providers/` takes its names from the package
    (`farmhand.providers.llamacpp`), never from its modules."""
    wrong = []
    for path in source_files():
        here = module_of(path)
        if here == EMBEDDED or here.startswith(EMBEDDED + "."):
            continue
        inside_providers = here.startswith("farmhand.providers.")
        for imp in farmhand_imports(path):
            if imp.module != EMBEDDED and not imp.module.startswith(EMBEDDED + "."):
                continue
            where = f"{path.relative_to(ROOT)}:{imp.line}"
            if inside_providers and here != "farmhand.providers.factory":
                wrong.append(f"{where}: only providers/factory.py builds the embedded model")
            elif imp.module != EMBEDDED:
                wrong.append(f"{where} imports {imp.module}: import from {EMBEDDED}")
    assert not wrong, "the embedded model reached around its package:\n" + "\n".join(wrong)


CLI_PROVIDER_MODULES = {"farmhand.providers.base", "farmhand.providers.factory"}


def test_the_cli_builds_providers_through_the_factory() -> None:
    """A model's provider is built by `providers.factory` for every face; the CLI draws the
    progress of that (a callback), and never reaches into a backend's own modules."""
    wrong = [
        f"{imp.file.relative_to(ROOT)}:{imp.line} imports {imp.module}"
        for path in source_files()
        if package_of(path) == "cli"
        for imp in farmhand_imports(path)
        if imp.module.startswith("farmhand.providers.") and imp.module not in CLI_PROVIDER_MODULES
    ]
    assert not wrong, "the CLI reaches into providers:\n" + "\n".join(wrong)
