"""`farmhand chat --tools-file F --tool-choice ...`: calls to tools the user defined are
shown, not run; the embedded model is forced to call when asked to."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]
REPEATABLE = ("--temperature", "0", "--seed", "7", "--max-tokens", "96")

# Anthropic's format, to show any supported format loads.
TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
    {
        "name": "add_numbers",
        "description": "Add two integers.",
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
]


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return path


def test_a_named_tool_choice_yields_that_call_handed_back(
    tools_file: Path, tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    run = farmhand_cli(
        "chat",
        "--tools-file",
        str(tools_file),
        "--tool-choice",
        "get_weather",
        "--json",
        *REPEATABLE,
        "Is it raining in Paris right now?",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["stop_reason"] == "client_tool_calls"
    [call] = report["pending_calls"]
    assert call["name"] == "get_weather"
    assert isinstance(call["arguments"].get("city"), str) and call["arguments"]["city"]
    assert report["tool_calls"] == []  # nothing was run


def test_calls_are_shown_as_not_run_in_the_terminal(
    tools_file: Path, tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    run = farmhand_cli(
        "chat",
        "--tools-file",
        str(tools_file),
        "--tool-choice",
        "required",
        *REPEATABLE,
        "What is 2 plus 40?",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "not run" in run.stdout
    assert "add_numbers" in run.stdout or "get_weather" in run.stdout


def test_bad_tool_choice_and_bad_tools_file_are_one_line_errors(
    tools_file: Path, tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    run = farmhand_cli(
        "chat", "--tools-file", str(tools_file), "--tool-choice", "get_time", "hi", cwd=tmp_path
    )
    assert run.returncode == 1
    assert "get_time" in run.stderr and "get_weather" in run.stderr
    assert "Traceback" not in run.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('[{"nme": "x"}]')
    run = farmhand_cli("chat", "--tools-file", str(broken), "hi", cwd=tmp_path)
    assert run.returncode == 1
    assert "broken.json" in run.stderr and "Traceback" not in run.stderr
