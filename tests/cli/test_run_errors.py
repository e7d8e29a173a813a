"""`farmhand run` fails with one line, before any model is loaded, when its input is wrong."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

Farmhand = Callable[..., subprocess.CompletedProcess[str]]


def run_in(tmp_path: Path, farmhand_cli: Farmhand, *args: str, definitions: str = "") -> str:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "FARMHAND_MCP_SERVERS": definitions}
    run = farmhand_cli("run", *args, cwd=tmp_path, timeout=60, input="/exit\n", env=env)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("error: ") and run.stderr.count("\n") == 1, run.stderr
    return run.stderr


def test_a_tools_path_that_does_not_exist(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    assert "--tools missing: no such file or folder" in run_in(
        tmp_path, farmhand_cli, "--tools", "missing"
    )


def test_a_broken_definitions_variable(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    message = run_in(
        tmp_path, farmhand_cli, "--tools", ".", definitions='[{"name": "git", "args": []}]'
    )
    assert "$FARMHAND_MCP_SERVERS: servers[0] ('git'): a stdio server needs `command`" in message
