"""`farmhand chat` fails with one line and a non-zero exit, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

Farmhand = Callable[..., subprocess.CompletedProcess[str]]
PANTRY = Path(__file__).parents[1] / "toolsets" / "mcp" / "servers" / "pantry_server.py"


def assert_one_line_failure(run: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.lstrip().startswith("error: ")
    for needle in needles:
        assert needle in run.stderr, run.stderr


def test_bad_config_names_file_line_and_key(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    (tmp_path / "farmhand.yaml").write_text("runtime:\n  max_tool_rounds: lots\n")
    run = farmhand_cli("chat", "hi", cwd=tmp_path)
    assert_one_line_failure(run, "farmhand.yaml:2", "runtime.max_tool_rounds")


def test_explicit_config_that_does_not_exist(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    run = farmhand_cli("chat", "hi", "--config", "nope.yaml", cwd=tmp_path)
    assert_one_line_failure(run, "nope.yaml")


def test_tools_folder_that_does_not_exist(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    run = farmhand_cli("chat", "hi", "--tools", "missing", cwd=tmp_path)
    assert_one_line_failure(run, "missing", "not a directory")


def test_model_path_that_does_not_exist(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    run = farmhand_cli("chat", "hi", "--model-path", "absent.gguf", cwd=tmp_path)
    assert_one_line_failure(run, "absent.gguf")


def test_unknown_model_name_lists_the_known_ones(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    run = farmhand_cli("chat", "hi", "--model", "gpt-17", cwd=tmp_path)
    assert_one_line_failure(run, "gpt-17")


def test_mcp_server_that_fails_to_start_names_command_and_stderr(
    tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    (tmp_path / "farmhand.yaml").write_text(
        "mcp:\n  servers:\n    - name: pantry\n"
        f"      command: {sys.executable}\n"
        f"      args: ['{PANTRY}', '--crash-on-start']\n"
    )
    run = farmhand_cli("chat", "hi", cwd=tmp_path)
    assert_one_line_failure(run, "MCP server 'pantry'", "--crash-on-start", "cannot open pantry.db")
