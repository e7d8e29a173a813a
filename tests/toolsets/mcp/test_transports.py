"""Every transport against real servers: server-everything over stdio, streamable HTTP and
SSE (2025-11-25 handshake), our own SDK 2.x server over stateless HTTP (2026-07-28), and the
PyPI servers mcp-server-time and mcp-server-git over stdio."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.real_servers import FAULTS, everything_bin, free_port, listening

from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.client import MCPToolset

pytestmark = pytest.mark.anyio


async def check_everything(toolset: MCPToolset) -> None:
    names = {t.name for t in await toolset.list_tools()}
    assert {"echo", "get-sum"} <= names
    assert (await toolset.call_tool("echo", {"message": "héllo"})).text == "Echo: héllo"
    total = await toolset.call_tool("get-sum", {"a": 2, "b": 40})
    assert not total.is_error and "42" in total.text
    assert toolset.connection.protocol_version == "2025-11-25"


def listens_on_loopback_only(port: int) -> bool:
    """Every listening socket on `port` is bound to 127.0.0.1 (from /proc/net/tcp*)."""
    hex_port = f"{port:04X}"
    binds = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and local.endswith(f":{hex_port}"):
                binds.append(local.split(":")[0])
    return bool(binds) and all(b == "0100007F" for b in binds)


async def test_everything_over_stdio() -> None:
    server = McpServerConfig(name="everything", command=everything_bin(), args=["stdio"])
    async with MCPToolset.from_config(server) as toolset:
        await check_everything(toolset)


async def test_everything_over_streamable_http(everything_http: str) -> None:
    port = int(everything_http.rsplit(":", 1)[1].split("/")[0])
    assert listens_on_loopback_only(port)
    server = McpServerConfig(
        name="everything", transport="http", base_url=everything_http, headers={"X-Test": "1"}
    )
    async with MCPToolset.from_config(server) as toolset:
        await check_everything(toolset)


async def test_everything_over_sse(everything_sse: str) -> None:
    server = McpServerConfig(name="everything", transport="sse", base_url=everything_sse)
    async with MCPToolset.from_config(server) as toolset:
        await check_everything(toolset)


@pytest.fixture(scope="module")
def stateless_http() -> Iterator[str]:
    port = free_port()
    with listening([sys.executable, FAULTS, "--http", str(port)], port) as url:
        yield f"{url}/mcp"


async def test_sdk2_stateless_server_over_http(stateless_http: str) -> None:
    server = McpServerConfig(name="faults", transport="http", base_url=stateless_http)
    async with MCPToolset.from_config(server) as toolset:
        assert "echo" in {t.name for t in await toolset.list_tools()}
        assert (await toolset.call_tool("echo", {"text": "stateless"})).text == "stateless"
        assert toolset.connection.protocol_version == "2026-07-28"


async def test_an_unreachable_url_is_a_clear_error() -> None:
    from farmhand.errors import ToolServerError

    url = f"http://127.0.0.1:{free_port()}/mcp"
    server = McpServerConfig(name="nowhere", transport="http", base_url=url)
    with pytest.raises(ToolServerError, match=rf"MCP server 'nowhere' \(HTTP {url}\) failed"):
        async with MCPToolset.from_config(server):
            pass


async def test_mcp_server_time() -> None:
    command = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
    assert command, "pip install mcp-server-time (it is in the dev extra)"
    server = McpServerConfig(name="time", command=command, args=["--local-timezone", "UTC"])
    async with MCPToolset.from_config(server) as toolset:
        assert "get_current_time" in {t.name for t in await toolset.list_tools()}
        now = await toolset.call_tool("get_current_time", {"timezone": "Europe/Paris"})
    assert not now.is_error and "Europe/Paris" in now.text


async def test_mcp_server_git(tmp_path: Path) -> None:
    command = shutil.which("mcp-server-git", path=str(Path(sys.executable).parent))
    assert command, "pip install mcp-server-git (it is in the dev extra)"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "notes.txt").write_text("hi")
    server = McpServerConfig(name="git", command=command, args=["--repository", str(tmp_path)])
    async with MCPToolset.from_config(server) as toolset:
        assert "git_status" in {t.name for t in await toolset.list_tools()}
        status = await toolset.call_tool("git_status", {"repo_path": str(tmp_path)})
    assert not status.is_error and "notes.txt" in status.text
