"""Real stdio MCP servers as subprocesses: the npm filesystem server and a Python one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.known_servers import filesystem_server

pytestmark = pytest.mark.anyio

PANTRY = str(Path(__file__).parent / "servers" / "pantry_server.py")


def pantry(*extra: str, **env: str) -> McpServerConfig:
    return McpServerConfig(name="pantry", command=sys.executable, args=[PANTRY, *extra], env=env)


async def test_filesystem_server_lists_a_folder(tmp_path: Path) -> None:
    (tmp_path / "alpha.txt").write_text("a")
    (tmp_path / "beta.md").write_text("b")
    async with MCPToolset.from_config(filesystem_server(tmp_path)) as toolset:
        names = {t.name for t in await toolset.list_tools()}
        assert {"list_directory", "read_text_file"} <= names
        listing = await toolset.call_tool("list_directory", {"path": str(tmp_path)})
    assert not listing.is_error
    assert "[FILE] alpha.txt" in listing.text and "[FILE] beta.md" in listing.text


async def test_filesystem_server_refuses_paths_outside_its_folder(tmp_path: Path) -> None:
    async with MCPToolset.from_config(filesystem_server(tmp_path)) as toolset:
        outside = await toolset.call_tool("list_directory", {"path": "/etc"})
    assert outside.is_error
    assert "outside allowed directories" in outside.text.lower() or "denied" in outside.text.lower()


async def test_python_server_round_trip_and_env() -> None:
    async with MCPToolset.from_config(pantry(PANTRY_TOKEN="s3cret")) as toolset:
        assert (await toolset.call_tool("echo", {"text": "héllo"})).text == "héllo"
        assert (await toolset.call_tool("env", {"name": "PANTRY_TOKEN"})).text == "s3cret"


async def test_the_server_process_is_reaped_on_exit() -> None:
    async with MCPToolset.from_config(pantry()) as toolset:
        pid = int((await toolset.call_tool("pid", {})).text)
        os.kill(pid, 0)  # alive while connected
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone, and not left as a zombie


async def test_a_server_that_dies_on_start_names_its_command_and_stderr() -> None:
    with pytest.raises(ToolServerError) as caught:
        async with MCPToolset.from_config(pantry("--crash-on-start")):
            pass
    message = str(caught.value)
    assert "MCP server 'pantry'" in message
    assert "pantry_server.py --crash-on-start" in message
    assert "failed to start" in message
    assert "cannot open pantry.db: permission denied" in message


def test_a_missing_command_is_a_clear_error() -> None:
    config = McpServerConfig(name="ghost", command="no-such-mcp-server-xyz")
    with pytest.raises(ToolServerError, match="not found on PATH: 'no-such-mcp-server-xyz'"):
        MCPToolset.from_config(config)


def test_tools_dir_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ToolServerError, match="not a directory"):
        filesystem_server(tmp_path / "missing")
