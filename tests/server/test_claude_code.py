"""Claude Code (npm @anthropic-ai/claude-code) as a real client of the Messages dialect:
driven headless against a live farmhand whose scripted model calls Claude Code's own `Bash`
tool once and then answers. Claude Code must run the command and send its output back.

What this Claude Code version sends (2.1.x): `POST /v1/messages?beta=true`, always streamed,
with `x-api-key`, `anthropic-version` and a list of `anthropic-beta` flags; `system` as text
blocks; a `role: "system"` entry inside `messages` (the environment); its tools with
`input_schema`; `thinking: {"type": "adaptive"}`, `context_management`, `output_config` and
`metadata`, which farmhand accepts and does not use.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.messages import Message as ChatMessage
from farmhand.messages import ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.e2e

CLAUDE = Path(__file__).parents[2] / "node_modules" / ".bin" / "claude"
KEY = "claude-code-key"


class Recorder:
    """Keeps each request's path, query, headers and body, and passes it on unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while not messages or messages[-1].get("more_body"):
            messages.append(await receive())
        body = b"".join(m.get("body", b"") for m in messages)
        self.requests.append(
            {
                "path": scope["path"],
                "query": scope["query_string"].decode(),
                "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
                "body": json.loads(body) if body else None,
            }
        )
        replay = iter(messages)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)


def sees_command_output(messages: Sequence[ChatMessage], _: Sequence[ToolDefinition]) -> None:
    result = messages[-1]
    assert (result.role, result.tool_call_id, result.name) == ("tool", "toolu_bash", "Bash")
    assert result.content.strip() == "farm-42"


def offers_bash(_: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> None:
    assert "Bash" in [t.name for t in tools]


@pytest.mark.skipif(not CLAUDE.exists() or not shutil.which("node"), reason="needs npm claude")
def test_claude_code_runs_the_bash_call_and_sends_the_output_back(tmp_path: Path) -> None:
    command = "echo farm-$((6*7))"  # the shell computes 42: the output proves it ran
    script = ScriptedProvider(
        [
            Step.calls(
                ToolCall("Bash", {"command": command, "description": "Print"}, "toolu_bash"),
                expect=offers_bash,
            ),
            Step.text("The command printed farm-42.", expect=sees_command_output),
        ]
    )
    app = create_app(
        scripted_config(), home=tmp_path / "farm", provider_factory=lambda _: script, api_keys=[KEY]
    )
    recorder = Recorder(app)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_MODEL": "farm",
        "ANTHROPIC_SMALL_FAST_MODEL": "farm",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    with LiveServer(recorder) as server:
        done = subprocess.run(
            [
                str(CLAUDE),
                "-p",
                "Run the echo",
                "--output-format",
                "json",
                "--allowedTools",
                "Bash",
            ],
            env={**env, "ANTHROPIC_BASE_URL": server.url},
            cwd=home,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["is_error"] is False
    assert outcome["result"] == "The command printed farm-42."
    script.assert_done()

    chats = [r for r in recorder.requests if r["path"] == "/v1/messages"]
    assert len(chats) == 2
    assert all(r["query"] == "beta=true" and r["body"]["stream"] is True for r in chats)
    assert all(r["headers"]["x-api-key"] == KEY for r in chats)
    assert any(m["role"] == "system" for m in chats[0]["body"]["messages"])
    answer = chats[1]["body"]["messages"][-1]["content"]
    results = [b for b in answer if b["type"] == "tool_result"]
    assert [(r["tool_use_id"], str(r["content"]).strip()) for r in results] == [
        ("toolu_bash", "farm-42")
    ]
