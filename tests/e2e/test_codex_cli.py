"""Codex CLI (npm @openai/codex, which speaks only the Responses API) as a real client of a
live farmhand server with a scripted model: the model calls Codex's own shell tool
(`exec_command`), Codex runs the command and sends its output back as a
function_call_output, and the model's answer is what `codex exec` prints. For models
whose `apply_patch` is a custom (freeform) tool, the model's call comes back to Codex as a
custom_tool_call, Codex applies the patch and answers with a custom_tool_call_output.

Offline: a custom provider in an isolated CODEX_HOME (Codex ignores OPENAI_BASE_URL), no
retries, plugins and analytics off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import ModelConfig
from farmhand.messages import Message, ToolCall
from farmhand.providers.base import Provider
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]
CODEX = next((p for p in [ROOT / "node_modules/.bin/codex"] if p.exists()), None) or shutil.which(
    "codex"
)
COMMAND = "echo farmhand-$((6*7))"
ANSWER = "The command printed farmhand-42."
CONFIG = """model = "{model}"
model_provider = "farmhand"

[model_providers.farmhand]
name = "farmhand"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "FARMHAND_TEST_KEY"
request_max_retries = 0
stream_max_retries = 0
"""


@pytest.mark.skipif(CODEX is None, reason="Codex CLI is not installed (npm @openai/codex)")
def test_codex_runs_its_shell_tool_and_sends_the_output_back(tmp_path: Path) -> None:
    offered: list[list[str]] = []

    def sees_the_shell_tool(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        offered.append([t.name for t in tools])

    def sees_the_output(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        result = messages[-1]
        assert result.role == "tool" and result.tool_call_id == "call_codex_1"
        assert "farmhand-42" in result.content, result.content

    script = ScriptedProvider(
        [
            Step.calls(
                ToolCall("exec_command", {"cmd": COMMAND}, "call_codex_1"),
                expect=sees_the_shell_tool,
            ),
            Step.text(ANSWER, expect=sees_the_output),
        ]
    )

    def factory(_: ModelConfig) -> Provider:
        return script

    app = create_app(scripted_config(), home=tmp_path / "farm", provider_factory=factory)
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    with LiveServer(app) as server:
        (codex_home / "config.toml").write_text(CONFIG.format(url=server.url, model="farm"))
        run = _codex(home, work, "Run the command and tell me what it printed.")
    assert run.returncode == 0, run.stderr[-3000:]
    assert ANSWER in run.stdout, run.stdout[-3000:]
    script.assert_done()
    assert "exec_command" in offered[0]
    history = script.requests[1].messages
    call = next(m for m in history if m.tool_calls).tool_calls[0]
    assert (call.name, call.arguments) == ("exec_command", {"cmd": COMMAND})


@pytest.mark.skipif(CODEX is None, reason="Codex CLI is not installed (npm @openai/codex)")
def test_codex_tools_for_newer_models_arrive_as_an_input_item_and_are_read(tmp_path: Path) -> None:
    """For GPT-6 model names Codex sends no `tools`: an `additional_tools` input item holds
    namespaces of functions and a custom (grammar) tool. All are offered (the custom tool
    as a function of one `input` string), and the answer comes back."""

    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        by_name = {t.name: t for t in tools}
        assert {"wait", "sleep", "spawn_agent", "exec"} <= set(by_name)
        assert by_name["exec"].parameters["required"] == ["input"]

    script = ScriptedProvider([Step.text("Hello from the farm.", expect=offered)])

    def factory(_: ModelConfig) -> Provider:
        return script

    config = scripted_config(models=("gpt-6.1-sol",))
    app = create_app(config, home=tmp_path / "farm", provider_factory=factory)
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    with LiveServer(app) as server:
        toml = CONFIG.format(url=server.url, model="gpt-6.1-sol")
        (home / ".codex" / "config.toml").write_text(toml)
        run = _codex(home, work, "Say hello.")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Hello from the farm." in run.stdout
    script.assert_done()


@pytest.mark.skipif(CODEX is None, reason="Codex CLI is not installed (npm @openai/codex)")
def test_codex_applies_a_patch_the_model_writes_to_its_custom_apply_patch_tool(
    tmp_path: Path,
) -> None:
    patch = "*** Begin Patch\n*** Add File: hay.txt\n+dry hay, 42 bales\n*** End Patch\n"

    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        apply_patch = next(t for t in tools if t.name == "apply_patch")
        assert apply_patch.parameters["required"] == ["input"]
        assert "grammar" in apply_patch.description

    def sees_the_result(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        result = messages[-1]
        assert result.role == "tool" and result.tool_call_id == "call_patch_1"
        assert result.name == "apply_patch" and "hay.txt" in result.content, result.content

    script = ScriptedProvider(
        [
            Step.calls(ToolCall("apply_patch", {"input": patch}, "call_patch_1"), expect=offered),
            Step.text("hay.txt is written.", expect=sees_the_result),
        ]
    )

    def factory(_: ModelConfig) -> Provider:
        return script

    app = create_app(
        scripted_config(models=("gpt-5.5",)), home=tmp_path / "farm", provider_factory=factory
    )
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    with LiveServer(app) as server:
        (home / ".codex" / "config.toml").write_text(CONFIG.format(url=server.url, model="gpt-5.5"))
        run = _codex(home, work, "Write hay.txt.")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "hay.txt is written." in run.stdout, run.stdout[-3000:]
    script.assert_done()
    assert (work / "hay.txt").read_text() == "dry hay, 42 bales\n"
    history = script.requests[1].messages
    call = next(m for m in history if m.tool_calls).tool_calls[0]
    assert (call.name, call.arguments) == ("apply_patch", {"input": patch})


def _codex(home: Path, work: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    env: dict[str, Any] = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "FARMHAND_TEST_KEY": "unused",
    }
    return subprocess.run(
        [
            str(CODEX),
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--disable",
            "plugins",
            "--disable",
            "remote_plugin",
            "-c",
            "analytics.enabled=false",
            prompt,
        ],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
