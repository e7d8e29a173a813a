"""`farmhand eval` end to end with the real embedded model on a handful of built-in cases.

No accuracy is asserted (that is what the command measures, and it lives in bench/ and the
eval output): the run must finish, every case must be scored from a real turn, and the JSON
report must carry real tokens and times.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]


def test_builtin_cases_with_the_embedded_model(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    run = farmhand_cli(
        "eval",
        "--json",
        "--category", "single", "--category", "no_call", "--category", "follow_up",
        "--limit", "1",
        "-t", "default,prefix_cache=false,label=native",
        "-t", "default,prefix_cache=false,strategy=prompt_based+constrained,label=prompt",
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert [t["target"] for t in report["targets"]] == ["native", "prompt"]
    for target in report["targets"]:
        assert set(target["categories"]) == {"single", "no_call", "follow_up"}
        assert len(target["items"]) == 3
        for item in target["items"]:
            assert item["prompt_tokens"] > 20
            assert item["seconds"] > 0
            assert item["reason"] in {
                "ok", "no_call", "wrong_count", "wrong_calls", "unexpected_call",
                "missing_answer",
            }  # fmt: skip
            assert item["calls"] or item["answer"]
        share = target["schema_valid"]["share"]
        assert share is None or 0 <= share <= 1
