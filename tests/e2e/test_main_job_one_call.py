"""Issue 16, item 4: the main job makes one listing call and answers (it once made six).

`make chat`'s question on a copy of examples/, at the CLI's own defaults and at a fixed seed
and temperature 0: exactly one tool call, one round, and an answer naming every file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUESTION = "List the files in the examples folder."


@pytest.mark.parametrize("sampling", [(), ("--temperature", "0", "--seed", "0")])
def test_one_listing_call_then_the_answer(
    tmp_path: Path, farmhand_cli: Farmhand, sampling: tuple[str, ...]
) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    run = farmhand_cli(
        "chat", "--tools", "examples", "--json", *sampling, QUESTION,
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    calls = [c["name"] for c in report["tool_calls"]]
    assert len(calls) == 1, calls
    assert calls[0].endswith(("list_directory", "list_directory_with_sizes", "directory_tree"))
    assert report["rounds"] == 1
    for name in sorted(p.name for p in EXAMPLES.iterdir()):
        assert name in report["answer"], report["answer"]
