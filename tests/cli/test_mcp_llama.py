"""`farmhand mcp llama` and `farmhand mcp serve` with `llama_server:`, as real stdio
processes driven by the real MCP client; FakeLlamaServer on a real uvicorn stands in for
llama-server (the real one is in tests/e2e/test_llama_server_real.py)."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from tests.support.fake_llama_server import FakeLlamaServer
from tests.support.live import LiveServer
from tests.support.tool_calls import ToolCalls

pytestmark = pytest.mark.anyio


@pytest.fixture
def llama_url() -> Iterator[str]:
    with LiveServer(FakeLlamaServer().app) as server:
        yield server.url


def farmhand_over_stdio(args: list[str], home: Path, stderr: Path) -> StdioServerParameters:
    """`python -m farmhand ARGS` with its stderr kept in a file, as a client would log it."""
    command = shlex.join([sys.executable, "-m", "farmhand", *args])
    return StdioServerParameters(
        command="/bin/sh",
        args=["-c", f"exec {command} 2>{shlex.quote(str(stderr))}"],
        env={**os.environ, "FARMHAND_HOME": str(home)},
        cwd=str(home),
    )


async def test_mcp_llama_logs_no_line_per_request(llama_url: str, tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.txt"
    server = farmhand_over_stdio(["mcp", "llama", "--url", llama_url], tmp_path, stderr)
    async with Client(server, read_timeout_seconds=60) as client:
        calls = ToolCalls(client)
        for _ in range(3):
            assert (await calls.ok("llama_health"))["status"] == "ok"
    # The client's log is the server's stderr: the SDK would put an INFO line per
    # llama-server request there (httpx's "HTTP Request: GET ..."), rendered by rich.
    assert "HTTP Request" not in stderr.read_text()


async def test_mcp_serve_offers_the_llama_tools_when_configured(
    llama_url: str, tmp_path: Path
) -> None:
    config = tmp_path / "farmhand.yaml"
    config.write_text(f"llama_server:\n  url: {llama_url}\n")
    server = farmhand_over_stdio(["mcp", "serve", "-c", str(config)], tmp_path, tmp_path / "err")
    async with Client(server, read_timeout_seconds=60) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"list_projects", "llama_tokenize", "llama_start"} <= names
        tokens = await ToolCalls(client).ok("llama_tokenize", content="Hello")
    assert tokens == {"tokens": [9707, 999], "count": 2}
