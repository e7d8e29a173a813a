"""`--log-level debug` shows the MCP lifecycle LlamaFarm's "Debugging MCP" shows: the
servers of a chat, each started, its tools loaded (count and names), the tools offered,
and every call with its outcome and duration, for a chat on the service as `farmhand chat`
runs it. Real filesystem server, scripted model."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from tests.support.live import scripted_config
from typer.testing import CliRunner

from farmhand.cli.main import app
from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.chat import ChatRequest, complete_chat
from farmhand.service.loaded_models import unbounded_models
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.known_servers import filesystem_server


@pytest.mark.anyio
async def test_debug_log_tells_the_mcp_lifecycle(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("filesystem:list_directory", {"path": str(tmp_path)})),
            Step.calls(ToolCall("filesystem:read_text_file", {"path": "/nowhere/x"})),
            Step.text("one file"),
        ]
    )
    request = ChatRequest(
        model="farm",
        messages=[Message.user("what is here?")],
        own_servers=[filesystem_server(tmp_path)],
        jit_tools=False,
    )
    caplog.set_level(logging.DEBUG, logger="farmhand")
    async with ServiceState.open(
        scripted_config(),
        tmp_path,
        provider_factory=lambda _: provider,
        models=unbounded_models(),
    ) as state:
        await complete_chat(state, request)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("farmhand")]
    text = "\n".join(lines)
    assert "MCP servers for this chat: 1 ['filesystem']" in lines
    assert re.search(r"^MCP server filesystem started \(protocol [\d-]+\)$", text, re.M)
    loaded = re.search(
        r"^MCP server filesystem: (\d+) tools loaded \(fresh for (\d+) s\): \[(.*)\]$", text, re.M
    )
    assert loaded and int(loaded.group(1)) >= 10 and "'list_directory'" in loaded.group(3)
    assert int(loaded.group(2)) == 300  # a handshake-era server: the default 5 minutes
    assert re.search(
        r"^tools offered to the model: \d+ \[.*'filesystem:list_directory'", text, re.M
    )
    assert re.search(
        r"^tool call filesystem:list_directory: ok in \d+ ms, \d+ characters$", text, re.M
    )
    assert re.search(r"^tool call filesystem:read_text_file: error in \d+ ms", text, re.M)


def test_a_bad_log_level_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["chat", "hi", "--log-level", "loud"])
    assert result.exit_code == 1
    assert result.stderr == (
        "error: --log-level 'loud' is not a level; use one of trace, debug, info, warning,"
        " error, critical\n"
    )
