"""`farmhand run` for real: the embedded model, the filesystem server, lines piped to stdin."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]

FILES = ["invoice-march.pdf", "garden-plan.txt", "recipes.md"]
# Two rounds list a folder; the bound keeps a wandering small model from spending CI minutes.
CONFIG = "runtime:\n  max_tool_rounds: 2\n"
SHORT = ("--temperature", "0", "--seed", "7", "--max-tokens", "80")
TOOLS_MARKER = "filesystem:list_allowed_directories"  # a line of the /tools listing


def test_run_keeps_history_across_lines_and_answers_slash_commands(
    tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    for name in FILES:
        (folder / name).write_text(f"contents of {name}\n")
    (tmp_path / "farmhand.yaml").write_text(CONFIG)
    lines = [
        "List the files in the papers folder.",
        "/tools",
        "Repeat the list of files you just gave me.",
        "/exit",
        "this line is never read",
    ]
    run = farmhand_cli(
        "run",
        "--tools",
        "papers",
        *SHORT,
        cwd=tmp_path,
        input="\n".join(lines) + "\n",
        env={"XDG_CONFIG_HOME": str(tmp_path / "config"), "FARMHAND_MCP_SERVERS": ""},
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr

    first, _, rest = run.stdout.partition("filesystem:read_text_file")
    assert "→ filesystem:list" in first  # the first question used a tool
    assert any(name in first for name in FILES)
    assert TOOLS_MARKER in rest  # /tools listed the tools between the questions
    assert "write_file" not in rest  # read-only, as --tools promises

    second = rest.split(TOOLS_MARKER, 1)[1]
    # Answered from the history: the file names come back without listing the folder again.
    assert "→ " not in second, second
    assert any(name in second for name in FILES), second
    assert "never read" not in run.stdout


def test_run_with_jit_discovers_a_listing_tool_and_answers(
    tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    for name in FILES:
        (folder / name).write_text(f"contents of {name}\n")
    (tmp_path / "farmhand.yaml").write_text("runtime:\n  max_tool_rounds: 3\n")
    run = farmhand_cli(
        "run",
        "--tools",
        "papers",
        "--jit",
        "--temperature",
        "0",
        "--seed",
        "7",
        cwd=tmp_path,
        input="List the files in the papers folder.\n/exit\n",
        env={"XDG_CONFIG_HOME": str(tmp_path / "config"), "FARMHAND_MCP_SERVERS": ""},
    )
    assert run.returncode == 0, run.stderr
    _, _, after = run.stdout.partition("→ mcp_discover")
    assert after, run.stdout  # the model's first move is a discovery
    assert "→ filesystem:" in after  # then it calls a tool the discovery injected
    assert any(name in after for name in FILES), after
