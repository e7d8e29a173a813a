"""A chat template override on the real embedded model (`farmhand chat --chat-template-file`,
and `chat_template:` in the config), short answers.

The default model (Qwen2.5-Coder 1.5B) calls tools with its own template already, so what
these show is the override's effect the other way round: given a plain ChatML template that
renders no tools, the model would never see them. With nothing else said, farmhand detects
that the template renders no tools and uses the generic format (tools described in the
system prompt, a JSON object read back), and the model's reply is a call. The same template
with `tool_parser: hermes` in the config (the operator's choice of format, which switches
the generic format off) leaves the tools unseen, and the same question gets a plain reply.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_chat_tools_file import TOOLS  # get_weather, add_numbers

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]
REPEATABLE = ("--temperature", "0", "--seed", "7", "--max-tokens", "96")
QUESTION = "Is it raining in Paris right now?"
# Qwen's own turns (ChatML), without its tools block or call format.
PLAIN_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n"
    "{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "plain.jinja").write_text(PLAIN_CHATML)
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    return tmp_path


def _chat(farmhand_cli: Farmhand, folder: Path, *args: str) -> tuple[dict[str, Any], str]:
    run = farmhand_cli(
        "chat", "--tools-file", "tools.json", "--json", *REPEATABLE, *args, cwd=folder
    )
    assert run.returncode == 0, run.stderr
    report: dict[str, Any] = json.loads(run.stdout)
    return report, run.stderr


def test_a_template_without_tools_gets_the_generic_format(
    folder: Path, farmhand_cli: Farmhand
) -> None:
    report, log = _chat(
        farmhand_cli,
        folder,
        "--chat-template-file",
        "plain.jinja",
        "--log-level",
        "info",
        QUESTION,
    )
    assert "generic format is in use" in log
    assert report["stop_reason"] == "client_tool_calls", report
    [call] = report["pending_calls"]
    assert call["name"] == "get_weather"
    assert "paris" in str(call["arguments"].get("city", "")).lower()


def test_the_same_template_with_another_format_leaves_the_tools_unseen(
    folder: Path, farmhand_cli: Farmhand
) -> None:
    (folder / "farmhand.yaml").write_text(
        "runtime:\n  models:\n"
        "    - {name: local, chat_template: plain.jinja, tool_parser: hermes}\n"
    )
    report, log = _chat(farmhand_cli, folder, "--log-level", "info", QUESTION)
    assert "generic format" not in log
    assert report["pending_calls"] == [] and report["tool_calls"] == []
    assert isinstance(report["answer"], str) and report["answer"].strip()


def test_a_required_call_is_held_to_the_generic_json(folder: Path, farmhand_cli: Farmhand) -> None:
    report, _ = _chat(
        farmhand_cli,
        folder,
        "--chat-template-file",
        "plain.jinja",
        "--tool-choice",
        "required",
        "What is 2 plus 40?",
    )
    # Sampled under the grammar of the generic JSON (a call of an offered tool, its schema).
    [call] = report["pending_calls"]
    assert (call["name"], call["arguments"]) == ("add_numbers", {"a": 2, "b": 40})
