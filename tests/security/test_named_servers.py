"""Issue 25, finding 3: an operator's server that a request names is a request server.

`{"tools_path": <allowed dir>, "mcp_servers": ["filesystem"]}` got the built-in filesystem
server with `write_file` although `allow_writes` was off (text injected into a file the model
read made it write one), and requests on different sub-folders each left a server running,
past `max_alive`. Replayed over real uvicorn with the real filesystem server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.security.conftest import CHAT, serve
from tests.support.real_servers import wait_until

from farmhand.config.models import FarmhandConfig
from farmhand.toolsets.mcp.known_servers import FILESYSTEM_BIN


def config(allowed: Path, **rules: Any) -> FarmhandConfig:
    return FarmhandConfig.model_validate(
        {
            "server": {"allowed_dirs": [str(allowed)], "request_servers": rules},
            "runtime": {"models": [{"name": "farm", "provider": "openai", "model": "x",
                                    "base_url": "http://127.0.0.1:9"}]},
        }
    )  # fmt: skip


def ask(url: str, folder: Path) -> httpx.Response:
    body = {**CHAT, "tools_path": str(folder), "mcp_servers": ["filesystem"]}
    return httpx.post(url + "/v1/chat/completions", json=body, timeout=120)


def servers_on(root: Path) -> int:
    """Live processes whose command line names a folder under `root`."""
    count = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(root).encode() in command and state not in ("Z", "X"):
            count += 1
    return count


def test_a_named_filesystem_server_offers_only_read_only_tools(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    server, model = serve(tmp_path / "home", config(tmp_path))
    with server:
        reply = ask(server.url, folder)
    assert reply.status_code == 200, reply.text
    offered = model.tools[0]
    assert any(name.endswith("read_text_file") for name in offered), offered
    assert not any(name.endswith(("write_file", "edit_file", "move_file")) for name in offered)


def test_the_operator_may_trust_a_server_when_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    definition = {"name": "filesystem", "command": FILESYSTEM_BIN, "requires_path": True}
    monkeypatch.setenv(
        "FARMHAND_MCP_SERVERS", json.dumps([{**definition, "trust_when_named": True}])
    )
    server, model = serve(tmp_path / "home", config(tmp_path))
    with server:
        reply = ask(server.url, folder)
    assert reply.status_code == 200, reply.text
    assert any(name.endswith("write_file") for name in model.tools[0])


def test_named_servers_count_against_max_alive(tmp_path: Path) -> None:
    root = tmp_path / "folders"
    server, _ = serve(tmp_path / "home", config(root, max_alive=2))
    with server:
        per_server = 0  # the server's own process and the reaper that watches it
        for i in range(6):
            folder = root / f"sub{i}"
            folder.mkdir(parents=True)
            reply = ask(server.url, folder)
            assert reply.status_code == 200, reply.text
            per_server = per_server or servers_on(root)
        assert per_server > 0
        done = wait_until(lambda: servers_on(root) <= 2 * per_server, timeout=30)
        assert done, (servers_on(root), per_server)
