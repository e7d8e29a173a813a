"""The main job, for real: the embedded model uses the filesystem server on a folder."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]

LISTING_TOOLS = {
    "filesystem:list_directory",
    "filesystem:list_directory_with_sizes",
    "filesystem:directory_tree",
    "filesystem:search_files",
}
FILES = ["invoice-march.pdf", "garden-plan.txt", "recipes.md"]
# Two rounds are enough to list a folder; the bound keeps a wandering small model from
# spending minutes of CI on rounds that cannot change the outcome under test.
CONFIG = "runtime:\n  max_tool_rounds: 2\n"
QUESTION = "List the files in the papers folder."
REPEATABLE = ("--temperature", "0", "--seed", "7")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working directory with a `papers` folder of known files and a config."""
    folder = tmp_path / "papers"
    folder.mkdir()
    for name in FILES:
        (folder / name).write_text(f"contents of {name}\n")
    (tmp_path / "farmhand.yaml").write_text(CONFIG)
    return tmp_path


def test_chat_lists_a_folder_and_answers_with_its_files(
    project: Path, farmhand_cli: Farmhand
) -> None:
    run = farmhand_cli("chat", "--tools", "papers", "--json", *REPEATABLE, QUESTION, cwd=project)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)

    called = [c["name"] for c in report["tool_calls"]]
    assert LISTING_TOOLS & set(called), f"no listing tool was called: {called}"
    listing = next(c for c in report["tool_calls"] if c["name"] in LISTING_TOOLS)
    assert isinstance(listing["arguments"], dict)
    assert not listing["is_error"], listing["result"]
    assert all(name in listing["result"] for name in FILES)

    assert any(name in report["answer"] for name in FILES), report["answer"]
    assert report["usage"]["prompt_tokens"] > 0
    assert report["usage"]["completion_tokens"] > 0
    assert report["stop_reason"] in ("stop", "round_limit")


def test_chat_streams_tool_calls_and_the_answer_to_the_terminal(
    project: Path, farmhand_cli: Farmhand
) -> None:
    run = farmhand_cli("chat", "--tools", "papers", *REPEATABLE, QUESTION, cwd=project)
    assert run.returncode == 0, run.stderr
    assert "→ filesystem:list" in run.stdout  # the call, shown as it happens
    assert "← " in run.stdout  # and its result
    assert any(name in run.stdout for name in FILES)
    assert "Traceback" not in run.stderr
