"""`farmhand mcp serve`: the real command over stdio, driven by the real MCP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_mcp_serve_over_stdio(tmp_path: Path, mode: str, version: str) -> None:
    """Both protocol revisions: 2026-07-28 where the client speaks it, else the handshake."""
    config = tmp_path / "farmhand.yaml"
    config.write_text("version: v1\nname: cli\n")
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "farmhand", "mcp", "serve", "--config", str(config)],
        env={**os.environ, "FARMHAND_HOME": str(tmp_path / "home")},
        cwd=str(tmp_path),
    )
    async with Client(server, read_timeout_seconds=60, mode=mode) as client:  # type: ignore[arg-type]
        assert client.protocol_version == version
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"list_projects", "create_project", "chat_completions", "list_models"} <= names
        created = await client.call_tool("create_project", {"name": "piped"})
        assert not created.is_error, created.content
        models = await client.call_tool("list_models", {})
        data = json.loads(models.content[0].text)["data"]  # type: ignore[union-attr]
        assert [m["id"] for m in data] == ["default"]
    assert (tmp_path / "home" / "projects" / "default" / "piped" / "farmhand.yaml").is_file()


def test_mcp_serve_reports_a_bad_config_in_one_line(
    farmhand_cli: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    (tmp_path / "farmhand.yaml").write_text("runtime:\n  modles: []\n")
    done = farmhand_cli("mcp", "serve", cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert "farmhand.yaml:2: runtime.modles: unknown key" in done.stderr
    assert "Traceback" not in done.stderr
