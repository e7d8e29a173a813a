"""A user of the Ollama MCP fork moves over unchanged: OLLAMA_MCP_SERVERS and
OLLAMA_MCP_TIMEOUT (ms) are read when farmhand's own FARMHAND_MCP_SERVERS and
FARMHAND_MCP_TIMEOUT are unset; the config file's own tool_timeout wins over both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from farmhand.config import load_config
from farmhand.errors import ConfigError
from farmhand.toolsets.mcp.definitions import load_definitions

NOTES = {"name": "notes", "command": "mcp-notes", "description": "Team notes"}


def test_the_tool_timeout_comes_from_either_variable_in_milliseconds(tmp_path: Path) -> None:
    assert load_config(None, environ={}).runtime.tool_timeout == 30.0
    assert load_config(None, environ={"OLLAMA_MCP_TIMEOUT": "45000"}).runtime.tool_timeout == 45
    both = {"OLLAMA_MCP_TIMEOUT": "45000", "FARMHAND_MCP_TIMEOUT": "1500"}
    assert load_config(None, environ=both).runtime.tool_timeout == 1.5
    file = tmp_path / "farmhand.yaml"
    file.write_text("runtime:\n  max_tool_rounds: 3\n")
    assert load_config(file, environ=both).runtime.tool_timeout == 1.5
    file.write_text("runtime:\n  tool_timeout: 12\n")
    assert load_config(file, environ=both).runtime.tool_timeout == 12


@pytest.mark.parametrize("value", ["30s", "-5", "0", "1.5"])
def test_a_timeout_that_is_not_milliseconds_says_so(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, environ={"OLLAMA_MCP_TIMEOUT": value})
    assert str(info.value) == (
        f"OLLAMA_MCP_TIMEOUT={value!r}: give the tool call timeout as a whole number of"
        " milliseconds, e.g. 30000"
    )


def test_server_definitions_come_from_ollama_mcp_servers_too(tmp_path: Path) -> None:
    ollama = {"OLLAMA_MCP_SERVERS": json.dumps({"servers": [NOTES]})}
    names = [d.name for d in load_definitions(ollama, tmp_path / "none.json")]
    assert names == ["filesystem", "git", "notes"]
    ours = {**ollama, "FARMHAND_MCP_SERVERS": json.dumps([{**NOTES, "name": "ours"}])}
    names = [d.name for d in load_definitions(ours, tmp_path / "none.json")]
    assert names == ["filesystem", "git", "ours"]
    with pytest.raises(ConfigError, match=r"^\$OLLAMA_MCP_SERVERS: not valid JSON"):
        load_definitions({"OLLAMA_MCP_SERVERS": "{oops"}, tmp_path / "none.json")
